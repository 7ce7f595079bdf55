package ttlstore

// Evicting one document for a write: finding the victim the policy names
// (EvictColdest's pick, or the document expiring soonest across the shards
// under EvictSoonestExpiry), taking its shard's lock, and removing it
// (evictLocked). What it promises makeRoom and makeRoomLocked: never the
// write's own id; never a wait for a lock while the caller holds another
// (the victim's shard is then tried with TryLock, and an EvictColdest
// victim it could not take is left in room.pick for makeRoom); a victim
// is removed only while it is still its id's document; its room stays
// counted as used, in the write's room, for that write alone; and a
// durable collection logs the eviction as a delete before it removes
// anything (if the log refuses, the victim stays, and the policy keeps it).

// lockOther takes t's lock for a caller that holds held's (nil: none):
// nothing to take when t is held, and only if it is free (TryLock) when
// the caller holds another, which must not wait for a second lock. It
// reports whether the caller has t's lock.
func lockOther(t, held *shard) bool {
	switch {
	case t == held:
		return true
	case held == nil:
		t.mu.Lock()
		return true
	}
	return t.mu.TryLock()
}

// unlockOther lets go of what lockOther took.
func unlockOther(t, held *shard) {
	if t != held {
		t.mu.Unlock()
	}
}

// evictColdest evicts the document EvictColdest picks, but not the one
// with the given id, and adds it to r. held is the shard whose lock the
// caller holds, nil for none. ok is false when there is none to pick, or
// when the victim's shard is not held and its lock is taken (see
// lockOther): the victim is then left in r.pick.
func (c *Collection) evictColdest(held *shard, id string, r *room) (ok bool, err error) {
	for {
		v := c.lim.cold.victim(id, r.keep, !r.covered) // counted in filing if not nil and not covered
		if v == nil {
			return false, nil
		}
		if ok, err := c.evictPicked(held, v, r); ok || err != nil || r.pick != nil {
			return ok, err
		}
	}
}

// evictPicked evicts v, which EvictColdest picked (and counted in
// filing, or covered), if it is still the document of its id, adds it to r and
// reports whether it did. held is as for evictColdest: when v's shard is
// not held and its lock is taken, v is left in r.pick.
func (c *Collection) evictPicked(held *shard, v *entry, r *room) (bool, error) {
	h := keyHash(c.seed, v.key()) // the table's: the policy hashes ids with a seed of its own
	t := &c.shards[h&(numShards-1)]
	if !lockOther(t, held) {
		r.pick = v
		return false, nil
	}
	// Still its id's document? It is if it is in the table, found by
	// identity: a probe that loads no entry's key (get compared v's id
	// with the id of each entry its tag matched: 4 D1 misses), and whose
	// slot the removal takes without probing again.
	at, ok := t.docs.locate(h, v)
	if !ok {
		// Replaced or deleted since the policy picked it: the policy
		// has been told, and has the new version if any.
		unlockOther(t, held)
		r.endPick(&c.lim)
		return false, nil
	}
	err := c.evictLocked(t, h, v, v.expiry(c.def.Load()), at, r)
	unlockOther(t, held)
	return true, err
}

// evictSoonest evicts the document that expires soonest, but not the one
// with the given id, and adds it to r. held is the shard whose lock the
// caller holds, nil for none. ok is false when no other document can
// expire, or when the shard to evict from is not held and its lock is
// taken (see lockOther).
func (c *Collection) evictSoonest(held *shard, id string, r *room) (ok bool, err error) {
	if r.keep != nil {
		return c.evictSoonestKept(held, id, r)
	}
	for {
		// The shard with the earliest expiry: the earliest first, then
		// where it is (two loops without branches to mispredict but one,
		// a third of the instructions of one loop that tracks both).
		first := c.earliestExpiry()
		if first == neverExpires {
			return false, nil
		}
		i := 0
		for i < numShards-1 && c.minExps[i].Load() != first {
			i++
		}
		s := &c.shards[i]
		if !lockOther(s, held) {
			return false, nil
		}
		v, exp := s.index.soonest(id, r.keep)
		if v != nil && exp <= first {
			err := c.evictLocked(s, keyHash(c.seed, v.key()), v, exp, tableSlot{}, r)
			unlockOther(s, held)
			return true, err
		}
		// The earliest is id's alone, or the shard changed since the
		// scan: the earliest of the other shards decides.
		second := neverExpires
		for j := range c.minExps {
			if j != i {
				second = min(second, c.minExps[j].Load())
			}
		}
		switch {
		case v != nil && exp <= second:
			err := c.evictLocked(s, keyHash(c.seed, v.key()), v, exp, tableSlot{}, r)
			unlockOther(s, held)
			return true, err
		case second == neverExpires:
			unlockOther(s, held)
			if v == nil {
				return false, nil // only id can expire
			}
			// Changed since the scan: look again.
		default:
			unlockOther(s, held)
			// The earliest is id's alone, or the shard changed: the
			// next earliest is in another shard. Evict there, but not
			// id, whose shard it is if the shard changed.
			for j := range c.shards {
				if j == i || c.minExps[j].Load() != second {
					continue
				}
				t := &c.shards[j]
				if !lockOther(t, held) {
					return false, nil
				}
				if w, exp := t.index.soonest(id, r.keep); w != nil && exp == second {
					err := c.evictLocked(t, keyHash(c.seed, w.key()), w, exp, tableSlot{}, r)
					unlockOther(t, held)
					return true, err
				}
				unlockOther(t, held)
				break
			}
		}
	}
}

// evictSoonestKept is evictSoonest for a batch, which keeps several
// documents (r.keep): the shards' earliest expiries may all be the batch's,
// so it asks every shard for its soonest but those, and evicts the
// soonest of all. Batches that must evict are rare; it costs a pass over
// the shards.
func (c *Collection) evictSoonestKept(held *shard, id string, r *room) (ok bool, err error) {
	for {
		best, bestExp := -1, neverExpires
		for j := range c.shards {
			if c.minExps[j].Load() >= bestExp {
				continue // nothing there expires sooner
			}
			t := &c.shards[j]
			if !lockOther(t, held) {
				return false, nil
			}
			if _, exp := t.index.soonest(id, r.keep); exp < bestExp {
				best, bestExp = j, exp
			}
			unlockOther(t, held)
		}
		if best < 0 {
			return false, nil // only the batch's documents can expire
		}
		t := &c.shards[best]
		if !lockOther(t, held) {
			return false, nil
		}
		if v, exp := t.index.soonest(id, r.keep); v != nil && exp == bestExp {
			err := c.evictLocked(t, keyHash(c.seed, v.key()), v, exp, tableSlot{}, r)
			unlockOther(t, held)
			return true, err
		}
		unlockOther(t, held) // changed meanwhile: look again
	}
}

// evictLocked removes v, the current entry of its id, filed in s under h
// (at at in s's table, if the caller located it; the zero tableSlot if
// not) and expiring at exp, to make room, logs the removal as a delete,
// and adds its room to r and v to r.evicted, to be reported
// (reportEvicted) once no lock is held. s.mu must be held for writing.
func (c *Collection) evictLocked(s *shard, h uint64, v *entry, exp int64, at tableSlot, r *room) error {
	var recs []feedRec
	if c.feed != nil && !s.hidden(v) {
		recs = []feedRec{removalRec(OpEvicted, slot{e: v, exp: exp}, r.now)}
	}
	if c.d != nil {
		lsn, err := c.d.log.appendDelete(v.key(), recs)
		if err != nil {
			if c.lim.cold != nil {
				c.lim.cold.add(v) // still stored: the policy must keep it
				r.endPick(&c.lim)
			}
			return err
		}
		r.lsn = lsn
	} else if recs != nil {
		c.feed.record(recs)
	}
	// v's room stays counted as used, for the write alone to fill. It is
	// counted in filing before v leaves the expiry index (where another
	// room maker may look for victims), and before the pick that
	// EvictColdest counted there ends: see makeRoom.
	r.take(&c.lim, weigh(v))
	if c.lim.cold != nil {
		r.endPick(&c.lim)
	}
	// The policy took v out of its queues when it picked it.
	if at.grp != nil {
		s.docs.removeAt(at) // nothing changed the table since locate
	} else {
		s.docs.remove(h, v)
	}
	c.unfiledLocked(s, v, exp)
	r.removed(removal{slot: slot{e: v, exp: exp}, expired: isExpired(exp, r.now), hidden: s.hidden(v)})
	return nil
}
