package main

import (
	"fmt"
	"slices"

	"github.com/dgraph-io/ristretto/v2"
	arc "github.com/hashicorp/golang-lru/arc/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jellydator/ttlcache/v3"
	"github.com/maypok86/otter/v2"
)

// cache is one cache under simulation, holding at most its capacity in
// keys. Get reports whether key is in it (and is an access, for the
// policy); Set stores key after Get missed it. The peers store the key as
// its own value, and their Get panics if a hit returns another value.
type cache interface {
	Get(key uint64) bool
	Set(key uint64)
	Close()
}

// cacheKind is one column of the table.
type cacheKind struct {
	name string
	new  func(capacity int) cache
	// fixed is set for the caches that replay a sequence the same way
	// every time (no random seed, no goroutine): they are replayed once
	// however many runs are asked for. ttlstore is one since 2026-12-07:
	// its policy hashes ids with a fixed seed unless RandomizeEviction is
	// set (ttlstore-random).
	fixed bool
}

// caches lists the columns, in order.
var caches = []cacheKind{
	{name: "ttlstore", new: newTTLStore, fixed: true},
	{name: "ttlstore-random", new: newTTLStoreRandom},
	{name: "otter", new: newOtter},
	{name: "ristretto", new: newRistretto},
	{name: "ttlcache", new: newTTLCache, fixed: true},
	{name: "lru", new: newLRU, fixed: true},
	{name: "arc", new: newARC, fixed: true},
	{name: "s3fifo (ref)", new: func(capacity int) cache { return newS3FIFO(capacity) }, fixed: true},
}

// traceCaches are the columns of the public traces' table (-traces): the
// two W-TinyLFU caches, ristretto and an LRU, and ttlstore with
// RandomizeEviction, whose runs' range is how far another hash would move
// a row.
var traceCaches = []string{"otter", "ristretto", "lru", "ttlstore", "ttlstore-random"}

// cachesNamed returns the caches with the given names, in that order.
func cachesNamed(names []string) ([]cacheKind, error) {
	var ks []cacheKind
	for _, n := range names {
		i := slices.IndexFunc(caches, func(k cacheKind) bool { return k.name == n })
		if i < 0 {
			return nil, fmt.Errorf("no cache is named %q", n)
		}
		ks = append(ks, caches[i])
	}
	return ks, nil
}

func checkValue(name string, key, v uint64) {
	if v != key {
		panic(fmt.Sprintf("%s: Get(%d) returned the value %d", name, key, v))
	}
}

// otter v2, MaximumSize. Its Executor runs maintenance on the caller, as in
// otter's own simulator: with the default (a goroutine per drain), the
// replay would race with the policy, and reads recorded in its lossy read
// buffer could be dropped before the policy saw them.
type otterCache struct{ c *otter.Cache[uint64, uint64] }

func newOtter(capacity int) cache {
	return otterCache{otter.Must(&otter.Options[uint64, uint64]{
		MaximumSize:     capacity,
		InitialCapacity: capacity,
		Executor:        func(fn func()) { fn() },
	})}
}

func (o otterCache) Get(key uint64) bool {
	v, ok := o.c.GetIfPresent(key)
	if ok {
		checkValue("otter", key, v)
	}
	return ok
}

func (o otterCache) Set(key uint64) { o.c.Set(key, key) }
func (o otterCache) Close()         { o.c.StopAllGoroutines() }

// ristretto v2: NumCounters 10x the capacity, MaxCost the capacity, every
// key of cost 1 (IgnoreInternalCost, or its ~56 bytes of bookkeeping per
// key would count against MaxCost too), BufferItems 64. Wait after every
// Set applies it before the next access, as otter's simulator does; its
// reads still reach the policy through a lossy buffer drained by a
// goroutine, so its figures can move by a few tenths between runs.
type ristrettoCache struct {
	c *ristretto.Cache[uint64, uint64]
}

func newRistretto(capacity int) cache {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, uint64]{
		NumCounters:        int64(10 * capacity),
		MaxCost:            int64(capacity),
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		panic(err)
	}
	return ristrettoCache{c}
}

func (r ristrettoCache) Get(key uint64) bool {
	v, ok := r.c.Get(key)
	if ok {
		checkValue("ristretto", key, v)
	}
	return ok
}

func (r ristrettoCache) Set(key uint64) {
	r.c.Set(key, key, 1)
	r.c.Wait()
}

func (r ristrettoCache) Close() { r.c.Close() }

// ttlcache v3, WithCapacity and no TTL: an LRU (Get moves the item to the
// front). Start is not called: nothing expires.
type ttlCache struct {
	c *ttlcache.Cache[uint64, uint64]
}

func newTTLCache(capacity int) cache {
	return ttlCache{ttlcache.New(ttlcache.WithCapacity[uint64, uint64](uint64(capacity)))}
}

func (t ttlCache) Get(key uint64) bool {
	it := t.c.Get(key)
	if it != nil {
		checkValue("ttlcache", key, it.Value())
	}
	return it != nil
}

func (t ttlCache) Set(key uint64) { t.c.Set(key, key, ttlcache.NoTTL) }
func (t ttlCache) Close()         {}

// hashicorp/golang-lru/v2: the plain LRU.
type lruCache struct{ c *lru.Cache[uint64, uint64] }

func newLRU(capacity int) cache {
	c, err := lru.New[uint64, uint64](capacity)
	if err != nil {
		panic(err)
	}
	return lruCache{c}
}

func (l lruCache) Get(key uint64) bool {
	v, ok := l.c.Get(key)
	if ok {
		checkValue("lru", key, v)
	}
	return ok
}

func (l lruCache) Set(key uint64) { l.c.Add(key, key) }
func (l lruCache) Close()         {}

// hashicorp/golang-lru/arc/v2: ARC.
type arcCache struct{ c *arc.ARCCache[uint64, uint64] }

func newARC(capacity int) cache {
	c, err := arc.NewARC[uint64, uint64](capacity)
	if err != nil {
		panic(err)
	}
	return arcCache{c}
}

func (a arcCache) Get(key uint64) bool {
	v, ok := a.c.Get(key)
	if ok {
		checkValue("arc", key, v)
	}
	return ok
}

func (a arcCache) Set(key uint64) { a.c.Add(key, key) }
func (a arcCache) Close()         {}
