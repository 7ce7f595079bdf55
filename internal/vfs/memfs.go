package vfs

// MemFS is an in-memory FS that knows what a power loss would keep.
//
// The model:
//
//   - A file is an inode with two byte strings: its current bytes, which
//     every read sees, and its synced bytes, which a crash keeps. Write
//     appends to the current bytes, Truncate and Create (of an existing
//     file) cut them; File.Sync copies the current bytes to the synced
//     bytes. Nothing else changes the synced bytes.
//   - A directory is an inode with two sets of entries (name -> inode): its
//     current set, which every lookup sees, and its synced set, which a
//     crash keeps. Create (of a new file), Lock (of a missing file), Rename
//     and Remove change the current sets only; SyncDir(dir) copies dir's
//     current set to its synced set. A file that is synced but whose entry
//     is not is lost by a crash; a rename not followed by SyncDir of both
//     directories is undone by one.
//   - MkdirAll is the exception, to keep the model small: the directories
//     it creates are in their parent's current and synced sets at once, as
//     if it synced each parent.
//   - Crash (crash.go) builds the file system a machine would find after
//     power loss: the synced entries, each pointing to its inode's synced
//     bytes, optionally plus a torn part of the bytes appended since the
//     last Sync. Kill builds what it would find after the process died
//     (kill -9): everything, current and synced, as it is. Either way the
//     old MemFS is dead: every later call on it, its files and its locks
//     returns an error wrapping ErrCrashed.
//   - Faults (fault.go): a hook, called before every operation, can fail
//     it; a capacity makes writes fail with ENOSPC.
//   - Appenders (memmap.go) write a file in place, over zero bytes they
//     preallocated, which the file holds until the Appender is closed.
//
// Names are cleaned with path.Clean and taken from the root: "a/b", "/a/b"
// and "./a//b" are the same file, and ".." stops at the root. The root
// always exists.
//
// Errors are *fs.PathError (*os.LinkError for Rename), as from the os
// package, so errors.Is matches fs.ErrNotExist for a missing file or
// directory (Create in a missing directory included), fs.ErrClosed for a
// closed file, syscall.ENOSPC for a full disk, syscall.ENOTDIR when a path
// goes through a file, syscall.EISDIR when a file operation names a
// directory, syscall.EEXIST when Rename would replace a directory,
// syscall.ENOTEMPTY when Remove names a directory that is not empty,
// syscall.EBADF for a write through a file opened read-only, ErrLocked and
// ErrCrashed. Unlike the os package, Open of a directory fails (EISDIR).
//
// Concurrency: a MemFS and the Files and locks opened through it are safe
// for concurrent use; one mutex serializes every operation, so each is
// atomic, and the hook sees them one at a time in the order they happen.

import (
	"bytes"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// MemFS is an in-memory FS that remembers what was synced, can crash, and
// can fail any operation on demand; the model is written at the top of
// memfs.go. The zero value is not usable; call NewMemFS.
//
// A MemFS is safe for concurrent use, and so are its Files and locks.
type MemFS struct {
	mu sync.Mutex
	// mu protects the fields below, every inode reachable from root, and
	// the mutable fields of every memFile and memLock opened on this MemFS.
	root     *inode
	dead     bool                   // set by Crash and Kill
	hook     func(Op, string) error // nil: no faults
	capacity int64                  // 0: unlimited
	prealloc int64                  // what an Appender preallocates ahead; see SetPreallocation
	extend   bool                   // Extend of an Appender extends; see SetExtend
	ops      int64                  // operations that reached the hook
	locks    map[string]bool        // cleaned names of the held locks
}

// inode is a file or a directory. A file's data is its current bytes and
// synced its synced bytes; a directory's entries are its current entries and
// syncedEntries its synced ones.
//
// The bytes of data below len(data)-zeros are never modified in place
// (Truncate to a smaller size copies), so Sync can share data's array with
// synced instead of copying: later appends write only past len(synced).
// The last zeros bytes of data are zero bytes that an Appender preallocated
// (memmap.go) or Truncate added, and that nothing has written since: an
// Appender writes them in place. Sync keeps them out of synced and counts
// them in syncedZeros: the file a crash keeps is synced followed by
// syncedZeros zero bytes.
type inode struct {
	isDir                  bool
	data, synced           []byte
	zeros, syncedZeros     int64
	mapped                 bool // an Appender wrote it: Crash loses pages of its unsynced tail, not a suffix
	entries, syncedEntries map[string]*inode
}

func newDir() *inode {
	return &inode{isDir: true, entries: map[string]*inode{}, syncedEntries: map[string]*inode{}}
}

// NewMemFS returns an empty MemFS: a root directory, no hook, no capacity
// limit.
func NewMemFS() *MemFS {
	return &MemFS{root: newDir(), locks: map[string]bool{}}
}

// clean returns name cleaned and rooted at "/", the form MemFS keys its
// locks by.
func clean(name string) string { return path.Clean("/" + name) }

// split returns the components of name; none for the root.
func split(name string) []string {
	p := clean(name)
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// begin starts the operation op on name: it fails with ErrCrashed on a dead
// MemFS; otherwise it counts the operation and returns the hook's error,
// wrapped. m.mu must be held.
func (m *MemFS) begin(op Op, name string) error {
	if m.dead {
		return pathErr(op.String(), name, ErrCrashed)
	}
	return m.faultLocked(op, name)
}

// walkLocked returns the inode at the path made of parts, following current
// entries. m.mu must be held.
func (m *MemFS) walkLocked(op, name string, parts []string) (*inode, error) {
	n := m.root
	for _, p := range parts {
		if !n.isDir {
			return nil, pathErr(op, name, syscall.ENOTDIR)
		}
		child, ok := n.entries[p]
		if !ok {
			return nil, pathErr(op, name, fs.ErrNotExist)
		}
		n = child
	}
	return n, nil
}

// parentLocked returns the directory that holds name and name's last
// component. m.mu must be held.
func (m *MemFS) parentLocked(op, name string) (*inode, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", pathErr(op, name, fs.ErrInvalid) // the root has no parent
	}
	dir, err := m.walkLocked(op, name, parts[:len(parts)-1])
	if err != nil {
		return nil, "", err
	}
	if !dir.isDir {
		return nil, "", pathErr(op, name, syscall.ENOTDIR)
	}
	return dir, parts[len(parts)-1], nil
}

// fileLocked returns the file name, which must exist. m.mu must be held.
func (m *MemFS) fileLocked(op, name string) (*inode, error) {
	n, err := m.walkLocked(op, name, split(name))
	if err != nil {
		return nil, err
	}
	if n.isDir {
		return nil, pathErr(op, name, syscall.EISDIR)
	}
	return n, nil
}

// dirLocked returns the directory dir, which must exist. m.mu must be held.
func (m *MemFS) dirLocked(op, dir string) (*inode, error) {
	n, err := m.walkLocked(op, dir, split(dir))
	if err != nil {
		return nil, err
	}
	if !n.isDir {
		return nil, pathErr(op, dir, syscall.ENOTDIR)
	}
	return n, nil
}

// Create creates the file name, or cuts an existing one to zero bytes (its
// synced bytes stay until File.Sync), and opens it for reading and
// appending. The directory must exist (fs.ErrNotExist otherwise); the new
// entry is in its current set only, until SyncDir.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	const op = "create"
	if err := m.begin(OpCreate, name); err != nil {
		return nil, err
	}
	dir, base, err := m.parentLocked(op, name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.entries[base]
	switch {
	case !ok:
		n = &inode{}
		dir.entries[base] = n
	case n.isDir:
		return nil, pathErr(op, name, syscall.EISDIR)
	default:
		n.data, n.zeros = nil, 0
	}
	return &memFile{fs: m, n: n, name: name, writable: true}, nil
}

// Open opens the existing file name for reading only; Write and Truncate
// on it fail. A missing file gives fs.ErrNotExist, a directory
// syscall.EISDIR.
func (m *MemFS) Open(name string) (File, error) {
	return m.open(OpOpen, name, false)
}

// OpenAppend opens the existing file name for reading and appending. A
// missing file gives fs.ErrNotExist, a directory syscall.EISDIR.
func (m *MemFS) OpenAppend(name string) (File, error) {
	return m.open(OpOpenAppend, name, true)
}

func (m *MemFS) open(op Op, name string, writable bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.begin(op, name); err != nil {
		return nil, err
	}
	n, err := m.fileLocked(op.String(), name)
	if err != nil {
		return nil, err
	}
	return &memFile{fs: m, n: n, name: name, writable: writable}, nil
}

// Rename moves the entry oldname to newname, replacing a file newname, in
// the current sets of both directories; a crash undoes it unless both were
// synced since. Files open on either name stay open on their inode.
// Renaming a name to itself does nothing. A missing oldname or directory
// of newname gives fs.ErrNotExist; an existing directory newname gives
// syscall.EEXIST, as os.Rename does; a directory into itself
// syscall.EINVAL. The hook sees oldname.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	linkErr := func(err error) error {
		if pe, ok := err.(*fs.PathError); ok {
			err = pe.Err
		}
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	if m.dead {
		return linkErr(ErrCrashed)
	}
	if err := m.faultLocked(OpRename, oldname); err != nil {
		return linkErr(err)
	}
	odir, obase, err := m.parentLocked("rename", oldname)
	if err != nil {
		return linkErr(err)
	}
	n, ok := odir.entries[obase]
	if !ok {
		return linkErr(fs.ErrNotExist)
	}
	ndir, nbase, err := m.parentLocked("rename", newname)
	if err != nil {
		return linkErr(err)
	}
	oclean, nclean := clean(oldname), clean(newname)
	if oclean == nclean {
		return nil
	}
	if old, ok := ndir.entries[nbase]; ok {
		switch {
		case old.isDir:
			return linkErr(syscall.EEXIST)
		case n.isDir:
			return linkErr(syscall.ENOTDIR)
		}
	}
	if n.isDir && strings.HasPrefix(nclean, oclean+"/") {
		return linkErr(syscall.EINVAL)
	}
	delete(odir.entries, obase)
	ndir.entries[nbase] = n
	return nil
}

// Remove removes the entry name from its directory's current set; a crash
// brings it back unless the directory was synced since. Files open on it
// stay usable. A missing name gives fs.ErrNotExist, a directory that is not
// empty syscall.ENOTEMPTY.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	const op = "remove"
	if err := m.begin(OpRemove, name); err != nil {
		return err
	}
	dir, base, err := m.parentLocked(op, name)
	if err != nil {
		return err
	}
	n, ok := dir.entries[base]
	if !ok {
		return pathErr(op, name, fs.ErrNotExist)
	}
	if n.isDir && len(n.entries) > 0 {
		return pathErr(op, name, syscall.ENOTEMPTY)
	}
	delete(dir.entries, base)
	return nil
}

// MkdirAll creates dir and its missing parents, durably at once (see the
// top of memfs.go). Existing directories are left alone; a file on the
// path gives syscall.ENOTDIR.
func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.begin(OpMkdirAll, dir); err != nil {
		return err
	}
	n := m.root
	for _, p := range split(dir) {
		child, ok := n.entries[p]
		if !ok {
			child = newDir()
			n.entries[p] = child
			n.syncedEntries[p] = child
		} else if !child.isDir {
			return pathErr("mkdirall", dir, syscall.ENOTDIR)
		}
		n = child
	}
	return nil
}

// List returns the sorted names in dir's current set. A missing dir gives
// fs.ErrNotExist, a file syscall.ENOTDIR; an empty dir gives an empty,
// non-nil slice.
func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.begin(OpList, dir); err != nil {
		return nil, err
	}
	n, err := m.dirLocked("list", dir)
	if err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(n.entries))
	if names == nil {
		names = []string{}
	}
	return names, nil
}

// SyncDir makes dir's current entries its synced entries. A missing dir
// gives fs.ErrNotExist, a file syscall.ENOTDIR.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.begin(OpSyncDir, dir); err != nil {
		return err
	}
	n, err := m.dirLocked("syncdir", dir)
	if err != nil {
		return err
	}
	n.syncedEntries = maps.Clone(n.entries)
	return nil
}

// Lock takes the lock on name, creating an empty file there if it is
// missing (a current entry, like Create). Locks are kept by cleaned name in
// this MemFS, so a second Lock of a held name fails with ErrLocked whoever
// asks, even once the file was removed or replaced (as OS's does within a
// process); Crash and Kill release all of them. Closing the returned Closer
// releases the lock; closing it again gives fs.ErrClosed, and after Crash
// or Kill, ErrCrashed.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	const op = "lock"
	if err := m.begin(OpLock, name); err != nil {
		return nil, err
	}
	key := clean(name)
	if m.locks[key] {
		return nil, pathErr(op, name, ErrLocked)
	}
	dir, base, err := m.parentLocked(op, name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.entries[base]
	switch {
	case !ok:
		dir.entries[base] = &inode{}
	case n.isDir:
		return nil, pathErr(op, name, syscall.EISDIR)
	}
	m.locks[key] = true
	return &memLock{fs: m, key: key, name: name}, nil
}

// memLock is a lock held in a MemFS.
type memLock struct {
	fs        *MemFS
	key, name string
	released  bool // guarded by fs.mu
}

// Close releases the lock. It is not an operation: the hook does not see
// it and Ops does not count it.
func (l *memLock) Close() error {
	m := l.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.dead:
		return pathErr("unlock", l.name, ErrCrashed)
	case l.released:
		return pathErr("unlock", l.name, fs.ErrClosed)
	}
	l.released = true
	delete(m.locks, l.key)
	return nil
}

// ReadFile returns a copy of the current bytes of the file name, for tests
// to look at. It is not an operation: the hook does not see it and Ops
// does not count it. A missing file gives fs.ErrNotExist, a dead MemFS
// ErrCrashed.
func (m *MemFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return nil, pathErr("readfile", name, ErrCrashed)
	}
	n, err := m.fileLocked("readfile", name)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(n.data), nil
}
