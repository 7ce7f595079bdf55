package ttlstore

import (
	"slices"
	"strings"
)

// Deleting a partition (Azure Cosmos DB's "delete items by partition key"):
// DeletePartition hides every document of the partition at once, in O(1)
// under the partition's shard lock, and the sweeper removes them from
// memory afterwards, in its usual batches.
//
// Hiding rests on the shard's _etags, which only grow: DeletePartition
// files a purge, "every entry of partition P with an _etag up to T is
// deleted", T being the last _etag the shard issued, and takes the
// partition's set out of the partition index for the purge to remove. A
// write to the partition afterwards gets a later _etag, so it is not
// hidden, and goes into a new set. Every place that sees entries asks
// hidden: Read's lock-free look (one atomic load of the shard's purges,
// nil but while a purge is pending), a commit's check (a hidden document
// is absent: Create may take its id, Replace, Delete and the others find
// nothing), the snapshots of All, Query and a compaction, Stats, the
// sweeper (a hidden document that also expired is not reported to
// OnExpire) and eviction (nor to OnEvict).
//
// Removal is not reported: a deletion is neither an expiry nor an
// eviction. purgeBatch is where a change feed would learn of it, as a
// deletion with a reason of its own. A durable collection logs the purge
// (recPurge) before it hides anything; replay removes the partition's
// documents at that point of the log, and a snapshot leaves hidden
// documents out, so the sweeper's removals need no record.

// purge is one DeletePartition waiting for the sweeper. pk and upTo never
// change once it is published; left belongs to the shard's mu.
type purge struct {
	pk   string  // the partition's encoding
	upTo uint64  // the shard's last _etag at the call: the entries up to it are hidden
	left partSet // the partition's entries at the call, those not yet removed (or replaced)
}

// hiddenBy reports whether one of the purges ps hides e.
func hiddenBy(ps []*purge, e *entry) bool {
	for _, p := range ps {
		if e.etag <= p.upTo && e.pk() == p.pk {
			return true
		}
	}
	return false
}

// hidden reports whether a pending DeletePartition hides e, an entry of s:
// one atomic load when none is pending. A reader holding no lock loads the
// purges before it finds e (see look).
func (s *shard) hidden(e *entry) bool {
	ps := s.purges.Load()
	return ps != nil && hiddenBy(*ps, e)
}

// DeletePartition deletes every document of the partition pk, as Azure
// Cosmos DB's delete by partition key: every document of it that exists
// at the call is hidden from every read, iteration, count and write at
// once (a Create may reuse an id at once), while a write to the partition
// after the call is not affected. It holds the partition's shard lock for
// O(1), whatever the partition's size, and removes nothing from memory:
// the sweeper does, in batches of at most Options.SweepBatch with the lock
// released between them, at its next run (Sweep runs it on the caller's
// goroutine; under ManualSweep nothing else does). Until then the hidden
// documents count against MaxDocuments and MaxBytes, and a write that
// needs room removes them before it sweeps or evicts anything else.
//
// The deleted documents are reported to neither OnExpire nor OnEvict:
// they were deleted, as by Delete. A durable collection logs the deletion
// before it hides anything, and returns once the record is as durable as
// the Sync policy promises; a restart, or a crash at any point, leaves
// the partition deleted as of the call.
//
// It returns ErrInvalidPartitionKey on a collection without a
// PartitionKeyPath, ErrClosed after Close, and ErrIO if the log fails (then
// nothing is deleted). A partition with no documents is not an error.
func (c *Collection) DeletePartition(pk PartitionKey) error {
	const op = "delete partition"
	if c.pk == nil {
		return newErrorDetail(op, "", ErrInvalidPartitionKey, "the collection has no PartitionKeyPath")
	}
	if c.closed.Load() {
		return newError(op, "", ErrClosed)
	}
	enc := pk.encoding()
	s, _ := c.shardFor(enc)
	s.mu.Lock()
	set := s.parts[enc]
	if len(set) == 0 {
		s.mu.Unlock()
		return nil
	}
	var lsn uint64
	var recs []feedRec
	if c.feed != nil {
		recs = c.partitionFeedRecs(s, set)
	}
	if c.d != nil {
		var err error
		if lsn, err = c.d.log.appendPurge(enc, recs); err != nil {
			s.mu.Unlock()
			return err
		}
	} else {
		c.feed.record(recs) // (nil without a feed: a no-op)
	}
	delete(s.parts, enc)
	s.addPurgeLocked(&purge{pk: enc, upTo: s.etag, left: set})
	s.mu.Unlock()
	c.purging.Add(1)
	c.wakeSweeper()
	return c.synced(lsn)
}

// addPurgeLocked publishes p among s's purges. s.mu must be held for
// writing.
func (s *shard) addPurgeLocked(p *purge) {
	var ps []*purge
	if old := s.purges.Load(); old != nil {
		ps = append(ps, *old...)
	}
	ps = append(ps, p)
	s.purges.Store(&ps)
}

// purgeBatch removes up to c.batch of the documents the first of s's
// purges hides, under s's lock, and drops the purge once it has none
// left. It returns what it removed, for the caller to tell the typed
// views. No log record is needed: the purge's own record replays the
// deletion.
func (c *Collection) purgeBatch(s *shard, out []slot) []slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.purges.Load()
	if ps == nil {
		return out
	}
	p := (*ps)[0]
	def := c.def.Load()
	n := 0
	for e := range p.left {
		if n == c.batch {
			break
		}
		n++
		delete(p.left, e)
		h := keyHash(c.seed, e.key())
		if s.docs.get(h, e.key()) != e {
			continue // replaced by a later write, or removed already
		}
		exp := e.expiry(def)
		c.deleteLocked(s, h, e, exp)
		out = append(out, slot{e: e, exp: exp})
	}
	if len(p.left) == 0 {
		if len(*ps) == 1 {
			s.purges.Store(nil)
		} else {
			rest := append([]*purge(nil), (*ps)[1:]...)
			s.purges.Store(&rest)
		}
		c.purging.Add(-1)
	}
	return out
}

// purgeShards runs purgeBatch on every shard with a pending purge until
// none is left, or enough (when not nil) reports true, and returns how
// many documents it removed.
func (c *Collection) purgeShards(enough func() bool) int {
	if c.purging.Load() == 0 {
		return 0
	}
	total := 0
	var out []slot
	for i := range c.shards {
		s := &c.shards[i]
		for s.purges.Load() != nil {
			out = c.purgeBatch(s, out[:0])
			total += len(out)
			c.views.forgetAll(out)
			clear(out)
			if enough != nil && enough() {
				return total
			}
		}
	}
	return total
}

// applyPurge deletes every document of the partition with encoding enc,
// as a log's recPurge says. It is for loading: nothing is logged or
// reported, and nothing needs hiding.
func (c *Collection) applyPurge(enc string) {
	s, _ := c.shardFor(enc)
	def := c.def.Load()
	for e := range s.parts[enc] {
		c.deleteLocked(s, keyHash(c.seed, e.key()), e, e.expiry(def))
	}
}

// countHiddenLocked returns how many of s's entries pending purges hide,
// live and expired at second now under the DefaultTTL def. s.mu must be
// held.
func (c *Collection) countHiddenLocked(s *shard, def int32, now int64) (live, expired int) {
	ps := s.purges.Load()
	if ps == nil {
		return 0, 0
	}
	for _, p := range *ps {
		for e := range p.left {
			if s.docs.get(keyHash(c.seed, e.key()), e.key()) != e {
				continue
			}
			if isExpired(e.expiry(def), now) {
				expired++
			} else {
				live++
			}
		}
	}
	return live, expired
}

// withoutHidden drops from es the entries of s that pending purges hide.
// s.mu must be held.
func (s *shard) withoutHidden(es []*entry) []*entry {
	ps := s.purges.Load()
	if ps == nil {
		return es
	}
	out := es[:0]
	for _, e := range es {
		if !hiddenBy(*ps, e) {
			out = append(out, e)
		}
	}
	clear(es[len(out):])
	return out
}

// partitionFeedRecs makes the change feed's records of DeletePartition of
// the partition whose documents in s are set: a delete of each, in key
// order. A delete of each rather than one of the partition, so that a
// reader that mirrors the collection applies them as any other deletes. A
// document that had expired is deleted too, not marked an expiry: as for
// OnExpire, a deletion is not an expiry (docs/partitions.md). s.mu must be
// held.
func (c *Collection) partitionFeedRecs(s *shard, set partSet) []feedRec {
	now, def := c.now(), c.def.Load()
	recs := make([]feedRec, 0, len(set))
	for e := range set {
		if !s.hidden(e) {
			recs = append(recs, feedRec{at: now, op: OpDelete, old: e, oldExp: e.expiry(def), prevEtag: e.etag})
		}
	}
	slices.SortFunc(recs, func(a, b feedRec) int { return strings.Compare(a.old.key(), b.old.key()) })
	return recs
}
