package bench

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/jellydator/ttlcache/v3"
	"github.com/maypok86/otter/v2"
	gocache "github.com/patrickmn/go-cache"
	"github.com/tidwall/buntdb"
	"github.com/ttlstore/ttlstore"
)

// TTL is the time to live of every document in the workloads: an hour.
const TTL = time.Hour

// Store is what every workload needs of a cache: store a JSON document under
// its id with a TTL of an hour, and say whether a live document has an id.
// Peers keep the payload as a string (a copy: the caller's buffer is not
// theirs to keep); ttlstore keeps its own stamped copy of the JSON.
//
// A Store is safe for concurrent use when the cache behind it is: all of
// them are.
type Store interface {
	Set(id string, payload []byte)
	Get(id string) (found bool)
	Close()
}

// Iterator is a Store that can visit every live document. Iterate returns
// how many it visited.
type Iterator interface {
	Iterate() int
}

// Sweeper is a Store with a call that removes expired documents from memory
// now: ttlstore's Sweep, go-cache's and ttlcache's DeleteExpired, otter's
// CleanUp.
type Sweeper interface {
	Sweep()
}

// advancer is a Store built on a clock the workload can move forward.
type advancer interface {
	Advance(d time.Duration)
}

// shortSetter is a Store with a per-document TTL, so that a workload can
// store documents that expire at once.
type shortSetter interface {
	SetTTL(id string, payload []byte, ttl time.Duration)
}

// Config says what a workload needs of a new Store.
type Config struct {
	// Expiry asks for a store in which documents can be made to expire on
	// demand (see FillExpired) and stay in memory, unswept, until the
	// workload sweeps: ttlstore and otter get a clock that jumps, and no
	// background sweeper runs (ttlstore ManualSweep, otter no ticks, buntdb
	// an OnExpiredSync that deletes nothing). Without it every store runs as
	// configured by default with the wall clock.
	Expiry bool
}

// Kind is one cache under test, with its name in benchmark results.
type Kind struct {
	Name string
	New  func(Config) Store
	// Expires says whether FillExpired works: whether the cache can hold
	// expired documents unswept while the workload measures.
	Expires bool
}

// Kinds lists the caches under test, ttlstore first (the base of every
// comparison).
var Kinds = []Kind{
	{Name: "ttlstore", New: newTTLStore, Expires: true},
	{Name: "otter", New: newOtter, Expires: true},
	{Name: "ttlcache", New: func(c Config) Store { return newTTLCache(c, false) }, Expires: true},
	{Name: "ttlcache-touch", New: func(c Config) Store { return newTTLCache(c, true) }, Expires: true},
	{Name: "gocache", New: newGoCache, Expires: true},
	{Name: "buntdb", New: newBuntDB, Expires: true},
	{Name: "lru", New: newLRU, Expires: false},
}

// KindNamed returns the Kind with the given name; it panics if there is none.
func KindNamed(name string) Kind {
	for _, k := range Kinds {
		if k.Name == name {
			return k
		}
	}
	panic("bench: no store named " + name)
}

// ErrNoExpiry is returned by FillExpired for a store that cannot hold expired
// documents unswept (the expirable LRU: its TTL is one per cache, and its
// goroutine deletes expired entries within 1/100 of it).
var ErrNoExpiry = errors.New("store cannot hold expired documents unswept")

// FillExpired stores docs[i] under ids[i], all with an hour's TTL but the
// first nExpired, which are expired by the time it returns and not yet
// swept. The store must have been made with Config{Expiry: true}. It moves
// the store's clock forward (ttlstore, otter) or stores the expired documents
// with a TTL of a millisecond and sleeps 20 ms (the others); no workload
// should time it. With nExpired 0 it is Fill, for any store.
func FillExpired(s Store, ids []string, docs [][]byte, nExpired int) error {
	if nExpired == 0 {
		Fill(s, ids, docs)
		return nil
	}
	switch x := s.(type) {
	case advancer:
		// Written at t, expiring at t+1h; the live ones are written at
		// t+30m and expire at t+1h30m; the clock ends at t+1h+2s.
		for i := range nExpired {
			s.Set(ids[i], docs[i])
		}
		x.Advance(TTL / 2)
		for i := nExpired; i < len(ids); i++ {
			s.Set(ids[i], docs[i])
		}
		x.Advance(TTL/2 + 2*time.Second)
	case shortSetter:
		for i := range nExpired {
			x.SetTTL(ids[i], docs[i], time.Millisecond)
		}
		for i := nExpired; i < len(ids); i++ {
			s.Set(ids[i], docs[i])
		}
		time.Sleep(20 * time.Millisecond)
	default:
		return ErrNoExpiry
	}
	return nil
}

// Fill stores docs[i] under ids[i], all live for an hour.
func Fill(s Store, ids []string, docs [][]byte) {
	for i, id := range ids {
		s.Set(id, docs[i])
	}
}

// ttlstore

// TTLStore adapts a *ttlstore.Collection. Set is Upsert of the JSON bytes,
// Get is Read.
type TTLStore struct {
	C     *ttlstore.Collection
	clock *JumpClock
}

func newTTLStore(cfg Config) Store {
	opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(int32(TTL / time.Second))}
	s := &TTLStore{}
	if cfg.Expiry {
		s.clock = NewJumpClock()
		opts.Clock = s.clock
		opts.SweepInterval = ttlstore.ManualSweep
	}
	c, err := ttlstore.New(opts)
	if err != nil {
		panic(err)
	}
	s.C = c
	return s
}

func (s *TTLStore) Set(_ string, payload []byte) {
	if _, err := s.C.Upsert(payload); err != nil {
		panic(err)
	}
}

func (s *TTLStore) Get(id string) bool {
	_, err := s.C.Read(id)
	return err == nil
}

func (s *TTLStore) Close() { s.C.Close() }

func (s *TTLStore) Iterate() int {
	n := 0
	for d := range s.C.All() {
		_ = d
		n++
	}
	return n
}

func (s *TTLStore) Sweep() { s.C.Sweep() }

// Advance moves the collection's clock; it panics without Config.Expiry.
func (s *TTLStore) Advance(d time.Duration) { s.clock.Add(d) }

// otter

type otterStore struct {
	c     *otter.Cache[string, string]
	clock *OtterClock
}

func newOtter(cfg Config) Store {
	o := &otter.Options[string, string]{
		ExpiryCalculator: otter.ExpiryWriting[string, string](TTL),
	}
	s := &otterStore{}
	if cfg.Expiry {
		s.clock = NewOtterClock()
		o.Clock = s.clock
	}
	s.c = otter.Must(o)
	return s
}

func (s *otterStore) Set(id string, payload []byte) { s.c.Set(id, string(payload)) }

func (s *otterStore) Get(id string) bool {
	_, ok := s.c.GetIfPresent(id)
	return ok
}

func (s *otterStore) Close() { s.c.StopAllGoroutines() }

func (s *otterStore) Iterate() int {
	n := 0
	for k, v := range s.c.All() {
		_, _ = k, v
		n++
	}
	return n
}

func (s *otterStore) Sweep() { s.c.CleanUp() }

func (s *otterStore) Advance(d time.Duration) { s.clock.Add(d) }

// ttlcache

type ttlCacheStore struct {
	c *ttlcache.Cache[string, string]
}

// newTTLCache makes a ttlcache without its background clean-up (Start is not
// called, as go-cache gets no janitor); touch keeps its default of
// extending an item's TTL on every hit, which makes Get take the write lock
// and fix the expiry heap.
func newTTLCache(_ Config, touch bool) Store {
	opts := []ttlcache.Option[string, string]{ttlcache.WithTTL[string, string](TTL)}
	if !touch {
		opts = append(opts, ttlcache.WithDisableTouchOnHit[string, string]())
	}
	return &ttlCacheStore{c: ttlcache.New(opts...)}
}

func (s *ttlCacheStore) Set(id string, payload []byte) {
	s.c.Set(id, string(payload), ttlcache.DefaultTTL)
}

func (s *ttlCacheStore) SetTTL(id string, payload []byte, ttl time.Duration) {
	s.c.Set(id, string(payload), ttl)
}

func (s *ttlCacheStore) Get(id string) bool { return s.c.Get(id) != nil }

func (s *ttlCacheStore) Close() {}

func (s *ttlCacheStore) Iterate() int {
	n := 0
	s.c.Range(func(*ttlcache.Item[string, string]) bool {
		n++
		return true
	})
	return n
}

func (s *ttlCacheStore) Sweep() { s.c.DeleteExpired() }

// go-cache

type goCacheStore struct {
	c *gocache.Cache
}

// newGoCache makes a go-cache with no janitor: expired items stay until
// DeleteExpired.
func newGoCache(Config) Store { return &goCacheStore{c: gocache.New(TTL, 0)} }

func (s *goCacheStore) Set(id string, payload []byte) {
	s.c.Set(id, string(payload), gocache.DefaultExpiration)
}

func (s *goCacheStore) SetTTL(id string, payload []byte, ttl time.Duration) {
	s.c.Set(id, string(payload), ttl)
}

func (s *goCacheStore) Get(id string) bool {
	_, ok := s.c.Get(id)
	return ok
}

func (s *goCacheStore) Close() {}

// Iterate uses Items, go-cache's only way to iterate: it copies the live
// items into a new map.
func (s *goCacheStore) Iterate() int { return len(s.c.Items()) }

func (s *goCacheStore) Sweep() { s.c.DeleteExpired() }

// buntdb

type buntStore struct {
	db *buntdb.DB
}

// newBuntDB opens an in-memory buntdb. Its background goroutine deletes
// expired items every second under the write lock; with Config.Expiry it is
// given an OnExpiredSync that deletes nothing, so expired items stay (the
// goroutine still collects them every second). buntdb has no call that
// sweeps on demand.
func newBuntDB(cfg Config) Store {
	db, err := buntdb.Open(":memory:")
	if err != nil {
		panic(err)
	}
	var c buntdb.Config
	if err := db.ReadConfig(&c); err != nil {
		panic(err)
	}
	c.SyncPolicy = buntdb.Never
	c.AutoShrinkDisabled = true
	if cfg.Expiry {
		c.OnExpiredSync = func(string, string, *buntdb.Tx) error { return nil }
	}
	if err := db.SetConfig(c); err != nil {
		panic(err)
	}
	return &buntStore{db: db}
}

func (s *buntStore) Set(id string, payload []byte) { s.SetTTL(id, payload, TTL) }

func (s *buntStore) SetTTL(id string, payload []byte, ttl time.Duration) {
	err := s.db.Update(func(tx *buntdb.Tx) error {
		_, _, err := tx.Set(id, string(payload), &buntdb.SetOptions{Expires: true, TTL: ttl})
		return err
	})
	if err != nil {
		panic(err)
	}
}

func (s *buntStore) Get(id string) bool {
	found := false
	err := s.db.View(func(tx *buntdb.Tx) error {
		_, err := tx.Get(id)
		found = err == nil
		return nil
	})
	if err != nil {
		panic(err)
	}
	return found
}

func (s *buntStore) Close() {
	if err := s.db.Close(); err != nil {
		panic(err)
	}
}

// Iterate walks the keys with Ascend, which also yields expired items not
// yet deleted, so it asks TTL of each key to skip them, as a caller must.
func (s *buntStore) Iterate() int {
	n := 0
	err := s.db.View(func(tx *buntdb.Tx) error {
		return tx.Ascend("", func(key, _ string) bool {
			if _, err := tx.TTL(key); err == nil {
				n++
			}
			return true
		})
	})
	if err != nil {
		panic(err)
	}
	return n
}

// golang-lru/v2 expirable

type lruStore struct {
	c *expirable.LRU[string, string]
}

// newLRU makes an expirable LRU of unlimited size (0), so that nothing is
// evicted for size. Its expiry goroutine can never be stopped (the library
// never closes its done channel), so every lruStore leaks one goroutine that
// wakes every TTL/100.
func newLRU(Config) Store { return &lruStore{c: expirable.NewLRU[string, string](0, nil, TTL)} }

func (s *lruStore) Set(id string, payload []byte) { s.c.Add(id, string(payload)) }

func (s *lruStore) Get(id string) bool {
	_, ok := s.c.Get(id)
	return ok
}

func (s *lruStore) Close() { s.c.Purge() }

// Iterate uses Values, which copies the live values into a new slice.
func (s *lruStore) Iterate() int {
	n := 0
	for _, v := range s.c.Values() {
		if v != "" {
			n++
		}
	}
	return n
}

// String names the store, for messages.
func (k Kind) String() string { return fmt.Sprintf("store=%s", k.Name) }
