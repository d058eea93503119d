//go:build !unix

package plugin

// processCPU is 0 where getrusage is not available; the cpu-ns/op metric then reads 0.
func processCPU() int64 { return 0 }
