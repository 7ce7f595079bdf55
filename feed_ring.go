package ttlstore

import (
	"sync"
	"sync/atomic"
)

// What the change feed keeps (the API is in feed.go): a ring of change
// records in sequence order, bounded in bytes and in age, which writers
// fill at the log stage and readers copy from.
//
// Every change has the sequence number (LSN) of the commit, sweep batch or
// removal it belongs to: in a durable collection the log position of its
// record group (durable_log.go), in memory a counter of the feed's own. The
// records of one LSN are pushed together, under the lock that gives the
// LSN (the log's mutex in a durable collection, the feed's in memory), so
// the ring is in LSN order. A reader sees the records up to visible: in
// memory every record pushed; in a durable collection those the log has
// handed to the operating system, or under SyncAlways those it has
// fsynced, so that the feed never shows a change that a crash could undo
// (see FeedRequest).
//
// Lock order: shard.mu, then logWriter.mu, then feed.mu.

// feedRec is one change in the ring.
type feedRec struct {
	lsn      uint64
	at       int64  // the commit's second (crts)
	key      string // the document's key (its partition key's encoding, then its id)
	e        *entry // the new version: create, replace, loaded
	exp      int64  // its expiry
	old      *entry // the version replaced or removed, when known
	oldExp   int64
	prevEtag uint64 // old's _etag, kept apart: old is not known after a restart
	op       ChangeOp
	ttl      bool  // a delete because the version expired
	size     int32 // what the record counts against RetainBytes
}

// feedRecBytes is what a record costs the ring beside the entries it holds:
// its slot, and the slot's share of a ring that is at most half empty.
const feedRecBytes = 2 * 96

// feed is a collection's change feed.
type feed struct {
	id          uint64 // names the collection in tokens
	retainBytes int64
	retainFor   int64 // seconds; 0 for no bound in time

	// mu protects everything below.
	mu    sync.Mutex
	recs  []feedRec // the ring, a power of two long
	first uint64    // position of the oldest record kept
	next  uint64    // position of the next record pushed
	bytes int64     // what the kept records count
	seq   uint64    // the last LSN given out (in memory)
	// visible is the LSN up to which readers may read.
	visible uint64
	// gone and goneN name the newest LSN retention dropped, and how
	// many records it had: a token before them has lost changes.
	gone  uint64
	goneN uint32
	err   error // why the feed stopped for good (the log failed), or ErrClosed
	// changed is closed, and replaced, when records become visible while
	// waiting > 0.
	changed chan struct{}

	// Apart from the fields above, which writers write with every
	// change: readers poll published, and waiting is theirs to write.
	_       [64]byte
	waiting atomic.Int32
	_       [60]byte
	// published is visible, for readers to watch without the lock.
	published atomic.Uint64
	_         [56]byte
}

func newFeed(id uint64, retainBytes, retainFor int64) *feed {
	return &feed{id: id, retainBytes: retainBytes, retainFor: retainFor,
		recs: make([]feedRec, 64), changed: make(chan struct{})}
}

// push adds r, of LSN lsn, at second now, dropping the oldest visible
// records that retention no longer keeps. f.mu must be held.
func (f *feed) pushLocked(r feedRec) {
	if f.next-f.first == uint64(len(f.recs)) {
		f.grow()
	}
	r.size = feedRecBytes
	if r.e != nil {
		r.size += int32(allocSize(entrySize + r.e.size()))
	}
	if r.old != nil {
		r.size += int32(allocSize(entrySize + r.old.size()))
	}
	if r.key == "" {
		if r.e != nil {
			r.key = r.e.key()
		} else if r.old != nil {
			r.key = r.old.key()
		}
	}
	f.recs[f.next&uint64(len(f.recs)-1)] = r
	f.next++
	f.bytes += int64(r.size)
	f.trimLocked(r.at)
}

// grow doubles the ring.
func (f *feed) grow() {
	recs := make([]feedRec, 2*len(f.recs))
	for p := f.first; p < f.next; p++ {
		recs[p&uint64(len(recs)-1)] = f.recs[p&uint64(len(f.recs)-1)]
	}
	f.recs = recs
}

// at returns the record at position p, which must be kept.
func (f *feed) at(p uint64) *feedRec { return &f.recs[p&uint64(len(f.recs)-1)] }

// trimLocked drops the oldest records, a whole LSN at a time, while the
// ring holds more than retainBytes or records older than retainFor at
// second now; it drops only visible ones. f.mu must be held.
func (f *feed) trimLocked(now int64) {
	for f.first < f.next {
		r := f.at(f.first)
		over := f.bytes > f.retainBytes || (f.retainFor > 0 && r.at < now-f.retainFor)
		if !over || r.lsn > f.visible {
			return
		}
		lsn, n := r.lsn, uint32(0)
		for f.first < f.next && f.at(f.first).lsn == lsn {
			r := f.at(f.first)
			f.bytes -= int64(r.size)
			r.key, r.e, r.old = "", nil, nil // what it held may go; the rest is overwritten
			f.first++
			n++
		}
		if lsn == f.gone {
			n += f.goneN // a group that a restart left split (see rebuild)
		}
		f.gone, f.goneN = lsn, n
	}
}

// publishLocked makes the records up to lsn visible and wakes waiting
// readers. f.mu must be held.
func (f *feed) publishLocked(lsn uint64) {
	if lsn <= f.visible {
		return
	}
	f.visible = lsn
	f.published.Store(lsn)
	if f.waiting.Load() > 0 {
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

// publish is publishLocked for the log, which calls it without f.mu.
func (f *feed) publish(lsn uint64) {
	f.mu.Lock()
	f.publishLocked(lsn)
	f.mu.Unlock()
}

// stop ends the feed with err: readers get it once they have read what is
// visible. The first error stays.
func (f *feed) stop(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// begin starts the records of an in-memory collection's next LSN, which it
// returns, taking f.mu; end publishes them and lets go of it.
func (f *feed) begin() uint64 {
	f.mu.Lock()
	f.seq++
	return f.seq
}

func (f *feed) end() {
	f.publishLocked(f.seq)
	f.mu.Unlock()
}

// commitRecs pushes the changes of cm, whose LSN is lsn: for each
// mutation, the expiry of the expired document it replaced, if any, then
// what it did. f.mu must be held.
func (f *feed) commitRecs(cm *commit, lsn uint64) {
	ms := cm.muts()
	for i := range ms {
		m := &ms[i]
		switch m.kind {
		case read:
			continue
		case del:
			f.pushLocked(feedRec{lsn: lsn, at: cm.now, op: OpDelete, old: m.old, oldExp: m.oldExp, prevEtag: m.old.etag})
			continue
		}
		r := feedRec{lsn: lsn, at: cm.now, op: OpCreate, e: m.e, exp: m.exp}
		if m.oldLive {
			r.op, r.old, r.oldExp, r.prevEtag = OpReplace, m.old, m.oldExp, m.old.etag
		} else if m.prev == 0 && m.old != nil && !m.oldHidden {
			// Replaced after it expired: its expiry is a change of its own.
			f.pushLocked(feedRec{lsn: lsn, at: cm.now, op: OpDelete, ttl: true, old: m.old, oldExp: m.oldExp, prevEtag: m.old.etag})
		}
		if cm.op == opLoad {
			r.op = OpLoaded
		}
		f.pushLocked(r)
	}
}

// removalRec is the record of sl's removal at second now: an expiry if it
// had expired then, otherwise op's (OpDelete, OpEvicted).
func removalRec(op ChangeOp, sl slot, now int64) feedRec {
	r := feedRec{at: now, op: op, old: sl.e, oldExp: sl.exp, prevEtag: sl.e.etag}
	if isExpired(sl.exp, now) {
		r.op, r.ttl = OpDelete, true
	}
	return r
}

// pushAll pushes recs with LSN lsn. f.mu must be held.
func (f *feed) pushAll(lsn uint64, recs []feedRec) {
	for _, r := range recs {
		r.lsn = lsn
		f.pushLocked(r)
	}
}

// record adds recs, the changes of one removal that no log holds (an
// in-memory collection's), with an LSN of their own.
func (f *feed) record(recs []feedRec) {
	if len(recs) == 0 {
		return
	}
	lsn := f.begin()
	f.pushAll(lsn, recs)
	f.end()
}
