//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package vfs

import (
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// lockFile takes the entry of name in processLocks, opens name (creating
// it with mode 0600 if it is missing) and takes flock(LOCK_EX|LOCK_NB) on
// it. A flock belongs to the open file description, and each call opens its
// own, so two Locks of one file conflict within one process as across
// processes; the kernel releases it when the process ends, however it ends.
// The entry in processLocks keeps the lock in this process when the flock
// alone would not: once the file is removed or replaced, and whatever path
// leads to its directory (see locktable.go).
func lockFile(name string) (io.Closer, error) {
	key, err := processLocks.hold(name)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		processLocks.release(key)
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		processLocks.release(key)
		if err == syscall.EWOULDBLOCK || err == syscall.EAGAIN {
			err = ErrLocked
		}
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	return &fileLock{f: f, name: name, key: key}, nil
}

// flock calls flock(2) on f, again if a signal interrupts it.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// fileLock is a flock held on an open file, with its entry in
// processLocks.
type fileLock struct {
	mu sync.Mutex
	// mu protects f, which is nil once the lock is released.
	f    *os.File
	name string
	key  lockKey
}

// Close releases the lock, closes the file and gives back the entry in
// processLocks (even if closing fails); a second Close fails with
// fs.ErrClosed.
func (l *fileLock) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return &fs.PathError{Op: "unlock", Path: l.name, Err: fs.ErrClosed}
	}
	f := l.f
	l.f = nil
	defer processLocks.release(l.key)
	// Closing the last descriptor would release it anyway; unlocking first
	// releases it even if a child process inherited one.
	uerr := flock(f, syscall.LOCK_UN)
	if err := f.Close(); err != nil {
		return err
	}
	if uerr != nil {
		return &fs.PathError{Op: "unlock", Path: l.name, Err: uerr}
	}
	return nil
}
