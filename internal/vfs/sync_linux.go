package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// datasync flushes f's data, and the metadata needed to read it back (its
// size), with fdatasync(2): what a log append needs, without the cost of
// flushing its modification time.
func datasync(f *os.File) error {
	// SyscallConn rather than Fd, which would switch f to blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		// Control fails only once f is closed; its error is then
		// internal/poll's, which does not match fs.ErrClosed.
		return &fs.PathError{Op: "fdatasync", Path: f.Name(), Err: fs.ErrClosed}
	}
	if serr != nil {
		return &fs.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
