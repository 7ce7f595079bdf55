package vfs

import (
	"bytes"
	"io"
	"io/fs"
	"syscall"
)

// memFile is a File open on an inode of a MemFS. It stays on its inode
// whatever happens to the name it was opened by (Rename, Remove, Create of
// the same name cuts the same inode), as an open file descriptor does.
//
// Every method fails with ErrCrashed once the MemFS is dead, and with
// fs.ErrClosed after Close; neither reaches the hook or counts in Ops.
type memFile struct {
	fs       *MemFS
	n        *inode
	name     string // as opened, for errors and the hook
	writable bool   // false for Open
	// fs.mu protects pos and closed.
	pos    int64 // where Read reads next; an append moves it to the end, as O_APPEND does
	closed bool
}

// beginLocked starts op: ErrCrashed if the MemFS is dead, fs.ErrClosed if
// f is closed, else the hook's verdict. f.fs.mu must be held.
func (f *memFile) beginLocked(op Op) error {
	if f.fs.dead {
		return pathErr(op.String(), f.name, ErrCrashed)
	}
	if f.closed {
		return pathErr(op.String(), f.name, fs.ErrClosed)
	}
	return f.fs.faultLocked(op, f.name)
}

// Read reads the current bytes from the file's offset, which starts at 0
// and moves to the end after each Write. At the end it returns 0, io.EOF
// (0, nil for an empty p).
func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.beginLocked(OpRead); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if f.pos >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

// ReadAt reads the current bytes at off, as os.File.ReadAt does: fewer
// than len(p) bytes come with io.EOF; a negative off gives
// syscall.EINVAL.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.beginLocked(OpRead); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("readat", f.name, syscall.EINVAL)
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	if off < int64(len(f.n.data)) {
		n = copy(p, f.n.data[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Write appends p to the current bytes. If the hook fails it, the first
// len(p)/2 bytes are appended anyway and Write returns their count with the
// hook's error: a short write. If the capacity would be exceeded, what fits
// is appended and the error wraps syscall.ENOSPC. On a file opened with
// Open it fails with syscall.EBADF and appends nothing.
func (f *memFile) Write(p []byte) (int, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return 0, pathErr("write", f.name, ErrCrashed)
	}
	if f.closed {
		return 0, pathErr("write", f.name, fs.ErrClosed)
	}
	hookErr := m.faultLocked(OpWrite, f.name)
	if !f.writable {
		if hookErr != nil {
			return 0, hookErr
		}
		return 0, pathErr("write", f.name, syscall.EBADF)
	}
	if hookErr != nil {
		n, _ := f.appendLocked(p[:len(p)/2])
		return n, hookErr
	}
	return f.appendLocked(p)
}

// appendLocked appends as much of p as the capacity allows. f.fs.mu must
// be held.
func (f *memFile) appendLocked(p []byte) (int, error) {
	var err error
	if room := f.fs.roomLocked(); room < int64(len(p)) {
		p = p[:max(room, 0)]
		err = pathErr("write", f.name, syscall.ENOSPC)
	}
	f.n.data = append(f.n.data, p...)
	f.n.zeros = 0 // what an Appender preallocated is now inside the file
	f.pos = int64(len(f.n.data))
	return len(p), err
}

// Sync makes the current bytes the synced bytes, unless the hook fails it,
// in which case the synced bytes stay as they were. It works on a file
// opened with Open too, as fsync does.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.beginLocked(OpSync); err != nil {
		return err
	}
	// Sharing the array is safe: see the comment on inode.
	n := f.n
	k := int64(len(n.data)) - n.zeros
	n.synced, n.syncedZeros = n.data[:k:k], n.zeros
	return nil
}

// WriteBack changes nothing: MemFS has no device, and what it keeps across
// a crash is decided by Sync alone. The hook may fail it.
func (f *memFile) WriteBack(off, n int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return f.beginLocked(OpWriteBack)
}

// Truncate cuts the current bytes to size, or extends them with zero bytes
// (which count against the capacity: syscall.ENOSPC and no change if they
// do not fit). The synced bytes stay until Sync. A negative size, or a
// file opened with Open, gives syscall.EINVAL. The read offset stays.
func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.beginLocked(OpTruncate); err != nil {
		return err
	}
	if size < 0 || !f.writable {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	if size > int64(len(f.n.data)) && f.fs.roomLocked() < size-int64(len(f.n.data)) {
		return pathErr("truncate", f.name, syscall.ENOSPC)
	}
	f.n.cutLocked(size)
	return nil
}

// cutLocked cuts the current bytes to size, or extends them with zero bytes
// (the caller checked the capacity). The fs.mu of n's MemFS must be held.
func (n *inode) cutLocked(size int64) {
	cur := int64(len(n.data))
	switch {
	case size < cur:
		// Copy, never cut in place: the synced bytes may share the array.
		n.data = bytes.Clone(n.data[:size])
		n.zeros = max(n.zeros-(cur-size), 0)
	case size > cur:
		n.data = append(n.data, make([]byte, size-cur)...)
		n.zeros += size - cur
	}
}

// Size returns the length of the current bytes.
func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.beginLocked(OpSize); err != nil {
		return 0, err
	}
	return int64(len(f.n.data)), nil
}

// Close closes the file; later calls fail with fs.ErrClosed, a second
// Close included. If the hook fails it, the file stays open.
func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.beginLocked(OpClose); err != nil {
		return err
	}
	f.closed = true
	return nil
}
