package ttlstore

// The log's appends through a shared mapping of its file (vfs.Mapper),
// where the platform has one: logWriter's alternative to group commit
// over write(2). See SyncPolicy and docs/durable.md.

import (
	"sync"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// mapLogs says whether a log is appended through a mapping where its file
// can be (vfs.Mapper); tests turn it off to run the write(2) path.
var mapLogs = true

// The zeroer (runZeroer) keeps a mapped log preallocated aheadFar bytes
// past the appends, asked to whenever less than aheadNear is left (every
// aheadFar-aheadNear bytes appended), so that a writer seldom extends the
// file itself (vfs.Extender). A writer catches up (catchUp) when what the
// zeroer has done reaches less than aheadLate past the appends.
const (
	aheadNear = 768 << 10
	aheadFar  = 1 << 20
	aheadLate = 256 << 10
)

// setFile makes f, of size bytes, the file appended to, through a mapping
// if f can be mapped. l.mu must be held, or l not yet shared.
func (l *logWriter) setFile(f vfs.File, size int64) {
	l.f, l.size, l.app, l.ext, l.ahead = f, size, nil, nil, 0
	l.extended.Store(0)
	if m, ok := f.(vfs.Mapper); ok && mapLogs {
		if app, err := m.MapAppend(size); err == nil {
			l.app = app
			l.ext, _ = app.(vfs.Extender)
		}
	}
}

// cutLocked closes the appender of the current file, if there is one,
// cutting the file's preallocated tail, and reports whether it did.
func (l *logWriter) cutLocked() (bool, error) {
	if l.app == nil {
		return false, nil
	}
	err := l.app.Close()
	l.app = nil
	return true, err
}

// copyLocked appends the buffered records, closed by their recCommit,
// through the mapping: a memory copy, with l.mu held, that no other writer
// need wait for to share a system call, so every commit is a group of its
// own. A failure (the disk full when the mapping grows) writes nothing and
// is latched, as a failed write(2) is.
func (l *logWriter) copyLocked() error {
	l.buf = appendCommit(l.buf, l.count, l.next)
	err := l.app.Append(l.buf)
	size := len(l.buf)
	l.buf, l.count = l.buf[:0], 0
	if cap(l.buf) > 1<<20 { // unless a huge document grew it
		l.buf = nil
	}
	if err != nil {
		l.failLocked("write log", err)
		return l.err
	}
	l.size += int64(size)
	l.written = l.next
	l.publishFeed()
	if l.size > l.ahead-aheadNear && l.ext != nil {
		if l.ahead != 0 && l.extended.Load() < l.size+aheadLate {
			// The zeroer has fallen behind (it waits for a P while
			// writers keep every P busy, say): the writer extends
			// itself once it has released its locks.
			l.behind.Store(true)
		}
		l.ahead = l.size + aheadFar
		select {
		case l.zero <- struct{}{}:
		default:
		}
	}
	return nil
}

// runZeroer is the goroutine that preallocates a mapped log ahead of its
// appends (vfs.Extender), up to l.ahead, when copyLocked asks. It extends
// without l.mu, so writers go on meanwhile; the Appender serialises the
// extension with their appends, with its Close (at a rotation), and with
// its replacement. The log's close comes after done is closed and the
// goroutine has returned (durable.close).
func (l *logWriter) runZeroer(done <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-done:
			return
		case <-l.zero:
		}
		l.extendAhead()
	}
}

// catchUp is the zeroer's work done by a writer, with no lock held, when
// the zeroer has fallen behind (l.behind): on 2 writers and GOMAXPROCS=2,
// say, it waits for a P until a preemption, and the writers would meet the
// end of the preallocation and extend the file with l.mu held.
func (l *logWriter) catchUp() {
	if l.behind.CompareAndSwap(true, false) {
		l.extendAhead()
	}
}

// extendAhead preallocates the current file up to l.ahead (without l.mu,
// which it takes only to read them) and notes how far it got.
func (l *logWriter) extendAhead() {
	l.mu.Lock()
	ext, to := l.ext, l.ahead
	l.mu.Unlock()
	if ext == nil {
		return
	}
	// A failure (a full disk) is the writers' to meet: an append that
	// finds no room extends the file itself.
	_ = ext.Extend(to)
	for {
		old := l.extended.Load()
		if old >= to || l.extended.CompareAndSwap(old, to) {
			return
		}
	}
}
