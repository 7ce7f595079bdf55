package ttlstore

// Tests of a Typed view's cache on its own: the check that it agrees with
// its collection (CheckCache, which the black-box tests run after each
// step), one shard's table against a map, the race store is for, the
// registry through which the collection tells views of removals, and
// forgetAll's batches.

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// CheckCache verifies a Typed view's cache against its collection: every
// cached value is filed under an entry the collection stores, and the
// counters agree with what the maps hold. It is meant for tests, when no
// call on the collection is in progress (the ones that run concurrently
// with a removal may hold, for a moment, a value that the removal's forget
// or their own check is about to drop).
func (t *Typed[T]) CheckCache() error {
	var n, bytes int64
	for i := range t.shards {
		s := &t.c.shards[i]
		s.mu.RLock()
		err := t.checkShard(i, &t.shards[i], &n, &bytes)
		s.mu.RUnlock()
		if err != nil {
			return err
		}
	}
	if got := t.n.Load(); got != n {
		return fmt.Errorf("typed cache: CacheLen %d, maps hold %d", got, n)
	}
	if got := t.bytes.Load(); got != bytes {
		return fmt.Errorf("typed cache: CacheBytes %d, tables and values add up to %d", got, bytes)
	}
	return nil
}

// checkShard checks shard i, and adds its values and their sizes to n and
// bytes. The collection's shards[i].mu must be held.
func (t *Typed[T]) checkShard(i int, sh *typedShard[T], n, bytes *int64) error {
	if sh.slots == nil {
		if sh.n != 0 || sh.hashes != nil {
			return fmt.Errorf("typed cache: shard %d has no table but counts %d values", i, sh.n)
		}
		return nil
	}
	size := len(sh.slots)
	if len(sh.hashes) != size {
		return fmt.Errorf("typed cache: shard %d has %d slots but %d hashes", i, size, len(sh.hashes))
	}
	switch {
	case size < minTypedSlots || size&(size-1) != 0:
		return fmt.Errorf("typed cache: shard %d has %d slots", i, size)
	case sh.n == 0 || sh.n*4 > size*3 || size > minTypedSlots && sh.n*4 < size:
		return fmt.Errorf("typed cache: shard %d holds %d values in %d slots", i, sh.n, size)
	}
	count := 0
	for j, sl := range sh.slots {
		e := sl.e
		if e == nil {
			continue
		}
		count++
		h := maphash.String(t.c.seed, e.id())
		if h != sh.hashes[j] {
			return fmt.Errorf("typed cache: %q is filed with hash %x, not %x", e.id(), sh.hashes[j], h)
		}
		if h&(numShards-1) != uint64(i) {
			return fmt.Errorf("typed cache: %q is in shard %d, not %d", e.id(), i, h&(numShards-1))
		}
		for k := sh.home(h); k != j; k = (k + 1) & (size - 1) {
			if sh.slots[k].e == nil {
				return fmt.Errorf("typed cache: shard %d: %q is at %d, cut off from its home %d by the empty slot %d", i, e.id(), j, sh.home(h), k)
			}
		}
		if t.c.shards[i].docs.get(h, e.id()) != e {
			return fmt.Errorf("typed cache: holds a value for %q (_etag %d), which is no longer stored", e.id(), e.etag)
		}
		*bytes += t.valueSize(e)
	}
	if count != sh.n {
		return fmt.Errorf("typed cache: shard %d counts %d values, holds %d", i, sh.n, count)
	}
	*bytes += int64(size) * t.slotSize
	*n += int64(count)
	return nil
}

// flatDoc is a document type whose copies share nothing writable.
type flatDoc struct {
	ID      string    `json:"id"`
	TTL     int32     `json:"ttl,omitempty"`
	Name    string    `json:"name"`
	Score   float64   `json:"score"`
	Seen    time.Time `json:"seen"`
	Pair    [2]string `json:"pair"`
	Address struct {
		City string `json:"city"`
	} `json:"address"`
}

// TestTypedFileAfterRemoval plays the race that store's check is for: a
// reader gets a document, the document is deleted (its forget finds
// nothing cached), and only then does the reader decode and file it.
func TestTypedFileAfterRemoval(t *testing.T) {
	for _, remove := range []string{"delete", "replace", "touch"} {
		t.Run(remove, func(t *testing.T) {
			c, err := New(Options{SweepInterval: ManualSweep})
			require.NoError(t, err)
			defer c.Close()
			tv := NewTyped[flatDoc](c)
			d, err := c.Upsert([]byte(`{"id":"a","name":"old"}`))
			require.NoError(t, err)
			switch remove {
			case "delete":
				require.NoError(t, c.Delete("a"))
			case "replace":
				_, err = c.Upsert([]byte(`{"id":"a","name":"new"}`))
				require.NoError(t, err)
			case "touch":
				_, err = c.Touch("a")
				require.NoError(t, err)
			}
			v, err := tv.value("read", d)
			require.NoError(t, err)
			require.Equal(t, "old", v.Name, "the value of the version read")
			require.Zero(t, tv.CacheLen())
			require.Zero(t, tv.CacheBytes())
			require.NoError(t, tv.CheckCache())
		})
	}
}

// TestTypedCacheShrinks checks that a shard's table shrinks when it holds
// few values, and goes when it holds none, so that a mass expiry hands back
// the tables' memory too.
func TestTypedCacheShrinks(t *testing.T) {
	c, err := New(Options{SweepInterval: ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	tv := NewTyped[flatDoc](c)
	const n = 200 * numShards
	for i := range n {
		_, err := tv.Upsert(flatDoc{ID: fmt.Sprint("d", i)})
		require.NoError(t, err)
	}
	require.Equal(t, n, tv.CacheLen())
	for i := range n - 10 {
		require.NoError(t, c.Delete(fmt.Sprint("d", i)))
	}
	require.Equal(t, 10, tv.CacheLen())
	slots := 0
	for i := range tv.shards {
		slots += len(tv.shards[i].slots)
	}
	require.LessOrEqual(t, slots, 10*minTypedSlots)
	require.NoError(t, tv.CheckCache())
	for i := n - 10; i < n; i++ {
		require.NoError(t, c.Delete(fmt.Sprint("d", i)))
	}
	for i := range tv.shards {
		require.Nil(t, tv.shards[i].slots, "shard %d", i)
	}
	require.NoError(t, tv.CheckCache())
}

// TestTypedShard checks one shard's table against a map, through random
// puts and removes that make it grow, shrink and wrap around.
func TestTypedShard(t *testing.T) {
	var sh typedShard[int]
	model := map[*entry]int{}
	var pool []*entry
	hashes := map[*entry]uint64{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		e, _ := newEntry(8)
		pool = append(pool, e)
		// Some entries share a hash: versions of one id.
		hashes[e] = r.Uint64()
		if i%5 == 1 {
			hashes[e] = hashes[pool[i-1]]
		}
	}
	for step := range 20000 {
		e := pool[r.IntN(len(pool))]
		h := hashes[e]
		if r.IntN(3) > 0 || step > 15000 && r.IntN(2) == 0 {
			_, had := model[e]
			require.Equal(t, !had, sh.put(h, e, step))
			if !had {
				model[e] = step
			}
		} else {
			_, had := model[e]
			require.Equal(t, had, sh.remove(h, e))
			delete(model, e)
		}
		if step%97 == 0 || step > 19900 {
			require.Equal(t, len(model), sh.n)
			for _, e := range pool {
				v, ok := sh.get(hashes[e], e)
				want, had := model[e]
				require.Equal(t, had, ok)
				require.Equal(t, want, v)
			}
			if sh.slots != nil {
				require.LessOrEqual(t, sh.n*4, len(sh.slots)*3)
			}
		}
	}
}

// fakeCache is a typedCache that records what it is told.
type fakeCache struct {
	forgot    []*entry
	forgotAll [][]slot
}

func (f *fakeCache) forget(e *entry)          { f.forgot = append(f.forgot, e) }
func (f *fakeCache) forgetAll(removed []slot) { f.forgotAll = append(f.forgotAll, removed) }

// TestTypedViewsTell checks the registry through which the collection tells
// its views what it removed: nothing to tell while there is no view, and
// once there are, every view told of every removal, a batch in one call.
func TestTypedViewsTell(t *testing.T) {
	var v typedViews
	e1, _ := newEntry(8)
	e2, _ := newEntry(8)
	batch := []slot{{e: e1}, {e: e2}}
	v.forget(e1) // no view: nothing to do, and nothing to fail
	v.forgetAll(batch)

	a, b := &fakeCache{}, &fakeCache{}
	v.caches.Store(&[]typedCache{a, b})
	v.forget(e1)
	v.forgetAll(nil) // an empty batch is not passed on
	v.forgetAll(batch)
	for _, f := range []*fakeCache{a, b} {
		require.Equal(t, []*entry{e1}, f.forgot)
		require.Equal(t, [][]slot{batch}, f.forgotAll)
	}
}

// TestNewTypedRegisters checks that NewTyped registers one cache per type,
// however often it is called, so that each view is told of each removal once.
func TestNewTypedRegisters(t *testing.T) {
	c, err := New(Options{SweepInterval: ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	require.Nil(t, c.views.caches.Load(), "no view: writes have nothing to tell")
	a := NewTyped[flatDoc](c)
	b := NewTyped[*flatDoc](c)
	require.Same(t, a, NewTyped[flatDoc](c))
	caches := *c.views.caches.Load()
	require.Len(t, caches, 2)
	require.Equal(t, typedCache(a), caches[0])
	require.Equal(t, typedCache(b), caches[1])
}

// TestTypedForgetAll checks that forgetAll drops the values of exactly the
// entries it is given, whatever their order: in runs of one shard, as a
// sweep's batch comes, or with each entry in another shard than the one
// before; and that CacheLen and CacheBytes follow.
func TestTypedForgetAll(t *testing.T) {
	cases := []struct {
		name  string
		order func(removed []slot, shard func(slot) uint64)
	}{
		{"runs of one shard", func(removed []slot, shard func(slot) uint64) {
			slices.SortStableFunc(removed, func(a, b slot) int { return cmp.Compare(shard(a), shard(b)) })
		}},
		{"shards alternate", func(removed []slot, shard func(slot) uint64) {
			r := rand.New(rand.NewPCG(3, 4))
			r.Shuffle(len(removed), func(i, j int) { removed[i], removed[j] = removed[j], removed[i] })
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Options{SweepInterval: ManualSweep})
			require.NoError(t, err)
			defer c.Close()
			tv := NewTyped[flatDoc](c)
			const n = 4 * numShards
			var kept, removed []slot
			for i := range n {
				_, err := tv.Upsert(flatDoc{ID: fmt.Sprint("d", i), Name: "x"})
				require.NoError(t, err)
				d, err := c.Read(fmt.Sprint("d", i))
				require.NoError(t, err)
				if i%3 == 0 {
					removed = append(removed, slot{e: d.e})
				} else {
					kept = append(kept, slot{e: d.e})
				}
			}
			require.Equal(t, n, tv.CacheLen())
			shard := func(sl slot) uint64 { return maphash.String(c.seed, sl.e.id()) & (numShards - 1) }
			tc.order(removed, shard)

			tv.forgetAll(removed)
			require.Equal(t, len(kept), tv.CacheLen())
			require.NoError(t, tv.CheckCache(), "CacheBytes agrees with the tables")
			cached := func(sl slot) bool {
				h := maphash.String(c.seed, sl.e.id())
				_, ok := tv.shards[h&(numShards-1)].get(h, sl.e)
				return ok
			}
			for _, sl := range removed {
				require.False(t, cached(sl), "%s was forgotten", sl.e.id())
			}
			for _, sl := range kept {
				require.True(t, cached(sl), "%s was not", sl.e.id())
			}

			tv.forgetAll(removed) // again: nothing is left to drop
			tv.forget(removed[0].e)
			require.Equal(t, len(kept), tv.CacheLen())
			require.NoError(t, tv.CheckCache())
		})
	}
}
