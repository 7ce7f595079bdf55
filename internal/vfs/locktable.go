package vfs

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// lockTable is a set of locks on files held in this process, by absolute
// path: FS.Lock on platforms without flock(2) (see lock_other.go). It
// keeps out holders in this process only, and two paths to one file (a
// symbolic link, a different case on Windows) are two locks.
type lockTable struct {
	mu sync.Mutex
	// mu protects held.
	held map[string]bool
}

// lock creates the file name with mode 0600 if it is missing, and takes
// its lock in t, or fails with an error wrapping ErrLocked if t holds it.
func (t *lockTable) lock(name string) (io.Closer, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[abs] {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if t.held == nil {
		t.held = map[string]bool{}
	}
	t.held[abs] = true
	return &tableLock{t: t, abs: abs, name: name}, nil
}

// tableLock is a lock held in a lockTable.
type tableLock struct {
	t         *lockTable
	abs, name string
	released  bool // guarded by t.mu
}

// Close releases the lock; a second Close fails with fs.ErrClosed.
func (l *tableLock) Close() error {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	if l.released {
		return &fs.PathError{Op: "unlock", Path: l.name, Err: fs.ErrClosed}
	}
	l.released = true
	delete(l.t.held, l.abs)
	return nil
}
