package ttlstore

import (
	"fmt"
	"hash/maphash"
	"iter"
	"strings"
)

// The partition index: in a partitioned collection, each shard lists the
// entries of each partition it holds (a partition is one shard: see
// keyHash), so that QueryIn and DeletePartition cost O(documents of the
// partition), not O(collection). It costs a map slot per document (about
// 20 bytes, with the map's overhead), which Document.Weight does not
// count: MaxBytes bounds the documents, not this index. A collection
// without a partition key has no index and pays nothing for it.

// partSet is one partition's entries in a shard.
type partSet map[*entry]struct{}

// partIn adds e, just filed in s, to its partition's set. s.mu must be
// held for writing.
func (s *shard) partIn(e *entry) {
	set := s.parts[e.pk()]
	if set == nil {
		if s.parts == nil {
			s.parts = make(map[string]partSet)
		}
		set = make(partSet)
		s.parts[strings.Clone(e.pk())] = set // not e's memory: it outlives e
	}
	set[e] = struct{}{}
}

// partOut removes e, just taken out of s, from its partition's set (a no-op
// for an entry that DeletePartition took out of it already). s.mu must be
// held for writing.
func (s *shard) partOut(e *entry) {
	set := s.parts[e.pk()]
	if set == nil {
		return
	}
	delete(set, e)
	if len(set) == 0 {
		delete(s.parts, e.pk())
	}
}

// AllIn returns an iterator over the live documents of the partition pk, in
// no particular order. See QueryIn.
func (c *Collection) AllIn(pk PartitionKey) iter.Seq[Document] { return c.QueryIn(pk, nil) }

// QueryIn is Query scoped to the partition pk: an iterator over its live
// documents for which match returns true (all of them when match is nil),
// in no particular order. Its snapshot costs O(documents of the partition),
// whatever the size of the collection: a partition is in one shard, whose
// partition index lists its documents. It holds that shard's lock while it
// takes the snapshot, and none while match and the loop body run. The
// snapshot has Query's guarantees: one DefaultTTL, a transactional batch
// whole or not at all, documents live when it was taken.
//
// On a collection without a PartitionKeyPath, PartitionKeyNone is the one
// partition, and QueryIn(PartitionKeyNone(), match) is Query(match); any
// other pk yields nothing.
func (c *Collection) QueryIn(pk PartitionKey, match func(Document) bool) iter.Seq[Document] {
	if c.pk == nil {
		if pk.enc != "" {
			return func(func(Document) bool) {}
		}
		return c.Query(match)
	}
	return func(yield func(Document) bool) {
		snap, def := c.snapshotIn(pk.encoding())
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

// snapshotIn returns the live entries of the partition with encoding enc,
// and the DefaultTTL they were judged by.
func (c *Collection) snapshotIn(enc string) ([]*entry, int32) {
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	s, _ := c.shardFor(enc) // an encoding alone hashes to its partition's shard
	s.mu.RLock()
	defer s.mu.RUnlock()
	def := c.def.Load()
	now := c.now()
	set := s.parts[enc]
	snap := make([]*entry, 0, len(set))
	for e := range set {
		// (DeletePartition takes its entries out of the set: none here
		// is hidden.)
		if exp := e.expiry(def); !isExpired(exp, now) {
			snap = append(snap, e)
		}
	}
	return snap, def
}

// checkParts verifies, for checkInvariants, that shard i's partition index
// and its purges account for its entries: every stored entry is in its
// partition's set, or hidden by a purge that still lists it, not both; a
// set holds only stored entries of its partition and is never empty; a
// purge has entries left. s.mu must be held.
func (s *shard) checkParts(i int, seed maphash.Seed) error {
	n := 0
	for pk, set := range s.parts {
		if len(set) == 0 {
			return fmt.Errorf("shard %d: partition %s has an empty set", i, describePK(pk))
		}
		for e := range set {
			if e.pk() != pk {
				return fmt.Errorf("shard %d: %s is in the set of partition %s", i, describeKey(e.key()), describePK(pk))
			}
			if s.docs.get(keyHash(seed, e.key()), e.key()) != e {
				return fmt.Errorf("shard %d: partition index holds %s, which is not stored", i, describeKey(e.key()))
			}
			if s.hidden(e) {
				return fmt.Errorf("shard %d: partition index holds %s, which is hidden", i, describeKey(e.key()))
			}
			n++
		}
	}
	hidden := 0
	if ps := s.purges.Load(); ps != nil {
		for _, p := range *ps {
			if len(p.left) == 0 {
				return fmt.Errorf("shard %d: a purge of partition %s with nothing left", i, describePK(p.pk))
			}
			for e := range p.left {
				if s.docs.get(keyHash(seed, e.key()), e.key()) == e {
					hidden++
				}
			}
		}
	}
	if n+hidden != s.docs.len() {
		return fmt.Errorf("shard %d: %d documents, %d in the partition index and %d hidden", i, s.docs.len(), n, hidden)
	}
	return nil
}
