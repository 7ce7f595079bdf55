package ttlstore

import (
	"hash/maphash"
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
// released, and returns how many it removed. It runs on the caller's
// goroutine, alongside the background sweeper if there is one, and also
// after Close.
//
// Tests drive expiry deterministically with it: move the mock clock, then
// call Sweep. Readers never need it: expired documents are invisible
// whether or not they were swept.
func (c *Collection) Sweep() int { return c.sweep(nil) }

// sweep is Sweep; it returns early, between batches, once stop is closed.
func (c *Collection) sweep(stop <-chan struct{}) int {
	now := c.now()
	total := 0
	var b sweepBuffers
	for i := range c.shards {
		s := &c.shards[i]
		for isExpired(s.minExp.Load(), now) {
			total += c.sweepOnce(s, now, &b)
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
// reports them and returns how many there were.
func (c *Collection) sweepOnce(s *shard, now int64, b *sweepBuffers) int {
	removed := c.sweepBatch(s, now, b)
	c.swept.Add(uint64(len(removed)))
	c.views.forgetAll(removed)
	c.report(removed)
	b.clear() // let the removed documents be collected
	return len(removed)
}

// sweepBuffers is the scratch space of a sweep, reused between batches.
type sweepBuffers struct {
	batch  []slot
	hashes []uint64
}

func (b *sweepBuffers) clear() { clear(b.batch) }

// sweepBatch removes up to c.batch documents of s expired at second now,
// under s's lock, and returns them. It is the only time a sweep holds a
// lock.
func (c *Collection) sweepBatch(s *shard, now int64, b *sweepBuffers) []slot {
	s.mu.Lock()
	b.batch = s.index.popExpired(now, c.batch, b.batch[:0])
	// Hash the ids first, then delete: the loads of the entries are
	// independent of each other here, so the processor overlaps their
	// cache misses (a third less time than loading each in the delete).
	b.hashes = b.hashes[:0]
	for _, sl := range b.batch {
		b.hashes = append(b.hashes, maphash.String(c.seed, sl.e.id()))
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
	s.size.Store(int32(s.docs.len()))
	s.minExp.Store(s.index.min())
	s.mu.Unlock()
	return b.batch
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
