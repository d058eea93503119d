//go:build !race

package stdlib

// raceEnabled: see race_on_test.go.
const raceEnabled = false
