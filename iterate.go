package ttlstore

import "iter"

// Iteration: All and Query, over a snapshot of references to the live
// documents.

// All returns an iterator over the live documents, in no particular order.
// See Query.
func (c *Collection) All() iter.Seq[Document] { return c.Query(nil) }

// Query returns an iterator over the live documents for which match returns
// true (all of them when match is nil), in no particular order.
//
// Before it yields the first document, the iterator takes a snapshot of
// references to the live documents (8 bytes each), shard by shard, under one
// DefaultTTL: every document it yields was live when its shard was read, and
// a concurrent SetDefaultTTL applies to all of the snapshot or to none of it.
// Writes made while the snapshot is taken may or may not be in it; writes
// made after it are not; a transactional batch (ExecuteBatch) is in it
// whole or not at all. No lock is held while match and the loop body run,
// so they may call any method of the Collection. It works after Close, on
// the contents as Close left them.
func (c *Collection) Query(match func(Document) bool) iter.Seq[Document] {
	return func(yield func(Document) bool) {
		snap, def := c.snapshot()
		for _, e := range snap {
			d := Document{e: e, exp: expiryAt(e.ts, effectiveTTL(def, e.ttl))}
			if match != nil && !match(d) {
				continue
			}
			if !yield(d) {
				return
			}
		}
	}
}

// snapshot returns the live entries and the DefaultTTL they were judged by.
func (c *Collection) snapshot() ([]*entry, int32) {
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	c.spanMu.Lock() // no batch is half applied while the shards are read
	defer c.spanMu.Unlock()
	// Count the live documents first, for the capacity; a document
	// written meanwhile only makes append grow the snapshot.
	n := 0
	now := c.now()
	for i := range c.shards {
		s := &c.shards[i]
		if s.size.Load() == 0 {
			continue
		}
		s.mu.RLock()
		n += s.docs.len()
		if s.minExp.Load() <= now {
			n -= s.index.countExpired(now)
		}
		s.mu.RUnlock()
	}
	snap := make([]*entry, 0, n)
	for i := range c.shards {
		s := &c.shards[i]
		if s.size.Load() == 0 {
			continue
		}
		s.mu.RLock()
		snap = s.index.appendLive(c.now(), snap)
		s.mu.RUnlock()
	}
	return snap, c.def.Load()
}
