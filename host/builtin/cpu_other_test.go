//go:build !unix

package builtin

// processCPU is 0 where getrusage is not available; the cpu metrics then read 0.
func processCPU() int64 { return 0 }
