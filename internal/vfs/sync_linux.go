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
	return onFd(f, "fdatasync", func(fd uintptr) error { return syscall.Fdatasync(int(fd)) })
}

// onFd runs call on f's descriptor, again as long as it fails with EINTR,
// and returns its error as a *fs.PathError for op; fs.ErrClosed if f is
// closed. It goes through SyscallConn rather than Fd, which would switch f
// to blocking mode.
func onFd(f *os.File, op string, call func(fd uintptr) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if serr = call(fd); serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		// Control fails only once f is closed; its error is then
		// internal/poll's, which does not match fs.ErrClosed.
		return &fs.PathError{Op: op, Path: f.Name(), Err: fs.ErrClosed}
	}
	if serr != nil {
		return &fs.PathError{Op: op, Path: f.Name(), Err: serr}
	}
	return nil
}
