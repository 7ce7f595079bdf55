package ttlstore

import (
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While SetDefaultTTL is under way (redefining is odd), Read does not trust
// its lock-free look: it takes the shard's lock, so it waits for the change
// and then judges by the new DefaultTTL (R12).
func TestReadWaitsForSetDefaultTTL(t *testing.T) {
	clk := clock.NewMock()
	c, err := New(Options{Clock: clk, SweepInterval: ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Upsert([]byte(`{"id":"a"}`))
	require.NoError(t, err)
	clk.Add(20 * time.Second)

	// What SetDefaultTTL(10) does, stopped half way: every lock held,
	// redefining odd, the DefaultTTL not yet changed.
	c.lockAll()
	c.redefining.Add(1)
	type result struct {
		d   Document
		err error
	}
	got := make(chan result, 1)
	go func() {
		d, err := c.Read("a")
		got <- result{d, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("Read returned %v, %v while a SetDefaultTTL held the locks", r.d, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	c.def.Store(10) // "a" was written 20 s ago: expired under the new setting
	c.redefining.Add(1)
	c.unlockAll()
	r := <-got
	assert.True(t, errors.Is(r.err, ErrNotFound), "Read after the change: %v", r.err)

	// With no change under way, Read takes no lock: it returns while
	// another goroutine holds every lock.
	c.lockAll()
	defer c.unlockAll()
	_, err = c.Read("a")
	assert.True(t, errors.Is(err, ErrNotFound), "%v", err)
	_, err = c.Read("b")
	assert.True(t, errors.Is(err, ErrNotFound), "%v", err)
}

// The fields every call reads (the seed, the DefaultTTL, redefining,
// closed) sit at least a cache line away from those that writes change
// (the usage in lim) and those that reads change (counts), and no cache line
// holds the counters of two stripes.
func TestHotFieldsApart(t *testing.T) {
	var c Collection
	line := uintptr(64)
	readEnd := unsafe.Offsetof(c.closed) + unsafe.Sizeof(c.closed)
	for _, f := range []uintptr{unsafe.Offsetof(c.seed), unsafe.Offsetof(c.def), unsafe.Offsetof(c.redefining)} {
		assert.Less(t, f, readEnd)
	}
	assert.GreaterOrEqual(t, unsafe.Offsetof(c.lim), readEnd+line, "lim is a cache line past the fields reads need")
	limEnd := unsafe.Offsetof(c.lim) + unsafe.Sizeof(c.lim)
	assert.GreaterOrEqual(t, unsafe.Offsetof(c.policyMu), limEnd+line)
	assert.GreaterOrEqual(t, unsafe.Offsetof(c.counts), unsafe.Offsetof(c.policyMu)+unsafe.Sizeof(c.policyMu)+line)
	lookupsEnd := unsafe.Offsetof(c.lookups) + unsafe.Sizeof(c.lookups)
	assert.GreaterOrEqual(t, unsafe.Offsetof(c.lookups), unsafe.Offsetof(c.minExps)+unsafe.Sizeof(c.minExps)+line, "lookups are a line past minExps")
	assert.GreaterOrEqual(t, unsafe.Offsetof(c.swept), lookupsEnd+line, "swept is a line past lookups")
	// A Collection is more than 32 KiB, so its allocation starts a page:
	// each shard's lookup is then within one line.
	assert.Greater(t, unsafe.Sizeof(c), uintptr(32<<10))
	assert.Equal(t, uintptr(32), unsafe.Sizeof(c.lookups[0]))
	assert.Zero(t, unsafe.Offsetof(c.lookups)%32, "a shard's lookup across two lines")
	var s readStripe
	gap := unsafe.Sizeof(s) - (unsafe.Offsetof(s.misses) + unsafe.Sizeof(s.misses) - unsafe.Offsetof(s.hits))
	assert.GreaterOrEqual(t, gap, line, "bytes between one stripe's counters and the next's")
	assert.GreaterOrEqual(t, unsafe.Offsetof(s.hits), line-unsafe.Sizeof(s.hits)*2, "the first stripe's counters are a line past policyMu's")
}

// Goroutines whose stacks are next to each other, at the same depth, count
// their reads in stripes of their own: 2 KiB stacks (a goroutine's first),
// as RunParallel's goroutines have, and larger ones.
func TestReadStripesApart(t *testing.T) {
	for _, size := range []uintptr{2 << 10, 4 << 10, 8 << 10} {
		base := uintptr(0xc000_1234_0000) // a span's start
		for depth := uintptr(64); depth < size; depth += size / 4 {
			seen := map[int]uintptr{}
			for i := uintptr(0); i < readStripes*(2<<10)/size; i++ {
				sp := base + (i+1)*size - depth
				if j, ok := seen[stripeOf(sp)]; ok {
					t.Fatalf("stacks of %d bytes, %d and %d, depth %d: stripe %d both", size, j, i, depth, stripeOf(sp))
				}
				seen[stripeOf(sp)] = i
			}
		}
	}
}

// limits' counters that writes change (docs to evictedBytes) are on one
// cache line of their own, apart from the bounds and the rest that writes
// read.
func TestLimitsLinesApart(t *testing.T) {
	var c Collection
	var l limits
	line := uintptr(64)
	assert.Zero(t, unsafe.Offsetof(c.lim)%line, "lim starts a line")
	readEnd := unsafe.Offsetof(l.floor) + unsafe.Sizeof(l.floor)
	for _, f := range []uintptr{unsafe.Offsetof(l.maxDocs), unsafe.Offsetof(l.maxBytes),
		unsafe.Offsetof(l.policy), unsafe.Offsetof(l.cold), unsafe.Offsetof(l.waiting)} {
		assert.Less(t, f, readEnd)
	}
	first := unsafe.Offsetof(l.docs)
	assert.Zero(t, first%line, "the counters start a line")
	assert.GreaterOrEqual(t, first, readEnd)
	for _, f := range []uintptr{unsafe.Offsetof(l.bytes), unsafe.Offsetof(l.filing), unsafe.Offsetof(l.filed),
		unsafe.Offsetof(l.evicted), unsafe.Offsetof(l.evictedBytes), unsafe.Offsetof(l.policyBytes)} {
		assert.Less(t, f+8, first+line+1, "a counter every write changes past the counters' line")
	}
}
