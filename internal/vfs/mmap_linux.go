//go:build linux && (amd64 || arm64)

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// mapChunk is how much an OS Appender preallocates and maps at a time, at
// least: a log appends mapChunk bytes between two fallocate(2) calls.
const mapChunk = 4 << 20

// mmapAppender is the OS's Appender: one shared mapping of the file's bytes
// [base, base+len(mem)), preallocated, into which Append copies; a new one
// replaces it when it is full. Pages dirtied through an unmapped mapping
// stay dirty in the page cache, so unmapping loses nothing.
type mmapAppender struct {
	f      *os.File
	mem    []byte // the mapping; nil before the first Append
	base   int64  // the file offset of mem[0], a multiple of the page size
	off    int64  // where the next Append writes
	write  bool   // the file system cannot preallocate: append with write(2)
	closed bool
}

// MapAppend returns an Appender of f from off; it maps nothing yet.
func (f *osFile) MapAppend(off int64) (Appender, error) {
	if off < 0 {
		return nil, &fs.PathError{Op: "mapappend", Path: f.f.Name(), Err: syscall.EINVAL}
	}
	return &mmapAppender{f: f.f, off: off}, nil
}

func (a *mmapAppender) Offset() int64 { return a.off }

func (a *mmapAppender) Append(p []byte) error {
	if a.closed {
		return &fs.PathError{Op: "append", Path: a.f.Name(), Err: fs.ErrClosed}
	}
	if a.write {
		n, err := write(a.f, p)
		a.off += int64(n)
		return err
	}
	end := a.off + int64(len(p))
	if end > a.base+int64(len(a.mem)) {
		if err := a.grow(end); err != nil {
			return err
		}
		if a.write {
			return a.Append(p)
		}
	}
	if err := a.copyAt(p); err != nil {
		return err
	}
	a.off = end
	return nil
}

// copyAt copies p into the mapping at a.off. A fault on the mapping (SIGBUS,
// which preallocation should rule out: an I/O error reading a page in, say)
// becomes an EIO error instead of killing the process; part of p may then
// have been copied.
func (a *mmapAppender) copyAt(p []byte) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			err = &fs.PathError{Op: "append", Path: a.f.Name(), Err: syscall.EIO}
		}
	}()
	copyInOrder(a.mem[a.off-a.base:], p)
	return nil
}

// copyInOrder copies src to the start of dst, which must be as long, from
// the first byte to the last, eight bytes at a store. A process killed in
// the middle of it leaves a prefix of src in dst, as a write(2) cut short
// does: copy (memmove) stores in no promised order (the last bytes may go
// first), and a log whose last record has a zero header followed by part of
// its payload reads as corrupt, not as torn. The stores are unaligned
// 8-byte stores through unsafe pointers, which amd64 and arm64 allow, four
// to a loop: a bounds-checked loop cost 600 instructions a 400-byte record.
func copyInOrder(dst, src []byte) {
	n := len(src)
	if len(dst) < n {
		panic("vfs: copyInOrder: dst too short")
	}
	d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	i := 0
	for ; i+32 <= n; i += 32 {
		*(*uint64)(unsafe.Add(d, i)) = *(*uint64)(unsafe.Add(s, i))
		*(*uint64)(unsafe.Add(d, i+8)) = *(*uint64)(unsafe.Add(s, i+8))
		*(*uint64)(unsafe.Add(d, i+16)) = *(*uint64)(unsafe.Add(s, i+16))
		*(*uint64)(unsafe.Add(d, i+24)) = *(*uint64)(unsafe.Add(s, i+24))
	}
	for ; i+8 <= n; i += 8 {
		*(*uint64)(unsafe.Add(d, i)) = *(*uint64)(unsafe.Add(s, i))
	}
	for ; i < n; i++ {
		dst[i] = src[i]
	}
}

// grow preallocates the file up to at least end, mapChunk at a time if the
// disk has room and exactly to end if not, and maps it from the page a.off
// is on. If the file system cannot preallocate before anything was mapped,
// it sets a.write instead.
func (a *mmapAppender) grow(end int64) error {
	page := int64(os.Getpagesize())
	base := a.off &^ (page - 1)
	size := max(mapChunk, (end-base+page-1)&^(page-1))
	err := onFd(a.f, "fallocate", func(fd uintptr) error {
		err := syscall.Fallocate(int(fd), 0, base, size)
		if err == syscall.ENOSPC && end-base < size {
			size = end - base // what fits, if less than a chunk does
			err = syscall.Fallocate(int(fd), 0, base, size)
		}
		return err
	})
	if err != nil {
		if a.mem == nil && (errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS)) {
			a.write = true
			return nil
		}
		return err
	}
	if err := a.unmap(); err != nil {
		return err
	}
	return onFd(a.f, "mmap", func(fd uintptr) error {
		mem, err := syscall.Mmap(int(fd), base, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		if err != nil {
			return err
		}
		a.mem, a.base = mem, base
		return nil
	})
}

// unmap removes the mapping, if there is one.
func (a *mmapAppender) unmap() error {
	if a.mem == nil {
		return nil
	}
	err := syscall.Munmap(a.mem)
	a.mem = nil
	if err != nil {
		return &fs.PathError{Op: "munmap", Path: a.f.Name(), Err: err}
	}
	return nil
}

func (a *mmapAppender) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	err := a.unmap()
	if terr := a.f.Truncate(a.off); err == nil {
		err = terr
	}
	return err
}
