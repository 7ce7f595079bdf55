//go:build linux && (amd64 || arm64)

package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// mapChunk is how much an OS Appender extends the file by and maps at a
// time, at least: a log appends mapChunk bytes between two mmap(2) calls.
const mapChunk = 4 << 20

// zeroAhead is how far ahead of the appends an OS Appender writes zero bytes
// with pwrite(2), at least: a log makes one pwrite(2) per zeroAhead bytes
// appended.
const zeroAhead = 64 << 10

// mmapAppender is the OS's Appender: one shared mapping of the file's bytes
// [base, base+len(mem)), into which Append copies; a new one replaces it
// when it is full. Pages dirtied through an unmapped mapping stay dirty in
// the page cache, so unmapping loses nothing.
//
// The mapping may run past the end of the file; the file grows by zero
// bytes that Append writes (write(2), appending) ahead of its copies, up to
// zeroed, the file's size, and the copies never go past it. That is the
// preallocation: the file system reserves the blocks (a full disk is
// ENOSPC from the write, refusing the append whole), and the pages are
// then in the page cache, dirty, so that the first store to each through
// the mapping is a minor fault; a store never makes a page fault allocate
// a block (whose failure on a full disk would be a SIGBUS), nor touches a
// page past the end of the file (a SIGBUS too). Extend writes the zero
// bytes from another goroutine, ahead of the appends, so that Append seldom
// has to, and makes the pages writable in the mapping
// (MADV_POPULATE_WRITE), so that the first store to each is not a fault
// either. fallocate(2) reserved the
// blocks as well, but a store to a page of an unwritten (fallocated) block
// costs ext4's page_mkwrite, about 2 µs a 4 KiB page, a quarter of a
// durable insert (docs/performance.md).
type mmapAppender struct {
	f    *os.File
	mem  []byte // the mapping; nil before the first Append
	base int64  // the file offset of mem[0], a multiple of the page size
	off  int64  // where the next Append writes

	// zmu serialises the file's growth (write(2) of zero bytes, the
	// first Stat, Truncate) and the mapping's (grow) between the
	// appending goroutine and Extend's, and protects mem, base, write and
	// closed for Extend: the appending goroutine changes them holding it,
	// and reads them without it.
	zmu       sync.Mutex
	zeroed    atomic.Int64 // the file's size: where the zero bytes written ahead of off end; -1 before the first grow
	populated int64        // where the pages Extend made writable in the mapping end (populateLocked)
	write     bool         // the file cannot be mapped: append with write(2)
	closed    bool
}

// MapAppend returns an Appender of f from off; it maps nothing yet.
func (f *osFile) MapAppend(off int64) (Appender, error) {
	if off < 0 {
		return nil, &fs.PathError{Op: "mapappend", Path: f.f.Name(), Err: syscall.EINVAL}
	}
	a := &mmapAppender{f: f.f, off: off}
	a.zeroed.Store(-1)
	return a, nil
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
	if end > a.zeroed.Load() {
		a.zmu.Lock()
		err := a.zeroLocked(end, min(end+zeroAhead, a.base+int64(len(a.mem))))
		a.zmu.Unlock()
		if err != nil {
			return err
		}
	}
	if err := a.copyAt(p); err != nil {
		return err
	}
	a.off = end
	return nil
}

// Extend writes zero bytes ahead of the appends; see Extender.
func (a *mmapAppender) Extend(to int64) error {
	for {
		a.zmu.Lock()
		zeroed := a.zeroed.Load()
		if a.closed || a.write || zeroed < 0 || zeroed >= to {
			a.zmu.Unlock()
			return nil
		}
		// A chunk at a time, so that an Append that needs the lock
		// meanwhile waits for one write(2) at most.
		next := min(to, zeroed+int64(len(zeros)))
		err := a.zeroLocked(next, next)
		a.populateLocked()
		a.zmu.Unlock()
		if err != nil {
			return err
		}
	}
}

// zeroLocked appends zero bytes to the file, whose size is a.zeroed, up to
// to (if it is shorter). If they cannot reach end (a full disk:
// syscall.ENOSPC), it returns the error, and an append to end must not be
// copied; the zero bytes written stay, a zero tail. a.zmu must be held.
func (a *mmapAppender) zeroLocked(end, to int64) error {
	zeroed := a.zeroed.Load()
	var err error
	for zeroed < to && err == nil {
		var n int
		n, err = write(a.f, zeros[:min(to-zeroed, int64(len(zeros)))])
		zeroed += int64(n)
		a.zeroed.Store(zeroed)
	}
	if zeroed < end {
		if err == nil {
			err = &fs.PathError{Op: "write", Path: a.f.Name(), Err: io.ErrShortWrite}
		}
		return err
	}
	return nil
}

// populateLocked makes the mapping's pages that are zeroed (whole) and
// not yet populated writable in the page tables (MADV_POPULATE_WRITE), so
// that the appends' first store to each is not a page fault. Where the
// kernel cannot (before Linux 5.14: EINVAL), it gives up for good; the
// stores then fault, as they would anyway. a.zmu must be held.
func (a *mmapAppender) populateLocked() {
	if a.mem == nil || noPopulate.Load() {
		return
	}
	page := int64(os.Getpagesize())
	lo := max(a.populated, a.base)
	hi := min(a.zeroed.Load(), a.base+int64(len(a.mem))) &^ (page - 1)
	if hi <= lo {
		return
	}
	if err := syscall.Madvise(a.mem[lo-a.base:hi-a.base], madvPopulateWrite); err != nil {
		noPopulate.Store(true)
		return
	}
	a.populated = hi
}

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14).
const madvPopulateWrite = 23

// noPopulate is set once madvise(MADV_POPULATE_WRITE) has failed.
var noPopulate atomic.Bool

// zeros is what zeroLocked writes.
var zeros = make([]byte, zeroAhead)

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

// grow maps the file from the page a.off is on to at least end, mapChunk
// at a time, past the end of the file if need be (zeroLocked then extends the
// file before a copy touches a page). If the file system cannot map the
// file, it cuts the zero bytes written ahead and sets a.write instead.
func (a *mmapAppender) grow(end int64) error {
	a.zmu.Lock() // Extend populates the mapping
	defer a.zmu.Unlock()
	if a.zeroed.Load() < 0 {
		fi, err := a.f.Stat()
		if err != nil {
			return err
		}
		a.zeroed.Store(fi.Size()) // where write(2) appends
	}
	page := int64(os.Getpagesize())
	base := a.off &^ (page - 1)
	size := max(mapChunk, (end-base+page-1)&^(page-1))
	if err := a.unmap(); err != nil {
		return err
	}
	err := onFd(a.f, "mmap", func(fd uintptr) error {
		mem, err := syscall.Mmap(int(fd), base, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		if err != nil {
			return err
		}
		a.mem, a.base = mem, base
		return nil
	})
	if err != nil && (errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EACCES)) {
		// A file system that cannot map files: appends go on with
		// write(2), after the zero bytes written ahead are cut.
		if terr := a.f.Truncate(a.off); terr != nil {
			return terr
		}
		a.write = true
		return nil
	}
	return err
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
	a.zmu.Lock()
	defer a.zmu.Unlock()
	a.closed = true
	err := a.unmap()
	if terr := a.f.Truncate(a.off); err == nil {
		err = terr
	}
	return err
}
