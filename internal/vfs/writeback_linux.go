//go:build linux && (amd64 || arm64)

package vfs

import (
	"io/fs"
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
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			_, _, e := syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, fd, uintptr(off), uintptr(n),
				syncFileRangeWaitBefore|syncFileRangeWrite|syncFileRangeWaitAfter, 0, 0)
			if e != syscall.EINTR {
				if e != 0 {
					serr = e
				}
				return
			}
		}
	}); err != nil {
		return &fs.PathError{Op: "sync_file_range", Path: f.Name(), Err: fs.ErrClosed}
	}
	if serr != nil {
		return &fs.PathError{Op: "sync_file_range", Path: f.Name(), Err: serr}
	}
	return nil
}
