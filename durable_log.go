package ttlstore

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// SyncPolicy says when a durable collection's writes reach stable storage,
// and so what a crash can lose. Every policy hands each write's record to
// the operating system before the write returns, so killing the process
// (kill -9, a panic, an OOM kill) loses no acknowledged write; the policies
// differ in what a power loss or a kernel crash can lose. On Linux (amd64,
// arm64) a record reaches the OS's page cache by a memory copy into a
// shared mapping of the log, ahead of which the log is extended by zero
// bytes (written by a goroutine of the collection 256 KiB to 1 MiB ahead;
// when that one falls behind, by a writer, after it has released its locks,
// or 64 KiB at a time by one that finds no room), so
// a write seldom makes a system call and a full disk is met by that
// preallocation, as ErrIO; elsewhere, by write(2). An fsync (fdatasync)
// covers the records either way.
type SyncPolicy uint8

const (
	// SyncAlways, the zero value, returns from a write only after an
	// fsync (fdatasync) that covers its record: an acknowledged write
	// survives a power loss. Concurrent writers share one fsync (group
	// commit), so many writers cost little more than one.
	SyncAlways SyncPolicy = iota

	// SyncEverySecond fsyncs the log about once a second, in the
	// background, while it holds unsynced records. A power loss loses at
	// most the writes of the last second or two: if an fsync takes longer
	// than a second, writers wait for it rather than let the window grow.
	SyncEverySecond

	// SyncNever leaves flushing to the operating system (typically within
	// 30 s on Linux). A power loss loses whatever it had not flushed. The
	// log is still fsynced at Close and when a compaction rotates it.
	SyncNever
)

// String returns the policy's name.
func (p SyncPolicy) String() string {
	switch p {
	case SyncAlways:
		return "SyncAlways"
	case SyncEverySecond:
		return "SyncEverySecond"
	case SyncNever:
		return "SyncNever"
	}
	return "SyncPolicy(" + strconv.Itoa(int(p)) + ")"
}

// syncInterval is how often SyncEverySecond syncs.
const syncInterval = time.Second

// logWriter appends records to the current log file. Where the file can be
// mapped (vfs.Mapper), each commit copies its records, closed by a
// recCommit, through the mapping with l.mu held (copyLocked): a memory
// copy, no system call, so no writer waits for another's. Elsewhere it
// appends with group commit: each writer adds its record to a shared
// buffer and waits; one of the waiters (the leader) writes everything
// buffered, closed by a recCommit, in one write(2) while the others wait.
// Either way one fsync covers every record written before it began. Records are numbered in the order
// they are buffered (their LSN, the sequence number a recCommit names),
// which is the order they reach the file; the numbers go on from the last
// one the directory holds.
//
// A failed write(2), mapping growth or fsync is final: the error is latched, the writes
// that met it and every later one fail with it, and nothing is retried.
// The group a failed write(2) cut short has no recCommit in the file, so
// no restart applies it: what its writers were told (ErrIO) and what a
// restart shows agree. Records written before it are whole and closed, and
// are still fsynced for the writers that wait for them (a full disk does
// not stop fsync of what is written). After a failed fsync, nothing is
// fsynced again: the kernel may have dropped the dirty pages, so a retry
// could succeed without the data.
//
// Callers hold the shard lock of the document they log (SetDefaultTTL holds
// all of them) while they call the append methods, so that the log's order
// of records for one id is the order the writes happened; they wait for
// fsync (waitSynced) after releasing it. Lock order: shard.mu, then
// logWriter.mu.
type logWriter struct {
	policy SyncPolicy
	kick   chan struct{} // tells the background syncer there is something to sync
	full   chan struct{} // tells the compactor the log has grown past compactAt
	zero   chan struct{} // tells the zeroer to preallocate up to ahead
	// extended is how far the last extension of the current file (the
	// zeroer's, or a writer's catchUp) reached; behind says the zeroer
	// has fallen behind, so that a writer extends instead (catchUp).
	extended atomic.Int64
	behind   atomic.Bool

	// mu protects everything below, and the cond waits on it.
	mu        sync.Mutex
	cond      sync.Cond
	f         vfs.File     // the current log file
	app       vfs.Appender // appends to f through a mapping; nil: f.Write
	ext       vfs.Extender // app, if the zeroer can preallocate it; else nil
	ahead     int64        // how far the zeroer was last asked to preallocate f
	num       uint64       // its number
	size      int64        // bytes written to f, its header included
	compactAt int64        // size past which the compactor is told
	buf       []byte       // records buffered, not yet written
	count     uint32       // how many records buf holds
	spare     []byte       // the previous batch's buffer, for reuse
	next      uint64       // LSN of the last record buffered
	written   uint64       // LSN of the last record written to the OS
	synced    uint64       // LSN of the last record known durable
	writing   bool         // a leader is in write(2)
	syncing   bool         // a leader is in fsync (or a rotation is under way)
	syncStart time.Time
	syncs     uint64 // fsyncs of log files that succeeded
	err       error  // the first I/O failure, latched; or errLogClosed
	preamble  int64  // the size of a new log's preamble (its header and recLogInfo)
	noSync    bool   // an fsync failed, or the log is closed: fsync no more
	feed      *feed  // the change feed, fed and published under mu; nil without one
}

// newLogWriter returns a writer appending to f, file number num, of size
// bytes, whose records are numbered from seq+1 on.
func newLogWriter(f vfs.File, num uint64, size int64, policy SyncPolicy, seq uint64) *logWriter {
	l := &logWriter{policy: policy, num: num, next: seq, written: seq, synced: seq, preamble: preambleSize,
		kick: make(chan struct{}, 1), full: make(chan struct{}, 1), zero: make(chan struct{}, 1), compactAt: 1<<63 - 1}
	l.cond.L = &l.mu
	l.setFile(f, size)
	return l
}

// appendCommit logs a commit's mutations, a record each (none for a read),
// in one group (a restart applies all of them or none) and returns the LSN
// of the last once the group is written to the OS, or 0 if it logged none. On error nothing of the commit may
// be applied.
func (l *logWriter) appendCommit(cm *commit) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	muts := cm.muts()
	n := uint32(0)
	for i := range muts {
		switch m := &muts[i]; m.kind {
		case del:
			l.buf = appendDelete(l.buf, m.id)
		case put, touch, amend:
			l.buf = appendPut(l.buf, m.e)
		default:
			continue // a read logs nothing
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if f := l.feed; f != nil {
		f.mu.Lock()
		from := f.next
		n++ // the recFeed
		f.commitRecs(cm, l.next+uint64(n))
		l.buf = appendFeedRecord(l.buf, f, from)
		f.mu.Unlock()
	}
	return l.flushLocked(n)
}

// The appends of one record below take the change feed's records of it,
// recs (nil without a feed), for the feed to have at the record's LSN.

// appendDelete logs the deletion of id (an eviction); see appendCommit.
func (l *logWriter) appendDelete(id string, recs []feedRec) (uint64, error) {
	return logAppend(l, appendDelete, id, recs)
}

// appendExpire logs that a sweep removed the expired documents of removed;
// see appendCommit.
func (l *logWriter) appendExpire(removed []slot, recs []feedRec) (uint64, error) {
	return logAppend(l, appendExpire, removed, recs)
}

// appendPurge logs DeletePartition of the partition with encoding pk; see
// appendCommit.
func (l *logWriter) appendPurge(pk string, recs []feedRec) (uint64, error) {
	return logAppend(l, appendPurge, pk, recs)
}

// appendDefault logs a DefaultTTL change; see appendCommit.
func (l *logWriter) appendDefault(old, def int32, at int64, recs []feedRec) (uint64, error) {
	return logAppend(l, func(dst []byte, _ struct{}) []byte { return appendDefault(dst, old, def, at) }, struct{}{}, recs)
}

// logAppend buffers the record enc makes of v and returns its LSN once it is
// written to the OS (flushLocked), or the error latched before.
func logAppend[T any](l *logWriter, enc func([]byte, T) []byte, v T, recs []feedRec) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	l.buf = enc(l.buf, v)
	if f := l.feed; f != nil {
		// Even with no records: a group without recFeed is one
		// written without a feed, a gap (feed_durable.go).
		f.mu.Lock()
		from := f.next
		f.pushAll(l.next+2, recs)
		l.buf = appendFeedRecord(l.buf, f, from)
		f.mu.Unlock()
		return l.flushLocked(2)
	}
	return l.flushLocked(1)
}

// publishFeed makes visible to the feed's readers what the log now holds:
// what it has written to the OS, or under SyncAlways what it has synced.
// l.mu must be held.
func (l *logWriter) publishFeed() {
	if l.feed == nil {
		return
	}
	if l.policy == SyncAlways {
		l.feed.publish(l.synced)
	} else {
		l.feed.publish(l.written)
	}
}

// flushLocked numbers the n records just buffered and waits until they are
// written to the OS, writing the buffer itself when no other writer is;
// they are in one group, whoever writes it. It returns the LSN of the last.
// l.mu is held, and released while writing.
func (l *logWriter) flushLocked(n uint32) (uint64, error) {
	l.next += uint64(n)
	l.count += n
	lsn := l.next
	if l.app != nil {
		if err := l.copyLocked(); err != nil {
			return 0, err
		}
	}
	for l.written < lsn {
		if l.err != nil {
			return 0, l.err
		}
		if l.writing {
			l.cond.Wait()
			continue
		}
		l.writing = true
		batch, last, f := appendCommit(l.buf, l.count, l.next), l.next, l.f
		// buf takes the spare array, which must stop being the spare:
		// writers append to buf while this batch is written.
		l.buf, l.spare, l.count = l.spare[:0], nil, 0
		l.mu.Unlock()
		n, err := f.Write(batch)
		l.mu.Lock()
		l.writing = false
		l.size += int64(n)
		if err != nil {
			// The group's recCommit, at its end, did not reach the
			// file (a Write that fails has written less than all):
			// no restart applies any of the group.
			l.failLocked("write log", err)
		} else {
			l.written = last
			l.publishFeed()
		}
		if cap(batch) <= 1<<20 { // keep a buffer, unless a huge document grew it
			l.spare = batch[:0]
		}
		l.cond.Broadcast()
	}
	if l.pastBoundLocked() {
		select {
		case l.full <- struct{}{}:
		default:
		}
	}
	switch l.policy {
	case SyncEverySecond:
		if l.synced < l.written {
			select {
			case l.kick <- struct{}{}:
			default:
			}
		}
		// Bound the loss window: if a sync has run longer than the
		// interval, wait for it rather than pile up more unsynced writes.
		for l.syncing && realNow().Sub(l.syncStart) > syncInterval && l.err == nil {
			l.cond.Wait()
		}
	}
	// The record is with the OS: the write is applied, even if the log
	// failed meanwhile for another reason (a compaction's rotation, say),
	// which fails the writes after it. Reporting that failure here would
	// leave out of memory a record that a restart brings back.
	return lsn, nil
}

// waitSynced returns once the record lsn is durable, running the fsync
// itself when no other writer is. It returns the latched error if the log
// failed before that.
func (l *logWriter) waitSynced(lsn uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.synced < lsn {
		if l.noSync {
			return l.err
		}
		if l.syncing {
			l.cond.Wait()
			continue
		}
		l.syncLocked()
	}
	return nil
}

// syncWritten returns once every record written to the OS so far is
// durable, whatever the policy, running the fsync itself when no other
// writer is; or the log's failure.
func (l *logWriter) syncWritten() error {
	l.mu.Lock()
	lsn := l.written
	l.mu.Unlock()
	return l.waitSynced(lsn)
}

// syncLocked fsyncs the current file, covering every record written so
// far, with l.mu held (released during the fsync) and no sync under way.
func (l *logWriter) syncLocked() {
	l.syncing = true
	l.syncStart = realNow()
	target, f := l.written, l.f
	l.mu.Unlock()
	err := f.Sync()
	l.mu.Lock()
	l.syncing = false
	if err != nil {
		l.failLocked("sync log", err)
		l.noSync = true
	} else {
		l.synced = max(l.synced, target)
		l.syncs++
		l.publishFeed()
	}
	l.cond.Broadcast()
}

// failLocked latches err as the log's failure, unless one is latched.
func (l *logWriter) failLocked(op string, err error) {
	if l.err == nil {
		l.err = &ioError{op: op, err: err}
		if l.feed != nil {
			l.feed.stop(l.err) // what it has not published, it never will
		}
	}
}

// runSyncer is SyncEverySecond's goroutine: after a record is written, it
// waits syncInterval and fsyncs everything written by then. It arms no
// timer while everything is synced.
func (l *logWriter) runSyncer(done <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	t := newRealTimer()
	for {
		select {
		case <-done:
			return
		case <-l.kick:
		}
		t.Reset(syncInterval)
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
		l.mu.Lock()
		for l.syncing {
			l.cond.Wait()
		}
		if !l.noSync && l.synced < l.written {
			l.syncLocked()
		}
		l.mu.Unlock()
	}
}

// rotate makes nf, file number num with its preamble written and synced,
// the current log: records buffered from now on go to it. It returns the
// sequence number of the last record written to the old file. The old file is
// fsynced before any record goes to nf, so that the logs always hold a
// prefix of the writes (a power loss cannot keep a newer log's records and
// lose an older one's), and only the newest log can have a torn tail. The
// old file is synced while writers go on, up to rotateSyncs times while
// they write more than rotateTail bytes during a sync; they wait only for
// the sync of what they wrote during the last one.
func (l *logWriter) rotate(nf vfs.File, num uint64) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Sync while writers go on, again while they wrote much during the
	// last sync, so that the sync they wait for covers little.
	for range rotateSyncs {
		for l.syncing {
			l.cond.Wait()
		}
		if l.err != nil || l.synced >= l.written {
			break
		}
		before := l.size
		l.syncLocked()
		if l.size-before <= rotateTail {
			break
		}
	}
	for l.writing || l.syncing {
		l.cond.Wait()
	}
	if l.err != nil {
		return 0, l.err
	}
	// Cut the old file's preallocated tail, so that it ends as a file
	// appended with write(2) does. The cut need not be durable, nor
	// succeed: a tail of zero bytes replays as the end of the file.
	_, _ = l.cutLocked()
	if l.synced < l.written {
		// The writes made during the last sync: writers wait on l.mu.
		if err := l.f.Sync(); err != nil {
			l.failLocked("sync log", err)
			l.noSync = true
			l.cond.Broadcast()
			return 0, l.err
		}
		l.synced = l.written
		l.syncs++
		l.publishFeed()
	}
	old := l.f
	l.setFile(nf, l.preamble)
	l.num = num
	l.cond.Broadcast()
	old.Close() // synced: nothing of it can be lost any more
	return l.written, nil
}

// pastBound reports whether the log has grown past the size at which the
// compactor runs (compactAt).
func (l *logWriter) pastBound() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pastBoundLocked()
}

// pastBoundLocked is pastBound with l.mu held.
func (l *logWriter) pastBoundLocked() bool { return l.size > l.compactAt }

// close syncs what is unsynced, closes the file, and returns the first
// error the log met. Later appends fail with ErrClosed.
func (l *logWriter) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.writing || l.syncing {
		l.cond.Wait()
	}
	if l.err == errLogClosed {
		return nil
	}
	cut, cerr := l.cutLocked()
	if cerr != nil {
		l.failLocked("cut log", cerr)
	}
	if !l.noSync && (l.synced < l.written || cut) {
		l.syncLocked() // after a full disk too: what was written is whole
	}
	err := l.err
	if cerr := l.f.Close(); err == nil && cerr != nil {
		err = &ioError{op: "close log", err: cerr}
	}
	l.err, l.noSync = errLogClosed, true
	l.cond.Broadcast()
	return err
}

// rotateSyncs and rotateTail bound the syncs rotate runs while writers go
// on: at most rotateSyncs, and no more once writers wrote rotateTail bytes
// or less during one.
const (
	rotateSyncs = 4
	rotateTail  = 64 << 10
)

// preambleSize is the size of a new log before its first record.
var preambleSize = int64(len(logPreamble()))

// errLogClosed is what appends return after close.
var errLogClosed = newError("write", "", ErrClosed)
