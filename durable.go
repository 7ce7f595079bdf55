package ttlstore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ttlstore/ttlstore/internal/vfs"
	"github.com/ttlstore/ttlstore/internal/wal"
)

// A durable collection keeps, in its directory:
//
//	LOCK                     held (flock) while a Collection has it open
//	NNNNNNNNNNNNNNNN.snap    the live documents when log N began (absent
//	                         until the first compaction)
//	NNNNNNNNNNNNNNNN.log     every write since, in order (durable_record.go)
//
// Open loads the newest snapshot, replays every log numbered from it on, in
// order, and appends to the last. Compaction starts log N+1, writes
// snapshot N+1 from memory beside it (as N+1.snap.tmp, fsynced, renamed,
// directory fsynced), then removes the files numbered below N+1. A crash at
// any step leaves either the old snapshot with every log since, or the new
// one with its log: both load to the same documents.

// compactFactor and compactMinBytes decide when the log is compacted: when
// it has grown past compactMinBytes and past compactFactor times the size of
// the last snapshot (about the live data), so the directory holds at most
// about three times the live data, plus compactMinBytes.
const (
	compactFactor   = 2
	compactMinBytes = 64 << 20
)

// durable is a durable collection's state beyond the in-memory one.
type durable struct {
	fs         vfs.FS
	dir        string
	lock       io.Closer
	log        *logWriter
	torn       int64 // bytes of torn tail cut from the last log at Open
	stored     bool  // Open found records or a snapshot
	minCompact int64 // compactMinBytes, or less in tests

	compactMu sync.Mutex     // one compaction at a time
	wg        sync.WaitGroup // the syncer and the compactor
}

// Open returns a durable Collection kept in the directory dir, which it
// creates (mode 0700) if missing, and starts its goroutines. It has the
// same API, rules and read speed as a Collection made by New: reads never
// touch the disk; every write is logged before it is applied, and returns
// according to opts.Sync. Call Close to sync and release the directory.
//
// Opening restores exactly what the collection held when it was closed or
// crashed: every document with its _ts, _etag and ttl, the DefaultTTL and
// the effect of every change to it, every delete. Expiry is absolute
// (_ts + ttl), so a document expires at the same second whether or not the
// process restarted; documents that expired while it was down are not
// served, and the sweeper removes them and reports them to OnExpire. Sweeps
// are logged before they are reported, so a document swept before a
// restart is not back after it, and is reported once: across a clean
// Close or a kill -9 under every policy, and across a power loss under
// SyncAlways (whose sweeps wait for the fsync before they report). _etags
// never repeat across restarts.
//
// opts.DefaultTTL is the collection's setting, as for New: if it differs
// from the stored one, Open applies it as SetDefaultTTL would at that
// moment (what had expired stays gone; R13), and stores it.
//
// opts.MaxDocumentSize limits new writes, not what Open loads: documents
// stored under a larger limit are loaded and kept whatever their size.
//
// A record torn by a crash at the very end of the log (one whose write no
// caller was told had succeeded) is cut off; Stats.TornBytes says how many
// bytes. Any other damage makes Open fail with ErrCorrupt, naming the file
// and offset, and change nothing on disk. Open returns ErrLocked if another
// Collection has the directory open (in this process, through any path to
// it and even if dir/LOCK was removed; in another process, as long as
// dir/LOCK is left alone), ErrIO if the disk fails, and the errors of New
// for bad options. Open creates dir/LOCK if it is missing, and removes no
// file it did not write.
func Open(dir string, opts Options) (*Collection, error) {
	return open(vfs.OS, dir, opts, compactMinBytes, false)
}

// open is Open on fsys, compacting once the log passes minCompact (and
// twice the last snapshot). With keepDefault it ignores opts.DefaultTTL
// for a directory that has one stored, so that tests can look at exactly
// what was recovered.
func open(fsys vfs.FS, dir string, opts Options, minCompact int64, keepDefault bool) (*Collection, error) {
	c, def, err := newCollection("open", opts)
	if err != nil {
		return nil, err
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, &ioError{op: "open " + dir, err: err}
	}
	lock, err := fsys.Lock(filepath.Join(dir, "LOCK"))
	if errors.Is(err, vfs.ErrLocked) {
		return nil, newErrorDetail("open", "", ErrLocked, dir)
	} else if err != nil {
		return nil, &ioError{op: "lock " + dir, err: err}
	}
	d := &durable{fs: fsys, dir: dir, lock: lock, minCompact: minCompact}
	if err := d.load(c, opts.Sync); err != nil {
		lock.Close()
		return nil, err
	}
	c.d = d
	if def != c.def.Load() && !(keepDefault && d.stored) {
		if err := c.SetDefaultTTL(ttlPointer(def)); err != nil {
			d.log.close()
			lock.Close()
			return nil, err
		}
	}
	d.cleanUp()
	// A bound lower than what the directory holds: evict now, as
	// SetLimits would, so that what was evicted stays evicted.
	if err := c.shrink("open"); err != nil {
		d.log.close()
		lock.Close()
		return nil, err
	}
	c.start()
	if opts.Sync == SyncEverySecond {
		d.wg.Add(1)
		go d.log.runSyncer(c.done, &d.wg)
	}
	d.wg.Add(1)
	go c.runCompactor()
	return c, nil
}

// ttlPointer is the *int32 form of a stored DefaultTTL (0 is off).
func ttlPointer(def int32) *int32 {
	if def == 0 {
		return nil
	}
	return &def
}

// path is the path of a file of the directory.
func (d *durable) path(name string) string { return filepath.Join(d.dir, name) }

// files lists the numbers of the directory's snapshots and logs, sorted.
func (d *durable) files() (snaps, logs []uint64, err error) {
	names, err := d.fs.List(d.dir)
	if err != nil {
		return nil, nil, &ioError{op: "list " + d.dir, err: err}
	}
	snaps, logs = parseFiles(names)
	return snaps, logs, nil
}

// parseFiles picks the snapshots and logs out of a directory listing and
// returns their numbers, sorted.
func parseFiles(names []string) (snaps, logs []uint64) {
	for _, name := range names {
		switch n, ext, ok := fileNumber(name); {
		case ok && ext == "snap":
			snaps = append(snaps, n)
		case ok && ext == "log":
			logs = append(logs, n)
		}
	}
	slices.Sort(snaps)
	slices.Sort(logs)
	return snaps, logs
}

// fileNumber splits a name of fileName's form into its number and what
// follows the first dot ("log", "snap", "snap.tmp"); ok is false for any
// other name.
func fileNumber(name string) (n uint64, ext string, ok bool) {
	num, ext, ok := strings.Cut(name, ".")
	n, err := strconv.ParseUint(num, 10, 64)
	return n, ext, ok && err == nil && len(num) == 16
}

// load reads the newest snapshot and the logs after it into c, which is
// empty and has no goroutines, then opens the last log for appending (or
// starts the first). Until it appends, it only reads.
func (d *durable) load(c *Collection, policy SyncPolicy) error {
	snaps, logs, err := d.files()
	if err != nil {
		return err
	}
	base := uint64(1)
	var etag, seq uint64
	var snapSize int64
	found := false
	if len(snaps) > 0 {
		base = snaps[len(snaps)-1]
		if etag, seq, snapSize, err = d.loadSnapshot(c, base); err != nil {
			return err
		}
		found = true
	}
	var replay []uint64
	for _, n := range logs {
		if n >= base {
			replay = append(replay, n)
		}
	}
	if found && (len(replay) == 0 || replay[0] != base) {
		return d.corrupt(fileName(base, wal.KindLog), 0, "missing: the snapshot needs it")
	}
	for i, n := range replay {
		if n != replay[0]+uint64(i) {
			return d.corrupt(fileName(replay[0]+uint64(i), wal.KindLog), 0, "missing: logs "+strconv.FormatUint(replay[0], 10)+" to "+strconv.FormatUint(n, 10)+" must all be there")
		}
	}
	var last replayed
	for i, n := range replay {
		rp, err := d.replayLog(c, n)
		if err != nil {
			return err
		}
		etag, seq = max(etag, rp.etag), max(seq, rp.seq)
		found = found || rp.records > 0
		last = rp
		if rp.torn > 0 && i < len(replay)-1 {
			// A log is fsynced before the next one takes records, so
			// only the last can have been torn by a crash, unless the
			// later ones are empty: a compaction started one and
			// failed to sync this one. Then this one is the last.
			if err := d.dropEmptyLogs(c, replay[i+1:]); err != nil {
				return d.corrupt(fileName(n, wal.KindLog), rp.end, "torn, and "+err.Error())
			}
			replay = replay[:i+1]
			break
		}
	}
	d.stored = found
	if found {
		// Every _etag issued before a crash is below this, even those
		// of writes whose records were lost with the OS's buffers (up to
		// 2^33 of them a shard).
		c.resumeEtags(etag + 1<<40)
	}
	var f vfs.File
	size := preambleSize
	if len(replay) == 0 {
		if f, err = d.createLog(base); err != nil {
			return err
		}
		last.num = base
	} else {
		if f, size, err = d.continueLog(last); err != nil {
			return err
		}
		if f == nil {
			// A log without commit groups, written by an earlier
			// version: the writes go on in a new one.
			last.num++
			if f, err = d.createLog(last.num); err != nil {
				return err
			}
		}
		d.torn = last.torn
	}
	d.log = newLogWriter(f, last.num, size, policy, seq)
	d.setCompactAt(snapSize)
	return nil
}

// continueLog opens the last log, last, for appending: it cuts its torn
// tail (a torn record, or a group without its recCommit), so that the next
// group follows the last whole one, and returns it with its size. A log
// torn within its preamble, or left empty by a crash right after its
// creation, starts anew. A log with records but without commit groups is
// synced and left as it is: continueLog returns a nil File, and the caller
// starts the next log.
func (d *durable) continueLog(last replayed) (vfs.File, int64, error) {
	name := d.path(fileName(last.num, wal.KindLog))
	f, err := d.fs.OpenAppend(name)
	if err != nil {
		return nil, 0, &ioError{op: "open " + name, err: err}
	}
	size := last.end
	switch {
	case !last.groups && last.records == 0:
		err = f.Truncate(0)
		if err == nil {
			_, err = f.Write(logPreamble())
		}
		size = preambleSize
	case last.torn > 0:
		err = f.Truncate(last.end)
	}
	if err == nil && (last.torn > 0 || !last.groups) {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil, 0, &ioError{op: "cut the torn tail of " + name, err: err}
	}
	if !last.groups && last.records > 0 {
		f.Close()
		return nil, 0, nil
	}
	return f, size, nil
}

// createLog creates log num with its preamble, durable (directory entry
// included) before it returns.
func (d *durable) createLog(num uint64) (vfs.File, error) {
	name := d.path(fileName(num, wal.KindLog))
	f, err := d.fs.Create(name)
	if err != nil {
		return nil, &ioError{op: "create " + name, err: err}
	}
	_, err = f.Write(logPreamble())
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = d.fs.SyncDir(d.dir)
	}
	if err != nil {
		f.Close()
		d.fs.Remove(name) // best effort: a log without records loads as empty anyway
		return nil, &ioError{op: "create " + name, err: err}
	}
	return f, nil
}

// corrupt returns the ErrCorrupt error for file name at offset off.
func (d *durable) corrupt(name string, off int64, reason string) error {
	return newErrorDetail("open", "", ErrCorrupt, fmt.Sprintf("%s: offset %d: %s", d.path(name), off, reason))
}

// readError turns an error of the wal reader on file name into Open's.
func (d *durable) readError(name string, err error) error {
	var ce *wal.CorruptError
	if errors.As(err, &ce) {
		return d.corrupt(name, ce.Offset, ce.Reason)
	}
	return &ioError{op: "read " + d.path(name), err: err}
}

// maxRecord is the longest payload a reader accepts: the longest record the
// library can have written, whatever MaxDocumentSize was then (the largest
// it allows, plus a recPut header), capped to an int on 32-bit platforms.
// It is a format limit, not the collection's option: a directory written
// with a larger MaxDocumentSize opens with a smaller one, to every document
// (the option limits new writes). A length above it is corrupt. Nothing is
// allocated from a length before the reader has checked that the file
// holds that many bytes, so a generous limit costs no memory.
const maxRecord = min(putHeaderSize+math.MaxInt32+MaxIDLength, math.MaxInt)

// openReader opens file name for reading with a wal reader of kind. c is
// not used: the limit on a record's length is maxRecord, the format's.
func (d *durable) openReader(c *Collection, name string, kind wal.Kind) (vfs.File, *wal.Reader, error) {
	f, err := d.fs.Open(d.path(name))
	if err != nil {
		return nil, nil, &ioError{op: "open " + d.path(name), err: err}
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, nil, &ioError{op: "stat " + d.path(name), err: err}
	}
	r, err := wal.NewReader(f, size, kind, maxRecord)
	if err != nil {
		f.Close()
		return nil, nil, d.readError(name, err)
	}
	return f, r, nil
}

// loadSnapshot loads snapshot num into c and returns the last _etag and
// sequence number it records and the snapshot's size.
func (d *durable) loadSnapshot(c *Collection, num uint64) (etag, seq uint64, size int64, err error) {
	name := fileName(num, wal.KindSnapshot)
	f, r, err := d.openReader(c, name, wal.KindSnapshot)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	var count uint64
	for i := 0; ; i++ {
		off := r.Offset()
		typ, p, err := r.Next()
		if err == io.EOF {
			// A snapshot is published whole: a tail is damage.
			return 0, 0, 0, d.corrupt(name, r.Offset(), "ends without its end record")
		} else if err != nil {
			return 0, 0, 0, d.readError(name, err)
		}
		if i == 0 {
			def, e, s, ok := decodeSnapInfo(p)
			if typ != recSnapInfo || !ok {
				return 0, 0, 0, d.corrupt(name, off, "does not start with its info record")
			}
			c.def.Store(def)
			etag, seq = e, s
			continue
		}
		switch {
		case typ == recPut:
			e, err := decodePut(p)
			if err != nil {
				return 0, 0, 0, d.corrupt(name, off, err.Error())
			}
			c.applyPut(e)
			etag = max(etag, e.etag)
			count++
		case typ == recSnapEnd && len(p) == 8 && le.Uint64(p) == count:
			if _, _, err := r.Next(); err != io.EOF || r.Torn() > 0 {
				return 0, 0, 0, d.corrupt(name, r.Offset(), "data after the end record")
			}
			return etag, seq, r.Offset(), nil
		default:
			return 0, 0, 0, d.corrupt(name, off, "unexpected record of type "+strconv.Itoa(int(typ)))
		}
	}
}

// dropEmptyLogs removes the logs nums, after checking that none holds a
// record but its recLogInfo; otherwise it removes nothing and says which
// one does.
func (d *durable) dropEmptyLogs(c *Collection, nums []uint64) error {
	for _, n := range nums {
		f, r, err := d.openReader(c, fileName(n, wal.KindLog), wal.KindLog)
		if err != nil {
			return err
		}
		typ, _, err := r.Next()
		if err == nil && typ == recLogInfo {
			_, _, err = r.Next()
		}
		f.Close()
		if err != io.EOF {
			return errors.New("a later log, " + fileName(n, wal.KindLog) + ", has records")
		}
	}
	for _, n := range nums {
		if err := d.fs.Remove(d.path(fileName(n, wal.KindLog))); err != nil {
			return &ioError{op: "remove an empty log", err: err}
		}
	}
	if err := d.fs.SyncDir(d.dir); err != nil {
		return &ioError{op: "sync " + d.dir, err: err}
	}
	return nil
}

// replayed is what replayLog found in a log.
type replayed struct {
	num     uint64 // the log's number
	end     int64  // where its last whole group (or record, in a log without groups) ends
	torn    int64  // the bytes after end: a torn record, or a group without its recCommit
	etag    uint64 // the largest _etag it holds
	seq     uint64 // the sequence number of its last recCommit; 0 if none
	groups  bool   // it starts with recLogInfo: its records are in commit groups
	records int    // the records it applied
}

// replayLog applies log num to c: each commit group once its recCommit is
// read, or in a log without groups each record as it comes.
func (d *durable) replayLog(c *Collection, num uint64) (replayed, error) {
	rp := replayed{num: num}
	name := fileName(num, wal.KindLog)
	f, r, err := d.openReader(c, name, wal.KindLog)
	if err != nil {
		return rp, err
	}
	defer f.Close()
	rp.end = r.Offset()
	var group []logOp
	for i := 0; ; i++ {
		off := r.Offset()
		typ, p, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			return rp, d.readError(name, err)
		}
		switch {
		case typ == recLogInfo && i == 0:
			if len(p) != 4 || le.Uint32(p) != logFormatGroups {
				return rp, d.corrupt(name, off, "log info record of an unknown format")
			}
			rp.groups = true
			rp.end = r.Offset()
		case typ == recCommit && rp.groups:
			count, seq, err := decodeCommit(p)
			switch {
			case err != nil:
				return rp, d.corrupt(name, off, err.Error())
			case count == 0 || int(count) != len(group):
				return rp, d.corrupt(name, off, fmt.Sprintf("commit record closes %d records, after %d", count, len(group)))
			case rp.seq != 0 && seq != rp.seq+uint64(count):
				return rp, d.corrupt(name, off, fmt.Sprintf("commit record's sequence number %d does not follow %d by %d", seq, rp.seq, count))
			}
			for _, op := range group {
				c.applyOp(op)
			}
			clear(group)
			group = group[:0]
			rp.records += int(count)
			rp.seq, rp.end = seq, r.Offset()
		default:
			op, err := decodeOp(typ, p)
			if err != nil {
				return rp, d.corrupt(name, off, err.Error())
			}
			if op.e != nil {
				rp.etag = max(rp.etag, op.e.etag)
			}
			if rp.groups {
				group = append(group, op)
				continue
			}
			c.applyOp(op)
			rp.records++
			rp.end = r.Offset()
		}
	}
	rp.torn = r.Offset() + r.Torn() - rp.end
	return rp, nil
}

// logOp is a log record's change, decoded.
type logOp struct {
	typ byte
	e   *entry   // recPut: the document
	ids []string // recDelete: one id; recExpire: the ids
	old int32    // recDefault: the DefaultTTL before,
	def int32    // after,
	at  int64    // and the second of the change
}

// decodeOp decodes a record of a change (not recCommit or recLogInfo).
func decodeOp(typ byte, p []byte) (logOp, error) {
	op := logOp{typ: typ}
	var err error
	switch typ {
	case recPut:
		op.e, err = decodePut(p)
	case recDelete:
		op.ids = []string{string(p)}
	case recExpire:
		op.ids, err = decodeExpire(p)
	case recDefault:
		op.old, op.def, op.at, err = decodeDefault(p)
	default:
		err = errors.New("unknown record type " + strconv.Itoa(int(typ)))
	}
	return op, err
}

// applyOp applies a change read from a log; nothing is logged or reported.
func (c *Collection) applyOp(op logOp) {
	switch op.typ {
	case recPut:
		c.applyPut(op.e)
	case recDelete, recExpire:
		for _, id := range op.ids {
			c.applyDelete(id)
		}
	case recDefault:
		c.lockAll()
		c.redefineLocked(op.old, op.def, op.at)
		c.unlockAll()
	}
}

// cleanUp removes what an interrupted compaction left: temporary snapshots
// and the files a newer snapshot replaces. It is best effort: such files
// are never read. It removes only names of the library's own forms
// (NNNNNNNNNNNNNNNN.log, .snap and .snap.tmp, sixteen digits): anything
// else in the directory (a note, a backup such as
// 0000000000000001.log.bak) is the user's, and stays.
func (d *durable) cleanUp() {
	names, err := d.fs.List(d.dir)
	if err != nil {
		return
	}
	// Only a published snapshot replaces files: without one, every log
	// is still needed (a compaction may have started a log and failed
	// before its snapshot was published).
	base := uint64(0)
	if snaps, _ := parseFiles(names); len(snaps) > 0 {
		base = snaps[len(snaps)-1]
	}
	removed := false
	for _, name := range names {
		n, ext, ok := fileNumber(name)
		stale := ext == "snap.tmp" || (n < base && (ext == "log" || ext == "snap"))
		if ok && stale {
			removed = d.fs.Remove(d.path(name)) == nil || removed
		}
	}
	if removed {
		d.fs.SyncDir(d.dir)
	}
}

// applyPut files e, as a log or snapshot says, replacing the entry with its
// id if any. It is for loading: nothing is logged or reported.
func (c *Collection) applyPut(e *entry) {
	id := e.id()
	s, h := c.shardFor(id)
	def := c.def.Load()
	var oldExp int64
	ref := s.docs.lookup(h, id)
	dDocs, dBytes := int64(1), weigh(e)
	if ref != nil {
		oldExp = ref.Load().expiry(def)
		dDocs, dBytes = 0, dBytes-weigh(ref.Load())
	}
	// Loaded past any bound: Open enforces it once everything is in.
	c.lim.docs.Add(dDocs)
	c.lim.bytes.Add(dBytes)
	c.storeLocked(s, h, e, e.expiry(def), ref, oldExp)
}

// applyDelete removes the entry with the given id, if any; see applyPut.
func (c *Collection) applyDelete(id string) {
	s, h := c.shardFor(id)
	if e := s.docs.get(h, id); e != nil {
		c.deleteLocked(s, h, e, e.expiry(c.def.Load()))
	}
}

// setCompactAt sets the log size past which the compactor runs, from the
// size of the snapshot just written (0 when there is none).
func (d *durable) setCompactAt(snapSize int64) {
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
		if err := c.d.compact(c); err != nil {
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
// snapshot is published. It holds no lock while it writes: a writer waits
// for it only while its shard is copied (8 bytes a document), a reader not
// at all, though both may wait longer on a disk busy writing the snapshot
// (a write holds its shard's lock until its record is written to the OS,
// and a reader of that shard waits for it). An error leaves the directory
// loading to the same documents. On a collection made by New it does
// nothing and returns nil. Once Close has begun it returns ErrClosed; Close
// waits for a Compact already under way (the directory stays locked until
// it ends), so a slow disk makes Close as slow as the compaction.
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
	if c.closed.Load() {
		return newError("compact", "", ErrClosed)
	}
	d.log.mu.Lock()
	num := d.log.num + 1
	d.log.mu.Unlock()
	nf, err := d.createLog(num)
	if err != nil {
		return err
	}
	seq, err := d.log.rotate(nf, num)
	if err != nil {
		nf.Close() // empty: Open removes it
		return err
	}
	live, def, etag := c.capture()
	size, err := d.writeSnapshot(num, live, def, etag, seq)
	clear(live)
	if err != nil {
		return err
	}
	d.setCompactAt(size)
	d.cleanUp()
	return nil
}

// capture returns the live documents (immutable entries: the references
// are enough), the DefaultTTL they are under, and the last _etag issued.
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
	n := 0
	for i := range c.shards {
		n += int(c.shards[i].size.Load())
	}
	live = make([]*entry, 0, n)
	var from bucket
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		live = s.index.appendLive(now, &from, live)
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
	size, err := writeSnapshotTo(f, live, def, etag, seq)
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

// writeSnapshotTo writes a snapshot's records to w in 1 MiB writes.
func writeSnapshotTo(w io.Writer, live []*entry, def int32, etag, seq uint64) (int64, error) {
	const chunk = 1 << 20
	buf := make([]byte, 0, chunk+4096)
	buf = wal.AppendHeader(buf, wal.KindSnapshot)
	buf = appendSnapInfo(buf, def, etag, seq)
	var size int64
	for _, e := range live {
		buf = appendPut(buf, e)
		if len(buf) >= chunk {
			n, err := w.Write(buf)
			size += int64(n)
			if err != nil {
				return size, err
			}
			buf = buf[:0]
		}
	}
	buf = appendSnapEnd(buf, uint64(len(live)))
	n, err := w.Write(buf)
	return size + int64(n), err
}

// synced waits, under SyncAlways, until the record lsn (0: none was
// written) is durable.
func (c *Collection) synced(lsn uint64) error {
	if lsn == 0 || c.d.log.policy != SyncAlways {
		return nil
	}
	return c.d.log.waitSynced(lsn)
}

// close stops the durable mode's goroutines (c.done is closed), waits for
// a caller's Compact under way (c.closed is set, so no other starts), syncs
// and closes the log, and releases the directory. It returns the first
// error the log met.
func (d *durable) close() error {
	d.wg.Wait()
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	err := d.log.close()
	if lerr := d.lock.Close(); err == nil && lerr != nil {
		err = &ioError{op: "unlock " + d.dir, err: lerr}
	}
	return err
}
