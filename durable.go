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
	torn       int64  // bytes of torn tail cut from the last log at Open
	stored     bool   // Open found records or a snapshot
	minCompact int64  // compactMinBytes, or less in tests
	pkPath     string // Options.PartitionKeyPath, which the files record
	preamble   []byte // what a new log starts with (logPreambleFor)
	feedKeep   int64  // the bytes of old logs kept for the change feed; 0 without one

	compactMu sync.Mutex     // one compaction at a time; it protects snapSize
	snapSize  int64          // the size of the newest snapshot (0: none)
	wg        sync.WaitGroup // the syncer, the compactor and the zeroer
}

// checkPath returns the error of Open for a directory whose file name
// recorded the partition key path path, if it is not the one opened with.
func (d *durable) checkPath(name, path string) error {
	if path == d.pkPath {
		return nil
	}
	has := "no PartitionKeyPath"
	if path != "" {
		has = "PartitionKeyPath " + strconv.Quote(path)
	}
	return newErrorDetail("open", "", ErrInvalidOptions, "PartitionKeyPath "+strconv.Quote(d.pkPath)+
		", but the directory's collection has "+has+" ("+name+"): a partition key path cannot change")
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
// A torn tail at the very end of the log (a record a crash tore, or a
// commit group a crash or a full disk cut short: writes no caller was told
// had succeeded) is cut off; Stats.TornBytes says how many bytes. Any other damage makes Open fail with ErrCorrupt, naming the file
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
	d := &durable{fs: fsys, dir: dir, lock: lock, minCompact: minCompact, pkPath: opts.PartitionKeyPath}
	d.preamble = logPreambleFor(d.pkPath)
	if err := d.load(c, opts.Sync); err != nil {
		lock.Close()
		return nil, err
	}
	c.d = d
	if c.feed != nil {
		if err := d.openFeed(c); err != nil {
			d.log.close()
			lock.Close()
			return nil, err
		}
	}
	if def != c.def.Load() && !(keepDefault && d.stored) {
		if err := c.SetDefaultTTL(ttlPointer(def)); err != nil {
			d.log.close()
			lock.Close()
			return nil, err
		}
	}
	d.cleanUp(0)
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
	d.wg.Add(2)
	go c.runCompactor()
	go d.log.runZeroer(c.done, &d.wg)
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

// createLog creates log num with its preamble, durable (directory entry
// included) before it returns.
func (d *durable) createLog(num uint64) (vfs.File, error) {
	name := d.path(fileName(num, wal.KindLog))
	f, err := d.fs.Create(name)
	if err != nil {
		return nil, &ioError{op: "create " + name, err: err}
	}
	_, err = f.Write(d.preamble)
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

// openReader opens file name for reading with a wal reader of kind, whose
// limit on a record's length is maxRecord, the format's.
func (d *durable) openReader(name string, kind wal.Kind) (vfs.File, *wal.Reader, error) {
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

// synced waits, under SyncAlways, until the record lsn (0: none was
// written) is durable. Before that, with no lock held, the writer
// preallocates the log itself if the zeroer has fallen behind (catchUp).
func (c *Collection) synced(lsn uint64) error {
	if lsn == 0 {
		return nil
	}
	l := c.d.log
	if l.behind.Load() {
		l.catchUp()
	}
	if l.policy != SyncAlways {
		return nil
	}
	return l.waitSynced(lsn)
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
