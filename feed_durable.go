package ttlstore

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/ttlstore/ttlstore/internal/wal"
)

// A durable collection's change feed lives in its log: each commit group
// of a collection with a feed ends, before its recCommit, with a recFeed
// record that says what the group's records mean to the feed (see
// durable_record.go for the format), and Open reads the feed back from the
// logs the directory keeps. A compaction keeps the logs before its
// snapshot while they fit in ChangeFeed.RetainBytes, so that a restart
// finds the feed the process had (cleanUp). A group without recFeed,
// written while the collection had no feed, is a gap: the feed starts
// after it, and older tokens get ErrTokenGone.
//
// The feed's id, which tokens carry, is in the file FEED, made by the first
// Open with a feed: "ttlstore feed " and 16 hex digits.

// recFeed's flags, one byte a change.
const (
	feedFlagTTL = 1 << 0 // a delete of an expired document
	feedFlagDoc = 1 << 1 // the change stores the group's next recPut
)

// appendFeedRecord appends the recFeed record of the ring's records from
// position from on (a group's, all of one second) to dst. f.mu must be
// held.
func appendFeedRecord(dst []byte, f *feed, from uint64) []byte {
	dst, start := wal.BeginRecord(dst)
	at := int64(0)
	if from < f.next {
		at = f.at(from).at
	}
	dst = le.AppendUint64(dst, uint64(at))
	for p := from; p < f.next; p++ {
		r := f.at(p)
		flags := byte(0)
		if r.ttl {
			flags |= feedFlagTTL
		}
		if r.e != nil {
			flags |= feedFlagDoc
		}
		dst = append(dst, byte(r.op), flags)
		dst = le.AppendUint64(dst, r.prevEtag)
		if r.e == nil {
			dst = binary.AppendUvarint(dst, uint64(len(r.key)))
			dst = append(dst, r.key...)
		}
	}
	return wal.EndRecord(dst, start, recFeed)
}

// feedItem is a change as recFeed has it.
type feedItem struct {
	op       ChangeOp
	flags    byte
	prevEtag uint64
	key      string // when the change stores no document
}

// decodeFeedRecord decodes a recFeed payload.
func decodeFeedRecord(p []byte) (at int64, items []feedItem, err error) {
	if len(p) < 8 {
		return 0, nil, errors.New("feed record too short")
	}
	at, p = int64(le.Uint64(p)), p[8:]
	for len(p) > 0 {
		if len(p) < 10 {
			return 0, nil, errors.New("feed record cut in a change")
		}
		it := feedItem{op: ChangeOp(p[0]), flags: p[1], prevEtag: le.Uint64(p[2:])}
		p = p[10:]
		if it.op < OpCreate || it.op > OpLoaded || it.flags&^(feedFlagTTL|feedFlagDoc) != 0 {
			return 0, nil, errors.New("feed record with an unknown change")
		}
		if it.flags&feedFlagDoc == 0 {
			n, k := binary.Uvarint(p)
			if k <= 0 || n > maxKeyLen || uint64(len(p)-k) < n {
				return 0, nil, errors.New("feed record with a bad key")
			}
			it.key, p = string(p[k:k+int(n)]), p[k+int(n):]
		}
		items = append(items, it)
	}
	return at, items, nil
}

// feedLoad rebuilds a feed at Open from the directory's logs, in order:
// the logs before the snapshot that compaction kept for the feed, which
// feedLog reads, then those load replays, whose groups replayLog hands over
// with the entries it stored (shared, not decoded twice). It runs before
// the collection is shared, and takes no lock.
type feedLoad struct {
	f       *feed
	last    map[string]*entry // each key's last version, for Previous
	started bool              // whether a group was seen since the last gap
	prev    uint64            // the last log begun; 0 for none
	puts    []*entry          // scratch for feedGroup
}

func newFeedLoad(f *feed) *feedLoad {
	f.visible = ^uint64(0) // retention may drop from the start while loading
	return &feedLoad{f: f, last: map[string]*entry{}}
}

// beginLog starts log num: a log missing before it is a gap, and the feed
// starts again at this one's first group.
func (fl *feedLoad) beginLog(num uint64) {
	if fl.prev != 0 && num != fl.prev+1 {
		fl.f.dropAllLocked()
		fl.started = false
	}
	fl.prev = num
}

// group takes a commit group of count records ending at seq: its recFeed's
// changes (at, items) if it had one (hasFeed), and its documents, puts, in
// order, under the DefaultTTL def.
func (fl *feedLoad) group(seq uint64, count uint32, hasFeed bool, at int64, items []feedItem, puts []*entry, def int32) error {
	f := fl.f
	if !fl.started {
		fl.started = true
		f.gone, f.goneN = seq-uint64(count), 0
	}
	if !hasFeed {
		// Written without a feed: what the ring holds is no longer
		// all there is after it.
		f.dropAllLocked()
		f.gone, f.goneN = seq, 0
		return nil
	}
	return f.pushItems(seq, at, items, puts, def, fl.last)
}

// ungrouped takes a record of a log written before commit groups, which
// has no feed: a gap.
func (fl *feedLoad) ungrouped() {
	fl.f.dropAllLocked()
	fl.started = false
}

// finish ends the load: the feed goes on from seq, the log's last
// sequence number.
func (fl *feedLoad) finish(seq uint64) {
	f := fl.f
	if !fl.started {
		f.dropAllLocked()
		f.gone, f.goneN = seq, 0
	}
	f.visible, f.seq = seq, seq
}

// dropAllLocked empties the ring: what it held is gone. f.mu must be held.
func (f *feed) dropAllLocked() {
	for f.first < f.next {
		r := f.at(f.first)
		if r.lsn != f.gone {
			f.gone, f.goneN = r.lsn, 0
		}
		f.goneN++
		*r = feedRec{}
		f.first++
	}
	f.bytes = 0
}

// feedLog hands fl the commit groups of log num, a log before the
// snapshot that load does not replay.
func (d *durable) feedLog(c *Collection, fl *feedLoad, num uint64) error {
	name := fileName(num, wal.KindLog)
	file, r, err := d.openReader(name, wal.KindLog)
	if err != nil {
		return err
	}
	defer file.Close()
	fl.beginLog(num)
	def := c.def.Load()
	var puts []*entry
	var items []feedItem
	var at int64
	hasFeed := false
	for {
		off := r.Offset()
		typ, p, err := r.Next()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return d.readError(name, err)
		}
		switch typ {
		case recLogInfo:
		case recPut, recPutPK:
			if e := c.storedVersion(p, typ == recPutPK); e != nil {
				puts = append(puts, e) // shared with the table, not decoded again
				continue
			}
			e, err := decodePut(p, typ == recPutPK)
			if err != nil {
				return d.corrupt(name, off, err.Error())
			}
			puts = append(puts, e)
		case recFeed:
			if at, items, err = decodeFeedRecord(p); err != nil {
				return d.corrupt(name, off, err.Error())
			}
			hasFeed = true
		case recCommit:
			count, seq, err := decodeCommit(p)
			if err != nil {
				return d.corrupt(name, off, err.Error())
			}
			if err := fl.group(seq, count, hasFeed, at, items, puts, def); err != nil {
				return d.corrupt(name, off, err.Error())
			}
			clear(puts)
			puts, items, hasFeed = puts[:0], nil, false
		}
	}
}

// pushItems pushes the changes of a group whose documents are puts, in
// order. f.mu must be held.
func (f *feed) pushItems(lsn uint64, at int64, items []feedItem, puts []*entry, def int32, last map[string]*entry) error {
	for _, it := range items {
		r := feedRec{lsn: lsn, at: at, op: it.op, ttl: it.flags&feedFlagTTL != 0, prevEtag: it.prevEtag, key: it.key}
		if it.flags&feedFlagDoc != 0 {
			if len(puts) == 0 {
				return errors.New("feed record names more documents than its group holds")
			}
			r.e, r.exp, puts = puts[0], puts[0].expiry(def), puts[1:]
			r.key = r.e.key()
		}
		if old := last[r.key]; old != nil && old.etag == r.prevEtag && r.op != OpCreate && r.op != OpLoaded {
			r.old, r.oldExp = old, old.expiry(def)
		}
		if r.e != nil {
			last[r.key] = r.e
		} else {
			delete(last, r.key)
		}
		f.pushLocked(r)
	}
	return nil
}

// feedID returns the feed's id from the directory's FEED file, making the
// file with a new id if there is none.
func (d *durable) feedID() (uint64, error) {
	const name, prefix = "FEED", "ttlstore feed "
	if f, err := d.fs.Open(d.path(name)); err == nil {
		b, err := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		if err != nil {
			return 0, &ioError{op: "read " + d.path(name), err: err}
		}
		s := string(b)
		if len(s) != len(prefix)+17 || s[:len(prefix)] != prefix || s[len(s)-1] != '\n' {
			return 0, d.corrupt(name, 0, "not a feed id")
		}
		id, err := strconv.ParseUint(s[len(prefix):len(s)-1], 16, 64)
		if err != nil {
			return 0, d.corrupt(name, 0, "not a feed id")
		}
		return id, nil
	}
	id := rand.Uint64()
	b := []byte(prefix + string(etagDigitsOf(id)) + "\n")
	tmp := d.path(name + ".tmp")
	f, err := d.fs.Create(tmp)
	if err == nil {
		_, err = f.Write(b)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = d.fs.Rename(tmp, d.path(name))
	}
	if err == nil {
		err = d.fs.SyncDir(d.dir)
	}
	if err != nil {
		d.fs.Remove(tmp)
		return 0, &ioError{op: "write " + d.path(name), err: err}
	}
	return id, nil
}

// etagDigitsOf is etagDigits as a slice.
func etagDigitsOf(n uint64) []byte {
	d := etagDigits(n)
	return d[:]
}

// feedKept returns, of the logs before base, newest first, those whose
// sizes add up to at most keep: the logs a compaction keeps for the feed.
func (d *durable) feedKept(logs []uint64, base uint64, keep int64) map[uint64]bool {
	kept := map[uint64]bool{}
	var total int64
	for i := len(logs) - 1; i >= 0; i-- {
		n := logs[i]
		if n >= base {
			continue
		}
		if len(kept) > 0 && !kept[n+1] {
			break // a gap: older logs are no use
		}
		if len(kept) == 0 && n+1 != base {
			break
		}
		f, err := d.fs.Open(d.path(fileName(n, wal.KindLog)))
		var size int64
		if err == nil {
			size, err = f.Size()
			f.Close()
		}
		if err != nil {
			kept[n] = true // size unknown: keep it rather than lose changes
			continue
		}
		if total+size > keep {
			break
		}
		total += size
		kept[n] = true
	}
	return kept
}

// openFeed gives c's feed, which load has filled, its id, and the log the
// feed to fill from now on.
func (d *durable) openFeed(c *Collection) error {
	f := c.feed
	id, err := d.feedID()
	if err != nil {
		return err
	}
	f.id = id
	d.feedKeep = f.retainBytes
	d.log.feed = f
	return nil
}

// storedVersion returns the entry c stores that the recPut (or recPutPK)
// payload p is the record of, if c stores that version still: the feed
// then shares it rather than decode a copy. It returns nil for anything
// else, a malformed p included (decodePut says what is wrong). For Open,
// before c is shared: it takes no lock.
func (c *Collection) storedVersion(p []byte, pk bool) *entry {
	hs := putHeaderSize
	if pk {
		hs += 2
	}
	if len(p) < hs+2 {
		return nil
	}
	etag := le.Uint64(p[8:])
	idOff, idLen := uint64(le.Uint32(p[20:])), uint64(le.Uint32(p[24:]))
	data := p[hs:]
	if idLen == 0 || idOff+idLen > uint64(len(data)) {
		return nil
	}
	key := unsafe.String(&data[idOff], int(idLen)) // only looked up
	s, h := c.shardFor(key)
	if e := s.docs.get(h, key); e != nil && e.etag == etag {
		return e
	}
	return nil
}

// feedGroup hands fl a group replayLog applied: its recFeed's changes and
// the entries it stored.
func (d *durable) feedGroup(c *Collection, fl *feedLoad, group []logOp, count uint32, seq uint64) error {
	puts := fl.puts[:0]
	var items []feedItem
	var at int64
	hasFeed := false
	for _, op := range group {
		switch op.typ {
		case recPut, recPutPK:
			puts = append(puts, op.e)
		case recFeed:
			at, items, hasFeed = op.at, op.items, true
		}
	}
	err := fl.group(seq, count, hasFeed, at, items, puts, c.def.Load())
	clear(puts)
	fl.puts = puts
	return err
}

// feedOldLogs starts the load of c's change feed (nil without one) with the
// logs before base, the snapshot, which load does not replay.
func (d *durable) feedOldLogs(c *Collection, logs []uint64, base uint64) (*feedLoad, error) {
	if c.feed == nil {
		return nil, nil
	}
	fl := newFeedLoad(c.feed)
	for _, n := range logs {
		if n < base {
			if err := d.feedLog(c, fl, n); err != nil {
				return nil, err
			}
		}
	}
	return fl, nil
}
