package vfs

import (
	"bytes"
	"io/fs"
	"syscall"
)

// MemFS's Appender. The file's preallocated tail is part of its current
// bytes (it counts against the capacity; Size and reads see it) and is
// recorded as inode.zeros, so that Sync can share the array below it, and
// Crash can treat the appends since the last Sync as a tail to tear even
// though they overwrote zero bytes rather than extend the file.

// memAppender appends to a memFile's inode in place.
type memAppender struct {
	f      *memFile
	off    int64 // fs.mu protects off and closed
	closed bool
}

// MapAppend returns an Appender of f from off. It is not an operation: the
// hook does not see it (Append's growth is OpAllocate). A file opened with
// Open, or a negative off, gives syscall.EINVAL.
func (f *memFile) MapAppend(off int64) (Appender, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if off < 0 || !f.writable {
		return nil, pathErr("mapappend", f.name, syscall.EINVAL)
	}
	return &memAppender{f: f, off: off}, nil
}

func (a *memAppender) Offset() int64 {
	a.f.fs.mu.Lock()
	defer a.f.fs.mu.Unlock()
	return a.off
}

// Append copies p at a.off, first extending the file with zero bytes if it
// is too short: by the MemFS's preallocation or more if the capacity
// allows, else by exactly what p needs, else not at all (syscall.ENOSPC). The extension is
// OpAllocate, which the hook may fail (nothing is then written).
func (a *memAppender) Append(p []byte) error {
	m := a.f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.dead:
		return pathErr("append", a.f.name, ErrCrashed)
	case a.closed || a.f.closed:
		return pathErr("append", a.f.name, fs.ErrClosed)
	}
	n := a.f.n
	end := a.off + int64(len(p))
	if cur := int64(len(n.data)); end > cur {
		if err := m.faultLocked(OpAllocate, a.f.name); err != nil {
			return err
		}
		size := max(end, cur+m.prealloc)
		if room := m.roomLocked(); room < size-cur {
			if size = end; room < size-cur {
				return pathErr("preallocate", a.f.name, syscall.ENOSPC)
			}
		}
		// Appending past len(data) leaves the synced bytes, which end
		// at or before it, alone.
		n.data = append(n.data, make([]byte, size-cur)...)
		n.zeros += size - cur
	}
	if a.off < int64(len(n.data))-n.zeros {
		// Bytes below the zero tail may be shared with the synced
		// bytes: the file was written or cut behind the Appender.
		n.data = bytes.Clone(n.data)
	}
	n.zeros = min(n.zeros, int64(len(n.data))-end)
	copy(n.data[a.off:], p)
	n.mapped = true
	a.off = end
	return nil
}

// Close cuts the file to a.off (OpTruncate, which the hook may fail: the
// Appender is closed all the same).
func (a *memAppender) Close() error {
	m := a.f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	if err := a.f.beginLocked(OpTruncate); err != nil {
		return err
	}
	a.f.n.cutLocked(a.off)
	return nil
}

// Extend extends the file with zero bytes up to to, as far as the capacity
// allows (else syscall.ENOSPC, keeping what fitted), if m was told to
// (SetExtend); else it does nothing, so that a log's zeroer leaves the
// file system's steps (Ops) as they were. It is OpAllocate, which the hook
// may fail. It does nothing after Close, and fails with ErrCrashed once m is
// dead.
func (a *memAppender) Extend(to int64) error {
	m := a.f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.dead:
		return pathErr("extend", a.f.name, ErrCrashed)
	case !m.extend || a.closed || a.f.closed:
		return nil
	}
	n := a.f.n
	cur := int64(len(n.data))
	if to <= cur {
		return nil
	}
	if err := m.faultLocked(OpAllocate, a.f.name); err != nil {
		return err
	}
	size := to
	if room := m.roomLocked(); room < to-cur {
		size = cur + max(room, 0)
	}
	n.data = append(n.data, make([]byte, size-cur)...)
	n.zeros += size - cur
	if size < to {
		return pathErr("preallocate", a.f.name, syscall.ENOSPC)
	}
	return nil
}

// SetExtend says whether Extend of an Appender of a file in m extends the
// file (as the OS's does from a log's zeroer goroutine, whose timing is the
// scheduler's) or does nothing, the default. Crash and Kill pass it to the
// new MemFS.
func (m *MemFS) SetExtend(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.extend = on
}

// SetPreallocation sets how far ahead of its appends an Appender of a file
// in m extends the file with zero bytes, at least, when the capacity allows
// (as the OS's Appender does, by 4 MiB): bytes <= 0, the default, extends
// the file by exactly what each Append needs, so that there is never a
// zero tail and every Append that extends the file is one OpAllocate, as
// every Write is one OpWrite. Crash and Kill pass it to the new MemFS.
func (m *MemFS) SetPreallocation(bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prealloc = max(bytes, 0)
}
