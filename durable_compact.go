package ttlstore

import (
	"math"

	"github.com/ttlstore/ttlstore/internal/vfs"
	"github.com/ttlstore/ttlstore/internal/wal"
)

// Compaction: a new log, a snapshot of the live documents beside it
// (written to a temporary file, fsynced, renamed, the directory fsynced),
// then the removal of the files the snapshot replaces (a stale snapshot
// cut down a few MiB at a time first: trimStale). A crash at any step
// leaves a directory that loads to the same documents (see durable.go).

// cleanUp removes what an interrupted compaction left: temporary snapshots
// and the files a newer snapshot replaces. It is best effort: such files
// are never read. It removes only names of the library's own forms
// (NNNNNNNNNNNNNNNN.log, .snap and .snap.tmp, sixteen digits): anything
// else in the directory (a note, a backup such as
// 0000000000000001.log.bak) is the user's, and stays.
//
// A compaction passes the size of the snapshot it replaced as bigSnap:
// past trimStep, stale snapshots are cut down before they are removed
// (trimStale). Open passes 0.
func (d *durable) cleanUp(bigSnap int64) {
	names, err := d.fs.List(d.dir)
	if err != nil {
		return
	}
	// Only a published snapshot replaces files: without one, every log
	// is still needed (a compaction may have started a log and failed
	// before its snapshot was published).
	base := uint64(0)
	snaps, logs := parseFiles(names)
	if len(snaps) > 0 {
		base = snaps[len(snaps)-1]
	}
	// The change feed keeps the newest logs before the snapshot that fit
	// in its RetainBytes (feed_durable.go).
	var keep map[uint64]bool
	if d.feedKeep > 0 {
		keep = d.feedKept(logs, base, d.feedKeep)
	}
	removed := false
	for _, name := range names {
		n, ext, ok := fileNumber(name)
		stale := ext == "snap.tmp" || (n < base && (ext == "log" && !keep[n] || ext == "snap"))
		if ok && stale {
			if ext != "log" && bigSnap > trimStep {
				d.trimStale(d.path(name))
			}
			removed = d.fs.Remove(d.path(name)) == nil || removed
		}
	}
	if removed {
		d.fs.SyncDir(d.dir)
	}
}

// trimStep is how much of a stale snapshot trimStale frees at a time.
const trimStep = 8 << 20

// trimStale cuts the stale snapshot name down, trimStep bytes at a time,
// each cut fsynced, before cleanUp removes it: the file system then frees
// its blocks (and, mounted with discard, trims them) a few at a time, in
// commits of their own, rather than all of them in the one a writer's log
// fsync may be waiting for. It is best effort, and only for snapshots: a
// stale snapshot is never read (Open loads the newest), while the change
// feed reads old logs. A crash leaves a shorter stale file, removed later.
func (d *durable) trimStale(name string) {
	f, err := d.fs.OpenAppend(name)
	if err != nil {
		return
	}
	defer f.Close()
	size, err := f.Size()
	for err == nil && size > trimStep {
		size -= trimStep
		if err = f.Truncate(size); err == nil {
			err = f.Sync()
		}
	}
}

// setCompactAt sets the log size past which the compactor runs, from the
// size of the snapshot just written (0 when there is none), which it
// records in d.snapSize.
func (d *durable) setCompactAt(snapSize int64) {
	d.snapSize = snapSize
	d.log.mu.Lock()
	d.log.compactAt = max(d.minCompact, compactFactor*snapSize)
	d.log.mu.Unlock()
}

// runCompactor is the durable collection's compaction goroutine: it
// compacts when the log tells it that it has grown past its bound.
func (c *Collection) runCompactor() {
	defer c.d.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.d.log.full:
		}
		if err := c.d.compactFull(c); err != nil {
			// The log goes on; try again once it has doubled.
			c.d.log.mu.Lock()
			c.d.log.compactAt = 2 * c.d.log.size
			c.d.log.mu.Unlock()
		}
	}
}

// Compact rewrites a durable collection's log as a snapshot of its live
// documents, the way the background compactor does when the log grows past
// twice the size of the last snapshot (and 64 MiB), and returns when the
// snapshot is published. A compaction the log's growth asked for before
// it, and that has not started, then finds the log small and does not
// run: the directory holds one snapshot and one log when Compact returns,
// unless writes made since take the log past its bound again. It holds
// no lock while it writes: a writer waits for it only while its shard is
// copied (8 bytes a document), a reader not at all. The snapshot goes to the disk 256 KiB at a time, each chunk
// written back before the next is encoded, so that a log's fsync (and a
// write(2) that needs the file system's journal) queues behind little of
// it and the final fsync has little left to write: a compaction goes at
// the disk's pace, and writers still share the disk with it. An error
// leaves the directory loading to the same documents. On a collection made
// by New it does nothing and returns nil. Once Close has begun it returns
// ErrClosed; Close waits for a Compact already under way (the directory
// stays locked until it ends), so a slow disk makes Close as slow as the
// compaction.
func (c *Collection) Compact() error {
	if c.closed.Load() {
		return newError("compact", "", ErrClosed)
	}
	if c.d == nil {
		return nil
	}
	return c.d.compact(c)
}

// compact starts the next log, captures the live documents, and publishes
// them as the snapshot that goes with that log.
//
// It returns ErrClosed, doing nothing, once Close has begun: Close takes
// compactMu after setting c.closed, so it waits for a compaction under way
// and none starts after it.
func (d *durable) compact(c *Collection) error {
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	return d.compactLocked(c)
}

// compactFull is the compactor's compact: it compacts only if the log is
// still past its bound once d.compactMu is held. The log tells the
// compactor when a write takes it past the bound, and an explicit Compact
// (or a compaction under way) may have started a new log since: without
// this look, the compactor would write a second snapshot of the same
// documents right after it.
func (d *durable) compactFull(c *Collection) error {
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	if !d.log.pastBound() {
		return nil
	}
	return d.compactLocked(c)
}

// compactLocked is compact with d.compactMu held.
func (d *durable) compactLocked(c *Collection) error {
	if c.closed.Load() {
		return newError("compact", "", ErrClosed)
	}
	num, seq, err := d.nextLog()
	if err != nil {
		return err
	}
	return d.publish(c, num, seq)
}

// nextLog makes the next log the current one and returns its number and
// the sequence number of the last record of the one before. d.compactMu
// must be held.
func (d *durable) nextLog() (num, seq uint64, err error) {
	d.log.mu.Lock()
	num = d.log.num + 1
	d.log.mu.Unlock()
	nf, err := d.createLog(num)
	if err != nil {
		return 0, 0, err
	}
	seq, err = d.log.rotate(nf, num)
	if err != nil {
		nf.Close() // empty: Open removes it
		return 0, 0, err
	}
	return num, seq, nil
}

// publish captures the live documents and publishes them as snapshot num,
// which replaces the logs before log num, the current one, whose
// predecessor's last record is seq. d.compactMu must be held.
func (d *durable) publish(c *Collection, num, seq uint64) error {
	live, def, etag := c.capture()
	defer clear(live)
	// What capture saw was applied once its records were written to log
	// num, perhaps not yet synced: the snapshot must not get ahead of the
	// log, or a power loss that took those records (after a failed fsync,
	// say) would leave a snapshot holding writes whose records, and their
	// change feed records, are gone.
	if err := d.log.syncWritten(); err != nil {
		return err
	}
	size, err := d.writeSnapshot(num, live, def, etag, seq)
	if err != nil {
		return err
	}
	prev := d.snapSize
	d.setCompactAt(size)
	d.cleanUp(prev)
	return nil
}

// capture returns the live documents (immutable entries: the references
// are enough), and with a change feed the expired ones not yet swept too,
// the DefaultTTL they are under, and the last _etag issued.
// It holds one shard's read lock at a time.
//
// It takes every shard's lock, even of a shard that looks empty: a write
// whose record went to the old log before the rotation may still hold its
// shard's lock, not yet applied, and the snapshot must wait for it, since
// the old log is removed once the snapshot is published.
func (c *Collection) capture() (live []*entry, def int32, etag uint64) {
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	now := c.now()
	if c.feed != nil {
		// The expired documents too: their expiry is the feed's to
		// record, once, when a sweep removes them; dropped here, a
		// restart would lose it.
		now = math.MinInt64
	}
	n := 0
	for i := range c.shards {
		n += int(c.shards[i].size.Load())
	}
	live = make([]*entry, 0, n)
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		start := len(live)
		live = s.index.appendLive(now, live)
		live = live[:start+len(s.withoutHidden(live[start:]))] // deleted: a restart must not bring them back
		etag = max(etag, s.etag)
		s.mu.RUnlock()
	}
	return live, c.def.Load(), etag
}

// writeSnapshot writes snapshot num: to a temporary file, fsynced, renamed
// into place, and the directory fsynced. It returns the snapshot's size.
func (d *durable) writeSnapshot(num uint64, live []*entry, def int32, etag, seq uint64) (int64, error) {
	final := d.path(fileName(num, wal.KindSnapshot))
	tmp := final + ".tmp"
	f, err := d.fs.Create(tmp)
	if err != nil {
		return 0, &ioError{op: "create " + tmp, err: err}
	}
	size, err := writeSnapshotTo(f, live, def, etag, seq, d.pkPath)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.fs.Rename(tmp, final)
	}
	if err == nil {
		err = d.fs.SyncDir(d.dir)
	}
	if err != nil {
		d.fs.Remove(tmp) // best effort: Open removes it otherwise
		return 0, &ioError{op: "write snapshot " + final, err: err}
	}
	return size, nil
}

// snapChunk is how much of a snapshot is encoded, written and written back
// (vfs.File.WriteBack) at a time: small enough that a log's fsync queued
// behind it on the device waits about a millisecond.
const snapChunk = 256 << 10

// writeSnapshotTo writes a snapshot's records to f in snapChunk writes, each
// written back to the device before the next is encoded: the kernel never
// holds more than a chunk of the snapshot unwritten, so the final Sync,
// and the log's fsyncs meanwhile, have little of it to wait for. The
// compactor blocks in WriteBack once a chunk, which gives its processor to
// the writers.
func writeSnapshotTo(f vfs.File, live []*entry, def int32, etag, seq uint64, path string) (int64, error) {
	buf := make([]byte, 0, snapChunk+4096)
	buf = wal.AppendHeader(buf, wal.KindSnapshot)
	buf = appendSnapInfo(buf, def, etag, seq, path)
	var size int64
	flush := func() error {
		n, err := f.Write(buf)
		if err == nil {
			err = f.WriteBack(size, int64(n))
		}
		size += int64(n)
		buf = buf[:0]
		return err
	}
	for _, e := range live {
		buf = appendPut(buf, e)
		if len(buf) >= snapChunk {
			if err := flush(); err != nil {
				return size, err
			}
		}
	}
	buf = appendSnapEnd(buf, uint64(len(live)))
	err := flush()
	return size, err
}
