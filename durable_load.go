package ttlstore

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ttlstore/ttlstore/internal/vfs"
	"github.com/ttlstore/ttlstore/internal/wal"
)

// Loading a durable collection: the newest snapshot, then every log from
// it on, in order (the formats are in durable_record.go). A log with
// commit groups applies a group once its commit record is read; a log
// written before groups applies each record as it comes. The last log is
// cut after its last whole group and appended to; one without groups is
// left as it is, and the writes go on in a new one.

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
	replay, err := d.logsAfter(logs, base, found)
	if err != nil {
		return err
	}
	// The change feed reads the logs before the snapshot; replayLog
	// hands it the groups of the others.
	fl, err := d.feedOldLogs(c, logs, base)
	if err != nil {
		return err
	}
	var last replayed
	for i, n := range replay {
		rp, err := d.replayLog(c, n, fl)
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
			if err := d.dropEmptyLogs(replay[i+1:]); err != nil {
				return d.corrupt(fileName(n, wal.KindLog), rp.end, "torn, and "+err.Error())
			}
			replay = replay[:i+1]
			break
		}
	}
	if fl != nil {
		fl.finish(seq)
	}
	d.stored = found
	if found {
		// Every _etag issued before a crash is below this, even those
		// of writes whose records were lost with the OS's buffers (up to
		// 2^33 of them a shard).
		c.resumeEtags(etag + 1<<40)
	}
	if len(replay) == 0 {
		last.num = base
	}
	f, num, size, err := d.appendTo(last, len(replay) > 0)
	if err != nil {
		return err
	}
	d.log = newLogWriter(f, num, size, policy, seq)
	d.log.preamble = int64(len(d.preamble))
	d.setCompactAt(snapSize)
	return nil
}

// logsAfter returns the logs load replays: those of logs from base, the
// newest snapshot's number, on, which must follow each other with none
// missing, and start at base if there is a snapshot (snap).
func (d *durable) logsAfter(logs []uint64, base uint64, snap bool) ([]uint64, error) {
	var replay []uint64
	for _, n := range logs {
		if n >= base {
			replay = append(replay, n)
		}
	}
	if snap && (len(replay) == 0 || replay[0] != base) {
		return nil, d.corrupt(fileName(base, wal.KindLog), 0, "missing: the snapshot needs it")
	}
	for i, n := range replay {
		if n != replay[0]+uint64(i) {
			return nil, d.corrupt(fileName(replay[0]+uint64(i), wal.KindLog), 0, "missing: logs "+strconv.FormatUint(replay[0], 10)+" to "+strconv.FormatUint(n, 10)+" must all be there")
		}
	}
	return replay, nil
}

// appendTo returns the log the writes go on in, its number and its size:
// last, the last log replayed (haveLast says there was one), continued;
// or a new one, numbered last.num when there was none to replay, or after
// last when last has no commit groups.
func (d *durable) appendTo(last replayed, haveLast bool) (vfs.File, uint64, int64, error) {
	if !haveLast {
		f, err := d.createLog(last.num)
		return f, last.num, int64(len(d.preamble)), err
	}
	f, size, err := d.continueLog(last)
	if err != nil {
		return nil, 0, 0, err
	}
	d.torn = last.torn
	if f == nil {
		// A log without commit groups, written by an earlier
		// version: the writes go on in a new one.
		f, err = d.createLog(last.num + 1)
		return f, last.num + 1, int64(len(d.preamble)), err
	}
	return f, last.num, size, nil
}

// continueLog opens the last log, last, for appending: it cuts its torn
// tail (a torn record, or a group without its recCommit) and its
// preallocated zero tail, so that the next group follows the last whole
// one, and returns it with its size. A log
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
			_, err = f.Write(d.preamble)
		}
		size = int64(len(d.preamble))
	case last.torn > 0 || last.zeros > 0:
		err = f.Truncate(last.end)
	}
	if err == nil && (last.torn > 0 || last.zeros > 0 || !last.groups) {
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

// loadSnapshot loads snapshot num into c and returns the last _etag and
// sequence number it records and the snapshot's size.
func (d *durable) loadSnapshot(c *Collection, num uint64) (etag, seq uint64, size int64, err error) {
	name := fileName(num, wal.KindSnapshot)
	f, r, err := d.openReader(name, wal.KindSnapshot)
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
			def, e, s, path, ok := decodeSnapInfo(p)
			if typ != recSnapInfo || !ok {
				return 0, 0, 0, d.corrupt(name, off, "does not start with its info record")
			}
			if err := d.checkPath(name, path); err != nil {
				return 0, 0, 0, err
			}
			c.def.Store(def)
			etag, seq = e, s
			continue
		}
		switch {
		case typ == recPut || typ == recPutPK:
			e, err := decodePut(p, typ == recPutPK)
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
func (d *durable) dropEmptyLogs(nums []uint64) error {
	for _, n := range nums {
		f, r, err := d.openReader(fileName(n, wal.KindLog), wal.KindLog)
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

// applyGroup applies group, the records of a commit group, to c and hands
// it to fl (if not nil), once its recCommit p, at offset off of log name,
// is read; it counts them in rp and moves its sequence number on.
func (d *durable) applyGroup(c *Collection, fl *feedLoad, rp *replayed, name string, off int64, p []byte, group []logOp) error {
	count, seq, err := decodeCommit(p)
	switch {
	case err != nil:
		return d.corrupt(name, off, err.Error())
	case count == 0 || int(count) != len(group):
		return d.corrupt(name, off, fmt.Sprintf("commit record closes %d records, after %d", count, len(group)))
	case rp.seq != 0 && seq != rp.seq+uint64(count):
		return d.corrupt(name, off, fmt.Sprintf("commit record's sequence number %d does not follow %d by %d", seq, rp.seq, count))
	}
	for _, op := range group {
		c.applyOp(op)
	}
	if fl != nil {
		if err := d.feedGroup(c, fl, group, count, seq); err != nil {
			return d.corrupt(name, off, err.Error())
		}
	}
	rp.records += int(count)
	rp.seq = seq
	return nil
}

// lostBlock is the size of the blocks a power loss may have lost in the
// unsynced end of the last log, a disk sector: the log is appended through
// a shared mapping of its preallocated tail (vfs.Appender), whose dirty
// pages the kernel writes back in any order, so a crash can keep a later
// page and lose an earlier one, which then reads as zero bytes (vfs.Crash
// models it with pages of vfs.CrashPage). Replay takes such a hole for the
// start of the log's torn tail, whole records after it included: none of
// it was synced, since a sync writes every page before it. A torn log must
// be the last one with records (see load: every log is synced whole before
// the next takes a record), so in a log followed by one with records such
// a hole is still ErrCorrupt, as any other damage is. The cost: a sector of
// zeros inside the part of the last log that was synced (a disk that lost
// a sector it had acknowledged) reads as a torn tail, reported in
// Stats.TornBytes, instead of ErrCorrupt.
const lostBlock = 512

// replayed is what replayLog found in a log.
type replayed struct {
	num     uint64 // the log's number
	end     int64  // where its last whole group (or record, in a log without groups) ends
	torn    int64  // the bytes after end: a torn record, or a group without its recCommit
	zeros   int64  // and after those, zero bytes: a preallocated tail
	etag    uint64 // the largest _etag it holds
	seq     uint64 // the sequence number of its last recCommit; 0 if none
	groups  bool   // it starts with recLogInfo: its records are in commit groups
	records int    // the records it applied
}

// replayLog applies log num to c: each commit group once its recCommit is
// read, or in a log without groups each record as it comes; and hands each
// group to fl, the change feed's load, if not nil. A block a crash lost is
// the start of its torn tail (see lostBlock).
func (d *durable) replayLog(c *Collection, num uint64, fl *feedLoad) (replayed, error) {
	rp := replayed{num: num}
	name := fileName(num, wal.KindLog)
	f, r, err := d.openReader(name, wal.KindLog)
	if err != nil {
		return rp, err
	}
	defer f.Close()
	r.LostBlocks(lostBlock)
	rp.end = r.Offset()
	if fl != nil {
		fl.beginLog(num)
	}
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
			path, ok := decodeLogInfo(p)
			if !ok {
				return rp, d.corrupt(name, off, "log info record of an unknown format")
			}
			if err := d.checkPath(name, path); err != nil {
				return rp, err
			}
			rp.groups = true
			rp.end = r.Offset()
		case typ == recCommit && rp.groups:
			if err := d.applyGroup(c, fl, &rp, name, off, p, group); err != nil {
				return rp, err
			}
			clear(group)
			group = group[:0]
			rp.end = r.Offset()
		default:
			if !rp.groups {
				// A log from before commit groups: no partition key.
				if err := d.checkPath(name, ""); err != nil {
					return rp, err
				}
			}
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
			if fl != nil {
				fl.ungrouped()
			}
			rp.records++
			rp.end = r.Offset()
		}
	}
	rp.torn = r.Offset() + r.Torn() - rp.end
	if r.ZeroTail() {
		// The preallocated tail of a log appended through a mapping
		// (vfs.Appender), which the process did not live to cut: not
		// torn. Whole records before it without their recCommit are.
		rp.torn, rp.zeros = r.Offset()-rp.end, r.Torn()
	}
	return rp, nil
}

// logOp is a log record's change, decoded.
type logOp struct {
	typ byte
	e   *entry   // recPut: the document
	ids []string // recDelete: one id; recExpire: the ids; recPurge: the partition key's encoding
	old int32    // recDefault: the DefaultTTL before,
	def int32    // after,
	at  int64    // and the second of the change; recFeed: its second
	// items are a recFeed's changes.
	items []feedItem
}

// decodeOp decodes a record of a change (not recCommit or recLogInfo).
func decodeOp(typ byte, p []byte) (logOp, error) {
	op := logOp{typ: typ}
	var err error
	switch typ {
	case recPut, recPutPK:
		op.e, err = decodePut(p, typ == recPutPK)
	case recPurge:
		var pk string
		pk, err = decodePurge(p)
		op.ids = []string{pk}
	case recDelete:
		op.ids = []string{string(p)}
	case recExpire:
		op.ids, err = decodeExpire(p)
	case recDefault:
		op.old, op.def, op.at, err = decodeDefault(p)
	case recFeed:
		// The change feed's (feed_durable.go): nothing to apply.
		op.at, op.items, err = decodeFeedRecord(p)
	default:
		err = errors.New("unknown record type " + strconv.Itoa(int(typ)))
	}
	return op, err
}

// applyOp applies a change read from a log; nothing is logged or reported.
func (c *Collection) applyOp(op logOp) {
	switch op.typ {
	case recPut, recPutPK:
		c.applyPut(op.e)
	case recPurge:
		c.applyPurge(op.ids[0])
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

// applyPut files e, as a log or snapshot says, replacing the entry with its
// id if any. It is for loading: nothing is logged or reported.
func (c *Collection) applyPut(e *entry) {
	id := e.key()
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
