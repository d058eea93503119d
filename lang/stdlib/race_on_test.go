//go:build race

package stdlib

// raceEnabled: the race detector makes sync.Pool drop what it holds and instruments
// allocation, so FuzzCost's byte counts mean nothing under it.
const raceEnabled = true
