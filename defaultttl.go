package ttlstore

// The DefaultTTL: reading it, and changing it atomically for every
// document (R12 to R15).

// DefaultTTL returns the collection's DefaultTTL: nil when TTL is off,
// otherwise a new pointer to Never or a number of seconds.
func (c *Collection) DefaultTTL() *int32 {
	d := c.def.Load()
	if d == 0 {
		return nil
	}
	return &d
}

// SetDefaultTTL changes the DefaultTTL (nil, TTL(Never) or TTL(n); see
// Options.DefaultTTL) and re-resolves every document's expiry atomically: no
// call sees a mix of the old setting and the new (R12). Documents already
// expired under the old setting stay gone: they are removed as part of the
// change and reported to OnExpire, so nothing that was reported expired comes
// back (R13). Documents not yet expired get their expiry from the new
// setting, counted from their _ts, so some may expire at once (R14, R15).
//
// It holds every shard's lock for O(n) in the number of documents.
// It returns ErrInvalidTTL for a value out of range (changing nothing) and
// ErrClosed after Close.
func (c *Collection) SetDefaultTTL(ttl *int32) error {
	def, err := checkDefaultTTL("set DefaultTTL", ttl)
	if err != nil {
		return err
	}
	if c.closed.Load() {
		return newError("set DefaultTTL", "", ErrClosed)
	}
	c.lockAll()
	var purged []slot
	var lsn uint64
	if old := c.def.Load(); def != old {
		now := c.now()
		var recs []feedRec
		if c.d != nil {
			if c.feed != nil {
				// The log takes the feed's records with its own, so
				// they are found before anything changes.
				recs = c.expiryRecsLocked(old, now)
			}
			if lsn, err = c.d.log.appendDefault(old, def, now, recs); err != nil {
				c.unlockAll()
				return err
			}
		}
		purged = c.redefineLocked(old, def, now)
		if c.d == nil && c.feed != nil {
			for _, sl := range purged {
				recs = append(recs, removalRec(OpDelete, sl, now))
			}
			c.feed.record(recs)
		}
	}
	c.unlockAll()

	c.swept.Add(uint64(len(purged)))
	c.wakeSweeper()
	c.views.forgetAll(purged)
	err = c.synced(lsn) // before the report, as for a write
	c.report(purged)
	return err
}

// lockAll takes policyMu and every shard's lock, for writing.
func (c *Collection) lockAll() {
	c.policyMu.Lock()
	for i := range c.shards {
		c.shards[i].mu.Lock()
	}
}

// unlockAll releases what lockAll took.
func (c *Collection) unlockAll() {
	for i := range c.shards {
		c.shards[i].mu.Unlock()
	}
	c.policyMu.Unlock()
}

// redefineLocked removes the documents expired at second now under the
// DefaultTTL purgeDef (R13) and files the rest under def, which becomes the
// DefaultTTL. It returns what it removed. SetDefaultTTL passes the current
// DefaultTTL as purgeDef; replaying a log passes the one the record names,
// which a snapshot taken after the change may already have replaced. Every
// lock must be held (lockAll).
func (c *Collection) redefineLocked(purgeDef, def int32, now int64) []slot {
	c.redefining.Add(1) // odd: Read takes the lock until it is done
	defer c.redefining.Add(1)
	cur := c.def.Load()
	var purged []slot
	var keep []*entry
	for i := range c.shards {
		s := &c.shards[i]
		keep = keep[:0]
		s.index.ascend(func(e *entry, exp int64) bool {
			if purgeDef != cur {
				exp = e.expiry(purgeDef)
			}
			if !isExpired(exp, now) || s.hidden(e) {
				// (A document DeletePartition hid is the sweeper's to
				// remove, unreported: it was deleted, not expired.)
				keep = append(keep, e)
				return true
			}
			s.docs.remove(keyHash(c.seed, e.key()), e)
			if c.pk != nil {
				s.partOut(e)
			}
			c.lim.release(1, weigh(e))
			purged = append(purged, slot{e: e, exp: exp})
			return true
		})
		s.index.rebuild(keep, func(e *entry) int64 { return e.expiry(def) })
		s.minExp.Store(s.index.min())
		c.lim.floor.lower(s.minExp.Load())
		s.size.Store(int32(s.docs.len()))
	}
	clear(keep)
	c.def.Store(def)
	if c.lim.cold != nil {
		c.lim.cold.removed(purged)
	}
	c.recountFixedLocked()
	return purged
}

// recountFixedLocked sets limits.fixedDocs and fixedBytes to the
// documents that cannot expire, as the expiry index files them, under
// EvictSoonestExpiry. Every shard's lock must be held.
func (c *Collection) recountFixedLocked() {
	if c.lim.policy != EvictSoonestExpiry {
		return
	}
	var docs, bytes int64
	for i := range c.shards {
		for _, e := range c.shards[i].index.near.never.items {
			docs++
			bytes += weigh(e)
		}
	}
	c.lim.fixedDocs.Store(docs)
	c.lim.fixedBytes.Store(bytes)
}

// expiryRecsLocked returns the change feed's records of what a change of
// the DefaultTTL from old at second now purges (redefineLocked): a delete,
// marked an expiry, of each document expired under old and not hidden by
// DeletePartition. Every shard's lock must be held.
func (c *Collection) expiryRecsLocked(old int32, now int64) []feedRec {
	var recs []feedRec
	for i := range c.shards {
		s := &c.shards[i]
		s.index.ascend(func(e *entry, exp int64) bool {
			if old != c.def.Load() {
				exp = e.expiry(old)
			}
			if isExpired(exp, now) && !s.hidden(e) {
				recs = append(recs, removalRec(OpDelete, slot{e: e, exp: exp}, now))
			}
			return true
		})
	}
	return recs
}
