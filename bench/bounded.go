package bench

import (
	"github.com/dgraph-io/ristretto/v2"
	"github.com/maypok86/otter/v2"
	"github.com/ttlstore/ttlstore"
)

// The bounded caches: each holds at most a number of documents and, full,
// makes room for a new one by evicting (or by not admitting it). No
// document expires, so the bound is the only thing that removes any. The
// bounded workloads are in bounded_test.go; the hit ratios of the same
// policies are cmd/hitratio's.

// BoundedKind is one cache under the bounded workloads, with its name in
// benchmark results. New makes one that holds at most capacity documents.
type BoundedKind struct {
	Name string
	New  func(capacity int) Store
	// Bounded is false for the reference that has no bound: it never
	// evicts, and ignores capacity.
	Bounded bool
}

// BoundedKinds lists the bounded caches, ttlstore first (the base of every
// comparison).
var BoundedKinds = []BoundedKind{
	{Name: "ttlstore", New: newBoundedTTLStore, Bounded: true},
	{Name: "ttlstore-unbounded", New: func(int) Store { return newUnboundedTTLStore() }},
	{Name: "otter", New: newBoundedOtter, Bounded: true},
	{Name: "ristretto", New: newBoundedRistretto, Bounded: true},
}

// Lener is a bounded Store that can say how many documents it holds, once
// the work it has pending is done.
type Lener interface {
	Len() int
}

// TrySetter is a Store whose writes can be dropped: TrySet is Set, and
// reports whether the store took the document (ristretto's Set).
type TrySetter interface {
	TrySet(id string, payload []byte) bool
}

// Waiter is a Store that applies writes after they return (ristretto);
// Wait returns once every write made before it is applied or dropped.
type Waiter interface {
	Wait()
}

// newBoundedTTLStore makes a collection of at most capacity documents
// (MaxDocuments) that evicts with EvictColdest; no TTL, ManualSweep.
func newBoundedTTLStore(capacity int) Store {
	return newTTLStoreWith(ttlstore.Options{
		MaxDocuments:  capacity,
		Eviction:      ttlstore.EvictColdest,
		SweepInterval: ttlstore.ManualSweep,
	})
}

// newUnboundedTTLStore is newBoundedTTLStore without the bound: the cost of
// the bound is the difference between the two.
func newUnboundedTTLStore() Store {
	return newTTLStoreWith(ttlstore.Options{SweepInterval: ttlstore.ManualSweep})
}

func newTTLStoreWith(opts ttlstore.Options) *boundedTTLStore {
	c, err := ttlstore.New(opts)
	if err != nil {
		panic(err)
	}
	return &boundedTTLStore{TTLStore{C: c}}
}

// boundedTTLStore is a TTLStore (Set is Upsert, Get is Read) that counts
// its documents.
type boundedTTLStore struct{ TTLStore }

func (s *boundedTTLStore) Len() int { return s.C.Stats().Live }

// otter v2 with MaximumSize, its defaults otherwise (maintenance on a
// goroutine of its own when a buffer needs draining).
type boundedOtter struct {
	c *otter.Cache[string, string]
}

func newBoundedOtter(capacity int) Store {
	return &boundedOtter{c: otter.Must(&otter.Options[string, string]{
		MaximumSize:     capacity,
		InitialCapacity: capacity,
	})}
}

func (s *boundedOtter) Set(id string, payload []byte) { s.c.Set(id, string(payload)) }

func (s *boundedOtter) Get(id string) bool {
	_, ok := s.c.GetIfPresent(id)
	return ok
}

func (s *boundedOtter) Close() { s.c.StopAllGoroutines() }

func (s *boundedOtter) Len() int {
	s.c.CleanUp()
	return s.c.EstimatedSize()
}

// ristretto v2 with MaxCost capacity and every document of cost 1
// (IgnoreInternalCost: its own bookkeeping is not charged), NumCounters 10x
// the capacity, BufferItems 64. Set hands the document to a buffer that
// one goroutine drains into the policy: when the buffer is full, Set drops
// the document; when the policy does not admit it, it is dropped too.
// Either way Set returns at once.
type boundedRistretto struct {
	c *ristretto.Cache[string, string]
}

func newBoundedRistretto(capacity int) Store {
	c, err := ristretto.NewCache(&ristretto.Config[string, string]{
		NumCounters:        int64(10 * capacity),
		MaxCost:            int64(capacity),
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		panic(err)
	}
	return &boundedRistretto{c: c}
}

func (s *boundedRistretto) Set(id string, payload []byte) { s.TrySet(id, payload) }

// TrySet is Set; it returns false when the write was dropped because the
// buffer was full. A document the policy does not admit is dropped later,
// and TrySet does not know it.
func (s *boundedRistretto) TrySet(id string, payload []byte) bool {
	return s.c.Set(id, string(payload), 1)
}

func (s *boundedRistretto) Get(id string) bool {
	_, ok := s.c.Get(id)
	return ok
}

func (s *boundedRistretto) Close() { s.c.Close() }

func (s *boundedRistretto) Wait() { s.c.Wait() }
