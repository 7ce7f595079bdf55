package ttlstore

import "errors"

// The stages of the write pipeline (commit.go) after check: reserve (the
// bound's), log and wait (the durable log's), apply, notify (the sweeper's
// and the typed views'), the report (the callbacks'), and abandon, which
// ends a commit a stage refused. Each takes a commit of one mutation, the
// common case, without a loop.

// reserve is the bound's stage: it takes from the budget the room cm adds
// (counting the room evicted for it already), evicting under cm's lock when
// the policy allows and nothing has expired. When it cannot, it lets go of
// the locks, makes room without them and returns retry, for the commit to
// lock and check again; or it returns the error that ends the commit
// (ErrFull), the locks let go. It costs an unbounded collection two
// comparisons, and commits that add nothing (Delete, Touch) nothing.
func (c *Collection) reserve(cm *commit) (retry bool, err error) {
	if !cm.grows {
		return false, nil
	}
	if c.lim.policy != NoEviction {
		c.lim.startFiling()
		cm.filing = true
	}
	if !c.lim.reserve(cm.dDocs, cm.dBytes, &cm.r) {
		// pinned is what the commit leaves that the policy may not
		// evict for it (see canMake): its own documents, which take
		// the place of their ids' current ones, and those it reads or
		// touches.
		ms := cm.muts()
		var pinned int64
		for i := range ms {
			m := &ms[i]
			if (m.kind == read || m.kind == touch) && m.prev == 0 && m.oldLive {
				pinned += weigh(m.old)
			}
			if m.kind != put && m.kind != amend {
				continue
			}
			pinned += m.w
			if m.old != nil && m.oldExp == neverExpires && c.lim.policy == EvictSoonestExpiry {
				pinned -= weigh(m.old) // counted in fixedBytes
			}
		}
		// (reserve fails only where dDocs or dBytes is positive, so
		// they are never the -1 and -1 that makeRoom takes for
		// "within the bounds".)
		first := &ms[0]
		if len(ms) > 1 && cm.r.keep == nil {
			// None of the commit's documents is evicted for it: its
			// checks found them, and its room counts on them.
			cm.r.keep = make(map[string]struct{}, len(ms))
			for i := range ms[1:] {
				cm.r.keep[ms[1+i].id] = struct{}{}
			}
		}
		fit := false
		if len(ms) == 1 {
			n := first.s.docs.len()
			if fit, err = c.makeRoomLocked(first.s, first.id, cm.dDocs, cm.dBytes, pinned, cm.now, &cm.r); fit && first.s.docs.len() != n {
				first.ref = first.s.docs.lookup(first.h, first.id) // evicted from s: ref may be stale
			}
		}
		if !fit {
			c.unlock(cm)
			if err == nil {
				err = c.makeRoom(cm.op, first.id, cm.dDocs, cm.dBytes, pinned, cm.revDocs, cm.revBytes, &cm.r)
			}
			if err != nil {
				if errors.Is(err, ErrFull) {
					c.lim.refused.Add(1)
				}
				return false, err
			}
			return true, nil
		}
	}
	cm.r.give(&c.lim) // in the reservation now
	cm.reserved = true
	return false, nil
}

// unreserve gives back what reserve took, for a commit that a later stage
// ends.
func (c *Collection) unreserve(cm *commit) {
	if cm.reserved {
		c.lim.release(cm.dDocs, cm.dBytes)
		cm.reserved = false
	}
}

// log is the durable mode's stage: it writes cm's records to the log, in
// one group that a restart applies whole or not at all, and sets cm.seq.
// Logged before it is applied: a commit the log refuses (a full disk, a
// failed disk) changes nothing.
//
// The change feed hooks on here: its records of the commit go in at the
// LSN the log gives it, or in memory at one the feed gives (feed_ring.go).
func (c *Collection) log(cm *commit) error {
	if c.d == nil {
		if c.feed != nil {
			c.logFeed(cm)
		}
		return nil
	}
	return c.logDurable(cm)
}

func (c *Collection) logDurable(cm *commit) error {
	seq, err := c.d.log.appendCommit(cm)
	cm.seq = seq // 0 for a commit of reads only, which logs nothing
	return err
}

// logFeed gives cm, in a collection without a log, an LSN of the feed's
// and the feed its records.
func (c *Collection) logFeed(cm *commit) {
	cm.seq = c.feed.begin()
	c.feed.commitRecs(cm, cm.seq)
	c.feed.end()
}

// apply files cm's changes in the table, the expiry index and the
// eviction policy, and accounts for them in the usage.
func (c *Collection) apply(cm *commit) {
	if cm.many == nil {
		c.applyOne(cm, &cm.one[0])
		return
	}
	// moved has a bit for each shard where a mutation before this one
	// filed a new entry or removed one: the table may have moved the
	// slots check found there. (A replacement is stored in its slot.)
	var moved [2]uint64
	for i := range cm.many {
		m := &cm.many[i]
		if m.kind == read {
			continue
		}
		n := m.h & (numShards - 1)
		if m.prev != 0 || moved[n/64]&(1<<(n%64)) != 0 {
			m.ref = m.s.docs.lookup(m.h, m.id)
		}
		if m.ref == nil || m.kind == del {
			moved[n/64] |= 1 << (n % 64)
		}
		c.applyOne(cm, m)
	}
}

func (c *Collection) applyOne(cm *commit, m *mutation) {
	switch m.kind {
	case del:
		if cm.reserved {
			// Counted in the reservation already: added back before
			// deleteLocked takes it off, so that the usage never
			// reads below the truth.
			c.lim.release(-1, -weigh(m.old))
		}
		c.deleteLocked(m.s, m.h, m.old, m.oldExp)
	case put, touch, amend:
		c.storeLocked(m.s, m.h, m.e, m.exp, m.ref, m.oldExp)
	}
}

// notify tells the collection's own listeners of cm's changes: the
// sweeper of the new expiries, the typed views of the entries replaced.
func (c *Collection) notify(cm *commit) {
	if cm.many == nil {
		c.notifyOne(&cm.one[0])
		return
	}
	for i := range cm.many {
		if m := &cm.many[i]; m.kind != read {
			c.notifyOne(m)
		}
	}
}

func (c *Collection) notifyOne(m *mutation) {
	if m.e != nil {
		c.noteExpiry(m.exp)
	}
	if m.old != nil {
		c.views.forget(m.old)
	}
}

// wait returns once cm's records, and those of what was removed for it,
// are as durable as the Sync policy promises.
func (c *Collection) wait(cm *commit) error {
	if c.d == nil {
		return nil
	}
	return c.synced(max(cm.seq, cm.r.lsn))
}

// reportRemoved reports what cm replaced after it had expired (an expiry,
// R9) and what was evicted or swept for its room: once it is as durable as
// the commit (so that a power loss cannot make a restart report it again),
// and even if the wait failed, for it is gone from memory.
func (c *Collection) reportRemoved(cm *commit) {
	if cm.many == nil {
		c.reportReplaced(&cm.one[0])
	} else {
		for i := range cm.many {
			c.reportReplaced(&cm.many[i])
		}
	}
	c.reportEvicted(&cm.r)
}

// reportReplaced reports the expired document m replaced, if it did.
func (c *Collection) reportReplaced(m *mutation) {
	if m.kind == put && m.prev == 0 && m.old != nil && !m.oldLive && !m.oldHidden {
		c.swept.Add(1)
		c.report([]slot{{e: m.old, exp: m.oldExp}})
	}
}

// abandon ends a commit that changed nothing with err, after giving back
// the room evicted for it, waiting for the log records of what was removed
// for it and reporting those removals: they stand, whether or not the
// commit does. (A write refuses before it evicts when evicting cannot make
// its room; evictions stand behind a failed write only when other calls
// ran at the same time, or the log failed: see EvictionPolicy.) A failure
// to sync them is returned instead.
func (c *Collection) abandon(cm *commit, err error) error {
	r := &cm.r
	if r.held() != 0 {
		c.lim.release(r.docs, r.bytes)
		r.give(&c.lim)
	}
	// Whether or not r held room, makeRoom may have ended a pick's
	// count: tell a room maker that waits for it (one atomic load when
	// none does).
	c.lim.ended()
	var serr error
	if r.lsn != 0 {
		serr = c.synced(r.lsn)
	}
	c.reportEvicted(r) // holding nothing: OnEvict and OnExpire may write
	if serr != nil {
		return serr
	}
	return err
}
