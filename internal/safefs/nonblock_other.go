//go:build !unix

package safefs

// nonblock is 0 where named pipes are not files of a folder.
const nonblock = 0
