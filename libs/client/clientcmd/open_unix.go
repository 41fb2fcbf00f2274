//go:build unix

package clientcmd

import "syscall"

// openFlags open a vault's file without waiting or side effects whatever it turns out to
// be: O_NONBLOCK returns at once from a FIFO that has no writer (which the check of what
// was opened then refuses), O_NOCTTY never makes a terminal the controlling one, and
// O_NOFOLLOW refuses a symlink put in place of a path whose symlinks were resolved.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_NOFOLLOW
