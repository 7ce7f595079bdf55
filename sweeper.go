package ttlstore

import (
	"math"
	"time"
)

// The sweeper removes expired documents from memory. Correctness never
// depends on it: every read checks expiry itself (R9). It only hands memory
// back.
//
// It waits (see waiter in clock.go) until the earliest expiry it knows of,
// but no sooner than SweepInterval after its last sweep was due, and waits
// for nothing while nothing can expire. A sweep removes everything expired
// by the time it runs, however many seconds that spans. So on a clock that
// runs by itself it wakes at most once per SweepInterval, and a jump of a
// mock clock, however long, costs one sweep.

// runSweeper is the background sweeper's goroutine, started by New and
// stopped by Close.
func (c *Collection) runSweeper() {
	defer close(c.stopped)
	// last is when the last background sweep was due (not when it ran: a
	// mock clock may jump far past it). Zero before the first.
	var last time.Time
	for {
		select {
		case <-c.done:
			return
		default:
		}
		// Tell writers "wake me for any expiry" before looking at the
		// shards, so that a document indexed while we look is either seen
		// here or wakes us (see noteExpiry).
		c.armed.Store(neverExpires)
		next := c.earliestExpiry()
		if c.purging.Load() > 0 {
			next = min(next, c.now()) // a DeletePartition to finish
		}
		if next == neverExpires {
			select {
			case <-c.done:
				return
			case <-c.wake:
				continue
			}
		}
		at, armed := wakeAt(next, last, c.interval)
		c.armed.Store(armed)
		switch c.waiter.waitUntil(at, c.wake, c.done) {
		case waitDone:
			return
		case waitWoken:
			continue
		}
		last = at
		c.sweep(c.done)
	}
}

// wakeAt says when the sweeper should sweep for the earliest expiry second
// next, given when it last swept (zero: never) and SweepInterval: at next,
// but no sooner than interval after last. armed is what writers compare
// their expiries with (see Collection.armed): next, or math.MinInt64 when
// the interval decides, since no expiry can then make the sweep come sooner.
func wakeAt(next int64, last time.Time, interval time.Duration) (at time.Time, armed int64) {
	at = time.Unix(next, 0)
	if !last.IsZero() {
		if floor := last.Add(interval); floor.After(at) {
			return floor, math.MinInt64
		}
	}
	return at, next
}

// earliestExpiry is the earliest expiry second in any shard, neverExpires
// when nothing can expire. It reads the shards' cached minimums, no locks.
func (c *Collection) earliestExpiry() int64 {
	m := neverExpires
	for i := range c.minExps {
		m = min(m, c.minExps[i].Load())
	}
	return m
}

// noteExpiry wakes the sweeper if a document just indexed expires before
// the time its timer is set for. It is called after the shard's lock is
// released, and costs one atomic load when nothing needs doing.
func (c *Collection) noteExpiry(exp int64) {
	if exp < c.armed.Load() {
		c.wakeSweeper()
	}
}

func (c *Collection) wakeSweeper() {
	select {
	case c.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// Sweep removes from memory every document expired at the current time, in
// batches of at most Options.SweepBatch per shard with the shard's lock
// released between batches, reports each to OnExpire after the lock is
// released, and returns how many it removed. It first removes, in the same
// batches, the documents DeletePartition hid (counted in what it returns,
// reported to nobody). It runs on the caller's
// goroutine, alongside the background sweeper if there is one, and also
// after Close.
//
// A durable collection logs each batch before it reports it, so that a
// restart neither brings the documents back nor reports them again: each is
// reported exactly once across clean restarts. Under SyncAlways the report
// also waits for the record's fsync (one for up to 16384 documents), so that
// not even a power loss makes one be reported twice; under the other
// policies a kill -9 cannot, a power loss can for what the OS had not
// flushed. A batch the log cannot take (after Close, or once the log has
// failed with ErrIO) is left in memory, invisible as before, for the next
// Open to sweep and report: Sweep then stops and returns what it removed.
//
// Tests drive expiry deterministically with it: move the mock clock, then
// call Sweep. Readers never need it: expired documents are invisible
// whether or not they were swept.
func (c *Collection) Sweep() int { return c.sweep(nil) }

// sweep is Sweep; it returns early, between batches, once stop is closed.
func (c *Collection) sweep(stop <-chan struct{}) int {
	now := c.now()
	total := c.purgeShards(nil)
	var b sweepBuffers
	defer c.reportHeld(&b)
	for i := range c.shards {
		s := &c.shards[i]
		for isExpired(s.minExp.Load(), now) {
			n, ok := c.sweepOnce(s, now, &b)
			total += n
			if !ok {
				return total
			}
			select {
			case <-stop:
				return total
			default:
			}
		}
	}
	return total
}

// sweepOnce removes one batch of documents of s expired at second now,
// reports them (or holds them in b for reportHeld) and returns how many
// there were. ok is false when the log refused the batch, which is left in
// place.
func (c *Collection) sweepOnce(s *shard, now int64, b *sweepBuffers) (n int, ok bool) {
	removed, ok := c.sweepBatch(s, now, b)
	if !ok {
		return 0, false
	}
	c.swept.Add(uint64(len(removed)))
	c.views.forgetAll(removed)
	if b.lsn != 0 && c.d.log.policy == SyncAlways {
		b.held = append(b.held, removed...)
		if len(b.held) >= maxHeldReports {
			c.reportHeld(b)
		}
	} else {
		c.report(removed)
	}
	b.clear() // let the removed documents be collected
	return len(removed), true
}

// maxHeldReports is how many swept documents a durable collection under
// SyncAlways holds for one fsync before it reports them.
const maxHeldReports = 16384

// sweepBuffers is the scratch space of a sweep, reused between batches.
type sweepBuffers struct {
	batch  []slot
	hashes []uint64
	// held are documents removed and logged, to be reported once the
	// record lsn is durable (SyncAlways).
	held []slot
	lsn  uint64
	recs []feedRec // the batch's records for the change feed
}

func (b *sweepBuffers) clear() {
	clear(b.batch)
	clear(b.recs)
	b.recs = b.recs[:0]
}

// feedRecs makes the change feed's records of the batch: an expiry each,
// but for what DeletePartition hid (whose delete the feed has). s.mu must
// be held.
func (b *sweepBuffers) feedRecs(s *shard, now int64) {
	b.recs = b.recs[:0]
	for _, sl := range b.batch {
		if !s.hidden(sl.e) {
			b.recs = append(b.recs, removalRec(OpDelete, sl, now))
		}
	}
}

// reportHeld waits for the records of the documents b holds to be durable,
// and reports them. If the fsync fails they are reported all the same:
// they are gone from memory, and the log has failed (ErrIO), after which a
// restart may report them again.
func (c *Collection) reportHeld(b *sweepBuffers) {
	if len(b.held) == 0 {
		return
	}
	_ = c.synced(b.lsn)
	c.report(b.held)
	clear(b.held)
	b.held = b.held[:0]
}

// sweepBatch removes up to c.batch documents of s expired at second now,
// under s's lock, and returns them. It is the only time a sweep holds a
// lock. A durable collection logs the batch under the lock, before it
// changes anything, so that the log has it in order with the writes of the
// same ids; if the log refuses it, the batch stays and ok is false.
func (c *Collection) sweepBatch(s *shard, now int64, b *sweepBuffers) (removed []slot, ok bool) {
	s.mu.Lock()
	b.batch = s.index.popExpired(now, c.batch, b.batch[:0])
	if c.feed != nil {
		b.feedRecs(s, now)
	}
	if c.d != nil && len(b.batch) > 0 {
		lsn, err := c.d.log.appendExpire(b.batch, b.recs)
		if err != nil {
			for _, sl := range b.batch {
				s.index.insert(sl.e, sl.exp)
			}
			s.mu.Unlock()
			b.clear()
			return nil, false
		}
		b.lsn = lsn
	} else if c.feed != nil {
		c.feed.record(b.recs)
	}
	// Hash the ids first, then delete: the loads of the entries are
	// independent of each other here, so the processor overlaps their
	// cache misses (a third less time than loading each in the delete).
	b.hashes = b.hashes[:0]
	for _, sl := range b.batch {
		b.hashes = append(b.hashes, keyHash(c.seed, sl.e.key()))
	}
	var weight int64
	for i, sl := range b.batch {
		s.docs.remove(b.hashes[i], sl.e)
		weight += weigh(sl.e)
	}
	c.lim.release(int64(len(b.batch)), weight)
	if c.lim.cold != nil {
		c.lim.cold.removed(b.batch)
	}
	if c.pk != nil {
		for _, sl := range b.batch {
			s.partOut(sl.e)
		}
		if ps := s.purges.Load(); ps != nil {
			// Deleted before they expired (DeletePartition): removed,
			// but not reported as expired.
			kept := b.batch[:0]
			for _, sl := range b.batch {
				if !hiddenBy(*ps, sl.e) {
					kept = append(kept, sl)
				}
			}
			clear(b.batch[len(kept):])
			b.batch = kept
		}
	}
	s.size.Store(int32(s.docs.len()))
	s.minExp.Store(s.index.min())
	s.mu.Unlock()
	return b.batch, true
}

// report passes removed documents to OnExpire. No lock may be held.
func (c *Collection) report(removed []slot) {
	if c.onExpire == nil {
		return
	}
	for _, sl := range removed {
		c.onExpire(Document(sl))
	}
}
