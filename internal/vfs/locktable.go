package vfs

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// processLocks holds every lock that OS.Lock holds in this process, on
// every platform: where there is flock(2) (lock_flock.go) beside the flock,
// elsewhere (lock_other.go) instead of one.
//
// A flock belongs to the file's inode, so it alone would let a second
// holder in, in this process or another, once the locked file is removed
// or replaced (a new file is a new inode). The table keys a lock by its
// name within its directory, the directory taken by identity (lockKey), so
// that within this process the lock outlives its file and a path through a
// symbolic link finds it. Across processes nothing cheap can do the same:
// removing a lock file defeats the flock's guard against other processes.
var processLocks lockTable

// lockKey names a lock: its directory's device and inode numbers where the
// platform gives them (lockkey_unix.go), else its directory's absolute
// path with symbolic links evaluated (dir), and its base name.
type lockKey struct {
	dev, ino uint64
	dir      string
	base     string
}

// pathKey returns the key of the lock file name by its directory's
// absolute path, symbolic links evaluated: the key where the platform has
// no inode numbers. Two hard links to one directory, or a path that
// differs only in case on a case-insensitive file system, give two keys.
func pathKey(name string) (lockKey, error) {
	dir, err := filepath.Abs(filepath.Dir(name))
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		return lockKey{}, lockErr(name, err)
	}
	return lockKey{dir: dir, base: filepath.Base(name)}, nil
}

// lockErr returns err, from looking at the directory of the lock file
// name, as an *fs.PathError about name.
func lockErr(name string, err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		err = pe.Err
	}
	return &fs.PathError{Op: "lock", Path: name, Err: err}
}

// lockTable is a set of locks held in this process, by lockKey. Its
// directory must exist for a name to be locked.
type lockTable struct {
	mu sync.Mutex
	// mu protects held.
	held map[lockKey]bool
}

// hold takes the entry of the lock file name in t, or fails with an error
// wrapping ErrLocked if t holds it, or one wrapping fs.ErrNotExist if its
// directory is missing. It does not touch the file. release gives the
// entry back.
func (t *lockTable) hold(name string) (lockKey, error) {
	key, err := lockKeyOf(name)
	if err != nil {
		return lockKey{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[key] {
		return lockKey{}, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	if t.held == nil {
		t.held = map[lockKey]bool{}
	}
	t.held[key] = true
	return key, nil
}

// release gives back an entry that hold took.
func (t *lockTable) release(key lockKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.held, key)
}

// lock creates the file name with mode 0600 if it is missing, and takes
// its lock in t, or fails with an error wrapping ErrLocked if t holds it:
// FS.Lock on platforms without flock(2), which guards only against
// holders in this process.
func (t *lockTable) lock(name string) (io.Closer, error) {
	key, err := t.hold(name)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.release(key)
		return nil, err
	}
	return &tableLock{t: t, key: key, name: name}, nil
}

// tableLock is a lock held in a lockTable.
type tableLock struct {
	t        *lockTable
	key      lockKey
	name     string
	released bool // guarded by t.mu
}

// Close releases the lock; a second Close fails with fs.ErrClosed.
func (l *tableLock) Close() error {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	if l.released {
		return &fs.PathError{Op: "unlock", Path: l.name, Err: fs.ErrClosed}
	}
	l.released = true
	delete(l.t.held, l.key)
	return nil
}
