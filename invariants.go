package ttlstore

import (
	"fmt"
	"hash/maphash"
)

// checkInvariants verifies that the collection's structures agree: every
// stored entry is filed under its own id, is in the expiry bucket for the
// second it expires at under the DefaultTTL, at its pos there, and nothing
// else is in a bucket; no bucket is empty; each shard's cached minimum is
// its index's earliest expiry, and no earlier than the collection's expiry
// floor; and each entry's stored JSON ends at its stamp position with '}'.
// With no write or SetLimits under way, as tests call it, nothing counts
// in limits.filing: every write in progress, room held and victim picked
// was counted out; and under EvictSoonestExpiry, the documents counted as
// unable to expire are those the expiry indexes file so. It takes the locks it needs and is meant for tests
// (export_test.go exposes it), but costs nothing unless called.
func (c *Collection) checkInvariants() error {
	if n := c.lim.filing.Load(); n != 0 {
		return fmt.Errorf("limits: filing counts %d with no write under way", n)
	}
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	def := c.def.Load()
	var fixedDocs, fixedBytes int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		for _, e := range s.index.never.items {
			fixedDocs++
			fixedBytes += weigh(e)
		}
		err := s.check(i, def, c.seed)
		if f := c.lim.floor.floor.Load(); err == nil && f > s.minExp.Load() {
			err = fmt.Errorf("shard %d: minimum expiry %d is before the collection's floor %d", i, s.minExp.Load(), f)
		}
		s.mu.RUnlock()
		if err != nil {
			return err
		}
	}
	if c.lim.policy != EvictSoonestExpiry {
		fixedDocs, fixedBytes = 0, 0
	}
	if d, b := c.lim.fixedDocs.Load(), c.lim.fixedBytes.Load(); d != fixedDocs || b != fixedBytes {
		return fmt.Errorf("limits: %d documents of %d bytes counted as unable to expire, %d of %d filed so", d, b, fixedDocs, fixedBytes)
	}
	return nil
}

func (s *shard) check(i int, def int32, seed maphash.Seed) error {
	err := s.docs.check(seed, func(e *entry) error {
		if maphash.String(seed, e.id())&(numShards-1) != uint64(i) {
			return fmt.Errorf("document %q is in the wrong shard", e.id())
		}
		raw := e.raw()
		if len(raw) < 2 || raw[len(raw)-1] != '}' || raw[0] != '{' {
			return fmt.Errorf("document %q: stored JSON %q is not an object", e.id(), raw)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("shard %d: %w", i, err)
	}
	n := 0
	prev := int64(0)
	s.index.ascend(func(b *bucket) bool {
		switch {
		case len(b.items) == 0 && b.exp != neverExpires:
			err = fmt.Errorf("shard %d: bucket %d is empty", i, b.exp)
		case n > 0 && b.exp <= prev:
			err = fmt.Errorf("shard %d: bucket %d after bucket %d", i, b.exp, prev)
		}
		prev = b.exp
		for pos, e := range b.items {
			id := e.id()
			switch {
			case s.docs.get(maphash.String(seed, id), id) != e:
				err = fmt.Errorf("shard %d: bucket %d holds %q, which is not the stored document", i, b.exp, id)
			case int(e.pos) != pos:
				err = fmt.Errorf("shard %d: %q is at %d in bucket %d but has pos %d", i, id, pos, b.exp, e.pos)
			case e.expiry(def) != b.exp:
				err = fmt.Errorf("shard %d: %q is in bucket %d but expires at %d (ts %d, ttl %d, default %d)", i, id, b.exp, e.expiry(def), e.ts, e.ttl, def)
			}
			if err != nil {
				return false
			}
			n++
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if n != s.docs.len() {
		return fmt.Errorf("shard %d: %d documents, %d in buckets", i, s.docs.len(), n)
	}
	if got := s.size.Load(); int(got) != s.docs.len() {
		return fmt.Errorf("shard %d: cached size %d, table holds %d", i, got, s.docs.len())
	}
	if got, want := s.minExp.Load(), s.index.min(); got != want {
		return fmt.Errorf("shard %d: cached minimum expiry %d, index minimum %d", i, got, want)
	}
	return nil
}
