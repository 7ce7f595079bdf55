//go:build linux && (amd64 || arm64)

package vfs

import (
	"os"
	"syscall"
)

// syncFileRange's flags: wait for writes of the range already under way,
// start the writing of its dirty pages, and wait for those.
const (
	syncFileRangeWaitBefore = 1
	syncFileRangeWrite      = 2
	syncFileRangeWaitAfter  = 4
)

// writeBack writes f's bytes [off, off+n) to the device and waits for them
// with sync_file_range(2), whose arguments are (fd, offset, nbytes, flags)
// on these platforms.
func writeBack(f *os.File, off, n int64) error {
	return onFd(f, "sync_file_range", func(fd uintptr) error {
		_, _, e := syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, fd, uintptr(off), uintptr(n),
			syncFileRangeWaitBefore|syncFileRangeWrite|syncFileRangeWaitAfter, 0, 0)
		if e != 0 {
			return e
		}
		return nil
	})
}
