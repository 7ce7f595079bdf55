package ttlstore

import (
	"fmt"
	"hash/maphash"
)

// checkInvariants verifies that the collection's structures agree: every
// stored entry is filed under its own id, is in the expiry index at the
// second it expires at under the DefaultTTL, and nothing else is there; the
// index is well formed (expiryIndex.check); each shard's cached minimum is
// its index's earliest expiry, and no earlier than the collection's expiry
// floor; and each entry's stored JSON ends at its stamp position with '}'.
// With no write or SetLimits under way, as tests call it, nothing counts
// in limits.filing: every write in progress, room held and victim picked
// was counted out; the bound's usage counters are the number and weight
// of the documents the shards hold; under EvictSoonestExpiry, the documents counted as
// unable to expire are those the expiry indexes file so; and under
// EvictColdest the policy's queues hold exactly the stored documents, each
// once (checkColdest); and in a partitioned collection each stored
// document is in its partition's index or hidden by a pending
// DeletePartition (checkParts).
//
// It holds every shard's lock (for reading) while it looks, so that it
// sees one state of the whole collection, and may be called while the
// background sweeper or Sweep runs: a sweep removes a batch from its
// shard's table and from the policy's queues under that shard's lock, and
// a check that let go of each shard's lock before the next would count the
// batch in the shard it had passed and not in the queues it read last. It
// is meant for tests (export_test.go exposes it), but costs nothing unless
// called.
func (c *Collection) checkInvariants() error {
	if n := c.lim.filing.Load(); n != 0 {
		return fmt.Errorf("limits: filing counts %d with no write under way", n)
	}
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	for i := range c.shards {
		c.shards[i].mu.RLock()
	}
	defer func() {
		for i := range c.shards {
			c.shards[i].mu.RUnlock()
		}
	}()
	def := c.def.Load()
	var fixedDocs, fixedBytes, allDocs, allBytes int64
	for i := range c.shards {
		s := &c.shards[i]
		if err := s.docs.check(c.seed, func(e *entry) error {
			allDocs++
			allBytes += weigh(e)
			return nil
		}); err != nil {
			return err
		}
		for _, e := range s.index.near.never.items {
			fixedDocs++
			fixedBytes += weigh(e)
		}
		err := s.check(i, def, c.seed)
		if err == nil && c.pk != nil {
			err = s.checkParts(i, c.seed)
		}
		if f := c.lim.floor.floor.Load(); err == nil && f > s.minExp.Load() {
			err = fmt.Errorf("shard %d: minimum expiry %d is before the collection's floor %d", i, s.minExp.Load(), f)
		}
		if err != nil {
			return err
		}
	}
	if d, b := c.lim.docs.Load(), c.lim.bytes.Load(); d != allDocs || b != allBytes {
		return fmt.Errorf("limits: the bound counts %d documents of %d bytes, the shards hold %d of %d", d, b, allDocs, allBytes)
	}
	if c.lim.policy != EvictSoonestExpiry {
		fixedDocs, fixedBytes = 0, 0
	}
	if d, b := c.lim.fixedDocs.Load(), c.lim.fixedBytes.Load(); d != fixedDocs || b != fixedBytes {
		return fmt.Errorf("limits: %d documents of %d bytes counted as unable to expire, %d of %d filed so", d, b, fixedDocs, fixedBytes)
	}
	return c.checkColdest()
}

// checkColdest verifies, under EvictColdest, that the policy's queues hold
// exactly the stored documents: every stored entry is in a queue, every
// entry in a queue is the stored entry of its id, in that queue once and
// at the position it records, and the queues count as many as the shards
// hold; and that the bound counts what its tables hold beyond the
// documents' weights. A document the policy does not know can never be
// evicted; a stale entry in a queue can be picked as a victim for an id
// whose document is elsewhere. Every shard's lock must be held, for reading at least.
func (c *Collection) checkColdest() error {
	p := c.lim.cold
	if p == nil {
		return nil
	}
	p.lock()
	defer p.unlock()
	docs := 0
	for i := range c.shards {
		s := &c.shards[i]
		var err error
		s.index.ascend(func(e *entry, _ int64) bool {
			if e.seg == segNone {
				err = fmt.Errorf("shard %d: %q is in none of EvictColdest's queues", i, e.key())
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
		docs += s.docs.len()
	}
	if err := p.check(docs, func(e *entry) bool {
		s, h := c.shardFor(e.key())
		return s.docs.get(h, e.key()) == e
	}); err != nil {
		return err
	}
	want := int64(0) // not counted without MaxBytes (chargeTo)
	if p.charged != nil {
		want = p.charge()
	}
	if got := c.lim.policyBytes.Load(); got != want {
		return fmt.Errorf("EvictColdest: the bound counts %d bytes of its tables, they hold %d beyond the documents' weights", got, want)
	}
	return nil
}

// check verifies that EvictColdest's queues hold docs documents, each in
// one queue once, at the position it records, and stored (as stored
// reports), and that the candidate is in probation. mu must be held.
func (p *coldest) check(docs int, stored func(*entry) bool) error {
	for _, q := range []struct {
		seg uint8
		q   *queue
	}{{segWindow, &p.window}, {segProbation, &p.probation}, {segProtected, &p.protected}} {
		n := 0
		for pos := q.q.head; pos != q.q.tail; pos++ {
			e := q.q.buf[pos&q.q.mask()]
			if e == nil {
				continue
			}
			if e.seg != q.seg || e.qpos != pos {
				return fmt.Errorf("EvictColdest: %q is at %d in queue %d but records %d in queue %d", e.key(), pos, q.seg, e.qpos, e.seg)
			}
			if !stored(e) {
				return fmt.Errorf("EvictColdest: %q (_ts %d) is in queue %d but is not the stored document of its id", e.key(), e.ts, q.seg)
			}
			n++
		}
		if n != q.q.n {
			return fmt.Errorf("EvictColdest: queue %d holds %d documents, counts %d", q.seg, n, q.q.n)
		}
	}
	if p.len() != docs {
		return fmt.Errorf("EvictColdest: the queues hold %d documents, the collection %d", p.len(), docs)
	}
	if p.cand != nil && p.cand.seg != segProbation {
		return fmt.Errorf("EvictColdest: the candidate %q is in queue %d", p.cand.key(), p.cand.seg)
	}
	return nil
}

func (s *shard) check(i int, def int32, seed maphash.Seed) error {
	err := s.docs.check(seed, func(e *entry) error {
		if keyHash(seed, e.key())&(numShards-1) != uint64(i) {
			return fmt.Errorf("document %q is in the wrong shard", e.key())
		}
		raw := e.raw()
		if len(raw) < 2 || raw[len(raw)-1] != '}' || raw[0] != '{' {
			return fmt.Errorf("document %q: stored JSON %q is not an object", e.key(), raw)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("shard %d: %w", i, err)
	}
	if err := s.index.check(); err != nil {
		return fmt.Errorf("shard %d: expiry index: %w", i, err)
	}
	n := 0
	s.index.ascend(func(e *entry, exp int64) bool {
		id := e.key()
		switch {
		case s.docs.get(keyHash(seed, id), id) != e:
			err = fmt.Errorf("shard %d: the expiry index holds %q, which is not the stored document", i, id)
		case e.expiry(def) != exp:
			err = fmt.Errorf("shard %d: %q is indexed at %d but expires at %d (ts %d, ttl %d, default %d)", i, id, exp, e.expiry(def), e.ts, e.ttl, def)
		}
		n++
		return err == nil
	})
	if err != nil {
		return err
	}
	if n != s.docs.len() {
		return fmt.Errorf("shard %d: %d documents, %d in the expiry index", i, s.docs.len(), n)
	}
	if got := s.size.Load(); int(got) != s.docs.len() {
		return fmt.Errorf("shard %d: cached size %d, table holds %d", i, got, s.docs.len())
	}
	if got, want := s.minExp.Load(), s.index.min(); got != want {
		return fmt.Errorf("shard %d: cached minimum expiry %d, index minimum %d", i, got, want)
	}
	return nil
}
