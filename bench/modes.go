package bench

import (
	"os"
	"time"

	"github.com/ttlstore/ttlstore"
)

// ttlstore's modes, held against one another on the same workloads by
// BenchmarkModes (modes_test.go): the in-memory collection of the peers'
// workloads, the same durable (Open) with SyncNever, and the same with a
// bound. Each is the in-memory adapter's configuration (DefaultTTL of an
// hour, the wall clock, the background sweeper) with one difference, so
// that what a mode costs is its difference from the in-memory one.

// Mode is one way to run a ttlstore collection.
type Mode struct {
	// Name is the mode as it appears in results, where a store's name goes
	// (store=<Name>), so that benchstat's -col /store and benchsummary
	// compare the modes as they compare stores.
	Name string
	// New makes an empty collection in this mode. The durable mode makes
	// a directory of its own under dir, which its Close removes; the
	// bounded one holds at most capacity documents; the others ignore
	// both.
	New func(dir string, capacity int) Store
	// Bounded says whether the collection holds at most capacity
	// documents, evicting to make room.
	Bounded bool
}

// Modes lists the modes, the in-memory collection first (the base of every
// comparison).
var Modes = []Mode{
	{Name: "ttlstore", New: func(string, int) Store { return newTTLStore(Config{}) }},
	{Name: "ttlstore-durable-never", New: newDurableNeverStore},
	{Name: "ttlstore-bounded-full", New: newBoundedFullStore, Bounded: true},
}

// newDurableNeverStore opens a durable collection (ttlstore.Open, Sync:
// SyncNever: each write goes to the log's file, flushing it is left to the
// operating system) in a new directory under dir. It panics if it cannot.
func newDurableNeverStore(dir string, _ int) Store {
	sub, err := os.MkdirTemp(dir, "durable-never-")
	if err != nil {
		panic(err)
	}
	s, err := openDurableTTLStore(sub, DurableConfig{Sync: SyncNever})
	if err != nil {
		panic(err)
	}
	return &durableModeStore{TTLStore: TTLStore{C: s.(*DurableTTLStore).C}, dir: sub}
}

// durableModeStore is a durable collection as a Store: Set panics when
// Upsert fails, Close closes the collection and removes its directory.
type durableModeStore struct {
	TTLStore
	dir string
}

func (s *durableModeStore) Close() {
	if err := s.C.Close(); err != nil {
		panic(err)
	}
	if err := os.RemoveAll(s.dir); err != nil {
		panic(err)
	}
}

// newBoundedFullStore makes an in-memory collection of at most capacity
// documents (MaxDocuments) that evicts with EvictColdest (W-TinyLFU) to
// make room: BoundedKinds' ttlstore, but with the in-memory mode's TTL and
// sweeper.
func newBoundedFullStore(_ string, capacity int) Store {
	return newTTLStoreWith(ttlstore.Options{
		DefaultTTL:   ttlstore.TTL(int32(TTL / time.Second)),
		MaxDocuments: capacity,
		Eviction:     ttlstore.EvictColdest,
	})
}
