package ttlstore

import "fmt"

// checkInvariants verifies that the collection's structures agree: every
// index entry is the stored document for its id and sits at its expiry; every
// document that can expire is indexed exactly once and no other is; each
// shard's cached minimum is its index's minimum; each entry's exp follows
// from its _ts, its ttl and the DefaultTTL; and the stored JSON ends with the
// entry's own stamp. It takes the locks it needs and is meant for tests
// (export_test.go exposes it), but costs nothing unless called.
func (c *Collection) checkInvariants() error {
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	def := c.def.Load()
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		err := s.check(i, def)
		s.mu.RUnlock()
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *shard) check(i int, def int32) error {
	canExpire := 0
	for id, sl := range s.docs {
		e := sl.e
		if e.id != id {
			return fmt.Errorf("shard %d: document %q is stored under id %q", i, e.id, id)
		}
		if want := expiryAt(e.ts, effectiveTTL(def, e.ttl)); sl.exp != want {
			return fmt.Errorf("shard %d: document %q has exp %d, want %d (ts %d, ttl %d, default %d)", i, id, sl.exp, want, e.ts, e.ttl, def)
		}
		if want := fmt.Sprintf(`"_ts":%d,"_etag":"%s"}`, e.ts, e.etag()); len(e.json) < len(want) || e.json[len(e.json)-len(want):] != want {
			return fmt.Errorf("shard %d: document %q does not end with its stamp %s: %s", i, id, want, e.json)
		}
		if sl.exp != neverExpires {
			canExpire++
		}
	}
	if n := s.index.len(); n != canExpire {
		return fmt.Errorf("shard %d: index has %d entries, %d documents can expire", i, n, canExpire)
	}
	var err error
	var prev slot
	s.index.ascend(func(sl slot) bool {
		switch {
		case s.docs[sl.e.id] != sl:
			err = fmt.Errorf("shard %d: index entry %q (exp %d) is not the stored document", i, sl.e.id, sl.exp)
		case sl.exp == neverExpires:
			err = fmt.Errorf("shard %d: index holds %q, which never expires", i, sl.e.id)
		case prev.e != nil && !lessByExpiry(prev, sl):
			err = fmt.Errorf("shard %d: index out of order at %q", i, sl.e.id)
		}
		prev = sl
		return err == nil
	})
	if err != nil {
		return err
	}
	if got, want := s.minExp.Load(), s.index.min(); got != want {
		return fmt.Errorf("shard %d: cached minimum expiry %d, index minimum %d", i, got, want)
	}
	return nil
}
