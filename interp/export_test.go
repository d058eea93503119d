package interp

import "time"

// SetRunTimeLimit shortens the run time limit for a test and returns a
// function that restores it.
func SetRunTimeLimit(d time.Duration) func() {
	old := runTimeLimit
	runTimeLimit = d
	return func() { runTimeLimit = old }
}
