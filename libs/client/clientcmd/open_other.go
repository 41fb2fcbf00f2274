//go:build !unix

package clientcmd

// openFlags: elsewhere a path names no FIFO, device or terminal that an open would wait
// on; what was opened is still checked (a regular file) before it is read.
const openFlags = 0
