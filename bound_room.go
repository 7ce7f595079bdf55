package ttlstore

// Making room for a write: the room a write holds, and how it gets it.
// makeRoomLocked evicts under the writer's own shard lock when nothing has
// expired; otherwise makeRoom, with no lock held, sweeps expired documents
// first (sweepForRoom), then evicts as the policy says (bound_evict.go),
// and waits for writes in progress when it finds nothing to evict (see
// limits.filing). What it promises: the room made for a write is that
// write's alone until it fills it or gives it back (give); a write that
// evicting all the policy may evict could not serve is refused before it
// evicts (canMake), but in a race (see EvictionPolicy); and what is swept
// or evicted for a write is reported exactly once (reportEvicted), at the
// write's end, when it holds no lock, no room and no count in
// limits.filing, so that OnExpire and OnEvict may write in turn.

// room is what makeRoom freed for one write: documents and weight that
// stay counted as used, for the write alone to fill (no other writer can
// take them), and the log position of the last eviction, which the write
// must wait for as it waits for its own record.
type room struct {
	docs, bytes int64
	lsn         uint64
	// evicted and more are the documents removed for the write and not
	// yet reported (reportEvicted): the first in evicted (its e nil when
	// there is none), so that a write that evicts one allocates nothing
	// for it, and the others in more. They are reported once the write
	// holds nothing, at its end, whatever it made of them.
	evicted removal
	more    []removal
	// now is the second the write's evictions are judged at: an evicted
	// document expired then goes to OnExpire.
	now int64
	// pick is a victim that EvictColdest picked for a write holding its
	// own shard's lock, which found the victim's shard's lock taken:
	// makeRoom evicts it once the write has let go of its own.
	pick *entry
	// counted is whether r's room counts in limits.filing (see take).
	counted bool
	// keep is the ids, besides the one makeRoom is given, that the room
	// is for and that must not be evicted to make it: a batch's other
	// documents. Nil for a write of one document.
	keep map[string]struct{}
	// covered is set while makeRoomLocked works for a write that holds
	// its shard's lock and its own count in limits.filing (startFiling):
	// that count stands for the room r takes and for the victims picked
	// meanwhile, which then do not count on their own, saving six atomic
	// additions to a contended cache line. uncover counts what is left
	// when the write lets go of its lock without filling the room.
	covered bool
}

// removal is a document removed for a write, to be reported: to OnExpire
// if it had expired when it was removed, to OnEvict otherwise.
type removal struct {
	slot
	expired bool
	hidden  bool // deleted by DeletePartition before it was removed: reported to no one
}

// removed adds a removal to those r reports.
func (r *room) removed(rm removal) {
	if r.evicted.e == nil {
		r.evicted = rm
	} else {
		r.more = append(r.more, rm)
	}
}

// take adds the room of one evicted document of weight w to r. Until the
// write fills or gives it back (give), it counts in limits.filing, room
// that no victim stands for, unless r is covered.
func (r *room) take(l *limits, w int64) {
	if !r.counted && !r.covered {
		l.filing.Add(1)
		r.counted = true
	}
	r.docs++
	r.bytes += w
}

// uncover ends r's cover: the room it holds and its pick count in
// limits.filing from now on. It is called before the write's own count
// ends (stopFiling), so that filing does not drop to 0 between the two.
func (r *room) uncover(l *limits) {
	r.covered = false
	n := int64(0)
	if r.held() != 0 && !r.counted {
		r.counted = true
		n++
	}
	if r.pick != nil {
		n++
	}
	if n != 0 {
		l.filing.Add(n)
	}
}

// endPick ends the count of a victim EvictColdest picked for r, which is
// evicted or put back.
func (r *room) endPick(l *limits) {
	if !r.covered {
		l.endFiling()
	}
}

// held is 1 if r holds room, else 0.
func (r *room) held() int64 {
	if r.docs != 0 || r.bytes != 0 {
		return 1
	}
	return 0
}

// give hands r's room over: to the usage it is counted in already, for the
// write that fills it, or back to everyone with release as well.
func (r *room) give(l *limits) {
	if r.counted {
		l.endFiling()
		r.counted = false
	}
	r.docs, r.bytes = 0, 0
}

// makeRoom frees what a write of dDocs more documents and dBytes more
// weight to the document with the given id needs (beyond what r holds
// already): expired documents first, then live ones as the policy says,
// never the document id itself, and none when evicting all it may would
// not make the room (canMake, with pinned). A write that replaces in place
// revDocs versions that have expired, of revBytes weight (see
// commit.revDocs), is judged as it would be with those versions swept
// (limits.fits), whether or not the sweep takes them, so that the
// order in which it sweeps the shards does not decide the outcome. What
// it frees is added to r,
// and what it removes to r's removals, which the caller reports once it
// holds nothing (reportEvicted). dDocs and dBytes of -1 (shrink) ask for
// the usage to come within the bounds. It holds no lock when called, and
// takes one shard's lock at a time. It returns ErrFull when no room can
// be made.
func (c *Collection) makeRoom(op, id string, dDocs, dBytes, pinned, revDocs, revBytes int64, r *room) error {
	if v := r.pick; v != nil {
		// Picked by makeRoomLocked, when nothing had expired: evict it
		// as that would have.
		r.pick = nil
		if _, err := c.evictPicked(nil, v, r); err != nil {
			return err
		}
	}
	enough := func() bool { return c.lim.fits(dDocs, dBytes, revDocs, revBytes, r) }
	if dDocs == -1 && dBytes == -1 {
		enough = func() bool { return c.lim.within(r) }
	}
	now := c.now()
	if c.sweepForRoom(now, enough, r) {
		return nil // the caller reserves it, if no other writer did first
	}
	if c.lim.policy == NoEviction {
		return c.lim.fullError(op, id, dDocs-r.docs, dBytes-r.bytes)
	}
	r.now = now
	for !enough() {
		if !c.lim.canMake(dDocs, dBytes, pinned) {
			// Evicting all that may be evicted would not make the
			// room: refuse before evicting (more).
			return c.lim.fullError(op, id, dDocs-r.docs, dBytes-r.bytes)
		}
		filed := c.lim.filed.Load()
		var ok bool
		var err error
		switch c.lim.policy {
		case EvictColdest:
			ok, err = c.evictColdest(nil, id, r)
		case EvictSoonestExpiry:
			ok, err = c.evictSoonest(nil, id, r)
		}
		if err != nil {
			return err
		}
		if !ok {
			// Nothing to evict now. Room can be held by writes that
			// no victim stands for yet, between their reservation and
			// their filing (writing their log record, say), or holding
			// room evicted for them. Give back what this write holds,
			// in case another needs it to finish, wait for them, and
			// look again. With none, the bound is held by what may not
			// be evicted.
			c.lim.roomMu.Lock()
			if r.held() != 0 {
				c.lim.release(r.docs, r.bytes)
				r.give(&c.lim)
				c.lim.done.Broadcast()
			}
			c.lim.waiting.Add(1)
			wait := c.lim.filing.Load() > 0 || c.lim.filed.Load() != filed
			if wait && c.lim.filed.Load() == filed {
				c.lim.done.Wait() // releases roomMu meanwhile
			}
			c.lim.waiting.Add(-1)
			c.lim.roomMu.Unlock()
			if wait {
				continue
			}
			return c.lim.fullError(op, id, dDocs-r.docs, dBytes-r.bytes)
		}
	}
	return nil
}

// makeRoomLocked is makeRoom for a write at second now that holds s.mu,
// the lock of its id's shard, as far as it can go without letting go of
// it, which spares the write a second lookup of its id: when nothing has
// expired (the floor says so), the policy evicts and evicting can make
// the room (canMake, with pinned), it evicts as the policy says and
// reserves dDocs and dBytes, counting what r holds, as reserve does. It
// evicts a document of another shard only if that shard's lock is free
// (TryLock): to wait for it while holding s.mu could deadlock. It reports
// whether the write has its room. If not, the caller lets go of s.mu and
// calls makeRoom, which carries on with what r holds. Either way, what it
// evicted is in r's removals, to be reported at the write's end.
func (c *Collection) makeRoomLocked(s *shard, id string, dDocs, dBytes, pinned, now int64, r *room) (bool, error) {
	// (What DeletePartition hid goes before any eviction: makeRoom
	// removes it.)
	if c.lim.policy == NoEviction || c.purging.Load() > 0 || c.lim.floor.expiredBy(now) || !c.lim.canMake(dDocs, dBytes, pinned) {
		return false, nil
	}
	r.now = now
	r.covered = true
	for {
		var ok bool
		var err error
		switch c.lim.policy {
		case EvictColdest:
			ok, err = c.evictColdest(s, id, r)
		case EvictSoonestExpiry:
			ok, err = c.evictSoonest(s, id, r)
		}
		if !ok || err != nil {
			r.uncover(&c.lim)
			return false, err
		}
		if c.lim.reserve(dDocs, dBytes, r) {
			r.covered = false // the write gives r's room to its reservation
			return true, nil
		}
	}
}

// sweepForRoom sweeps expired documents, a batch at a time, until enough
// reports true, none is left expired at second now or a durable log
// refuses a batch, and returns what enough then reports. What it sweeps is
// added to r's removals, to be reported once the write holds nothing (r
// may hold room already) and, like its evictions, once the log records
// are synced as the write's own is (r.lsn).
func (c *Collection) sweepForRoom(now int64, enough func() bool, r *room) bool {
	if enough() {
		return true
	}
	// What DeletePartition hid goes first: it is reported to no one.
	if c.purgeShards(enough) > 0 && enough() {
		return true
	}
	// One atomic load when nothing has expired; the shards' minima, and
	// a floor raised to them, when something may have.
	if !c.lim.floor.expiredBy(now) || !isExpired(c.lim.floor.refresh(c.earliestExpiry), now) {
		return false
	}
	var b sweepBuffers
	for i := range c.shards {
		s := &c.shards[i]
		for isExpired(s.minExp.Load(), now) {
			removed, ok := c.sweepBatch(s, now, &b)
			if !ok {
				return enough() // the log refused the batch: it stays
			}
			// The write waits for the batch's record as for its
			// evictions', and reports after (SyncAlways: once durable).
			r.lsn = max(r.lsn, b.lsn)
			for _, sl := range removed {
				r.removed(removal{slot: sl, expired: true})
			}
			b.clear()
			if enough() {
				return true
			}
		}
	}
	return enough()
}

// reportEvicted reports the documents removed for r: to OnExpire those
// swept, or evicted once expired, to OnEvict the others. The caller must
// hold no lock, and r no room, pick or cover, nor may the caller's own
// write count in limits.filing: the callbacks may write, and wait for room
// (see limits.filing). It costs a write that removed nothing a comparison
// (it is inlined).
func (c *Collection) reportEvicted(r *room) {
	if r.evicted.e != nil {
		c.reportEvictions(r)
	}
}

func (c *Collection) reportEvictions(r *room) {
	if r.counted || r.covered || r.pick != nil || r.held() != 0 {
		// A callback that waited for room now could wait forever.
		panic("ttlstore: internal error: reporting evictions while holding room")
	}
	c.reportEvictedOne(r.evicted)
	r.evicted = removal{}
	for _, rm := range r.more {
		c.reportEvictedOne(rm)
	}
	clear(r.more)
	r.more = r.more[:0]
}

func (c *Collection) reportEvictedOne(rm removal) {
	c.views.forget(rm.e)
	if rm.hidden {
		return
	}
	if rm.expired {
		c.swept.Add(1)
		if c.onExpire != nil {
			c.onExpire(Document(rm.slot))
		}
		return
	}
	c.lim.evicted.Add(1)
	c.lim.evictedBytes.Add(uint64(weigh(rm.e)))
	if c.onEvict != nil {
		c.onEvict(Document(rm.slot))
	}
}
