//go:build !race

package bench_test

const raceOn = false
