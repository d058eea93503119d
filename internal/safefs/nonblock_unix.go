//go:build unix

package safefs

import "syscall"

// nonblock opens without waiting, so that a FIFO is opened (and then refused) at once.
const nonblock = syscall.O_NONBLOCK
