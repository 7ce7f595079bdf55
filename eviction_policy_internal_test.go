package ttlstore

import (
	"container/list"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/sketch"
)

// The tests in this file drive EvictColdest's policy on its own, through
// policySim (eviction_replay_internal_test.go), with no collection around
// it: what it promises the bound code (its queues hold exactly the stored
// documents), and what it is for (it keeps what is read often, and a scan
// does not flush it).

// checkSim verifies the policy's queues against the simulated collection.
func checkSim(t *testing.T, s *policySim) {
	t.Helper()
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	require.NoError(t, s.p.check(len(s.docs), func(e *entry) bool {
		for _, d := range s.docs {
			if d == e {
				return true
			}
		}
		return false
	}))
	require.GreaterOrEqual(t, s.p.share, 0.0)
	require.LessOrEqual(t, s.p.share, windowMax)
}

// overwrite replaces the stored document of k, as an Upsert of a stored id
// does.
func (s *policySim) overwrite(k uint64) {
	old := s.docs[k]
	e := simEntry(k)
	s.docs[k] = e
	s.p.replaced(old, e)
}

// remove deletes the stored document of k, as a Delete does.
func (s *policySim) remove(k uint64) {
	e := s.docs[k]
	delete(s.docs, k)
	s.p.removedOne(e)
}

// TestColdestAloneKeepsItsQueues replays random reads, overwrites and
// deletes of a small key space against the policy at several capacities,
// and checks after each step that its queues hold exactly the stored
// documents, each once, where it records (the invariant checkColdest
// checks in a collection), and that its victims are stored documents
// (policySim panics otherwise).
func TestColdestAloneKeepsItsQueues(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("deterministic (fixed seeds), and checked by the first run")
	}
	for _, tc := range []struct {
		name     string
		capacity int
		keys     int
	}{
		{"one document", 1, 5},
		{"a few", 8, 40},
		{"more keys than fit", 100, 1000},
		{"everything fits", 100, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.capacity), uint64(tc.keys)))
			s := newPolicySim(tc.capacity)
			for i := range 20_000 {
				k := uint64(r.IntN(tc.keys))
				switch op := r.IntN(20); {
				case op == 0 && s.docs[k] != nil:
					s.overwrite(k)
				case op == 1 && s.docs[k] != nil:
					s.remove(k)
				default:
					s.access(k)
				}
				require.LessOrEqual(t, len(s.docs), tc.capacity)
				if i%97 == 0 || tc.capacity < 10 {
					checkSim(t, s)
				}
			}
			checkSim(t, s)
		})
	}
}

// TestColdestAloneVictimSkips checks that victim never picks the document
// whose id it is told to skip (the one being written), and puts it back.
func TestColdestAloneVictimSkips(t *testing.T) {
	s := newPolicySim(3)
	for k := range uint64(3) {
		s.access(k)
	}
	for k := range uint64(3) {
		v := s.p.victim(string(rune('0'+k)), nil, false)
		require.NotNil(t, v)
		assert.NotEqual(t, string(rune('0'+k)), v.id())
		s.p.add(v) // not evicted after all: it goes back
		checkSim(t, s)
	}
	// The only document left is the one to skip: none.
	s.remove(0)
	s.remove(1)
	v := s.p.victim("2", nil, false)
	assert.Nil(t, v)
	checkSim(t, s)
}

// TestColdestAloneResistsScans reads a hot set of 100 keys ten times each,
// then scans 20,000 new keys, each written and read once at once (as a
// read-through cache fills itself): the hot set is still there.
func TestColdestAloneResistsScans(t *testing.T) {
	s := newPolicySim(1000)
	for range 10 {
		for k := range uint64(100) {
			s.access(k)
		}
	}
	for k := uint64(1000); k < 21_000; k++ {
		s.access(k)
		s.access(k)
	}
	kept := 0
	for k := range uint64(100) {
		if s.docs[k] != nil {
			kept++
		}
	}
	assert.GreaterOrEqual(t, kept, 95, "hot keys left after the scan")
	checkSim(t, s)
}

// TestColdestAloneBeatsLRU replays a skewed sequence (a Zipf over 100k
// keys), a loop over 1.5 times the capacity, and one over 20 times a small
// capacity (the LIRS loop trace at 5 % of its keys, where a frozen part of
// the loop hits 5 %): the policy's hit ratio is above an LRU's on all, since
// it admits by frequency.
func TestColdestAloneBeatsLRU(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("deterministic (fixed seeds), and checked by the first run")
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, 100_000)
	for _, tc := range []struct {
		name     string
		capacity int
		next     func(i int) uint64
		margin   float64 // points above LRU, at least
	}{
		{"zipf", 1000, func(int) uint64 { return zipf.Uint64() }, 3},
		{"loop", 1000, func(i int) uint64 { return uint64(i % 1500) }, 30},
		{"long loop, small cache", 51, func(i int) uint64 { return uint64(i % 1011) }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 300_000
			s := newPolicySim(tc.capacity)
			lru := newTestLRU(tc.capacity)
			hits, lruHits := 0, 0
			for i := range n {
				k := tc.next(i)
				if s.access(k) {
					hits++
				}
				if lru.access(k) {
					lruHits++
				}
			}
			ratio, lruRatio := 100*float64(hits)/n, 100*float64(lruHits)/n
			t.Logf("%s: %.1f%%, LRU %.1f%%", tc.name, ratio, lruRatio)
			assert.Greater(t, ratio, lruRatio+tc.margin)
			checkSim(t, s)
		})
	}
}

// testLRU is an LRU of uint64 keys, to hold the policy against.
type testLRU struct {
	capacity int
	order    *list.List
	at       map[uint64]*list.Element
}

func newTestLRU(capacity int) *testLRU {
	return &testLRU{capacity: capacity, order: list.New(), at: make(map[uint64]*list.Element)}
}

func (l *testLRU) access(k uint64) bool {
	if e := l.at[k]; e != nil {
		l.order.MoveToFront(e)
		return true
	}
	if l.order.Len() >= l.capacity {
		delete(l.at, l.order.Remove(l.order.Back()).(uint64))
	}
	l.at[k] = l.order.PushFront(k)
	return false
}

// TestGhosts checks the ghosts' memory: a hash is remembered as its
// side's until span more evictions of that side, whatever the other side
// evicts meanwhile; a hash never recorded, or one of the same bucket
// that was, is not.
func TestGhosts(t *testing.T) {
	var g ghosts
	g.size(160) // span: 10
	require.EqualValues(t, 10, g.span)
	r := rand.New(rand.NewPCG(3, 4))
	w, m := r.Uint64(), r.Uint64()
	g.record(w, ghostWindow)
	g.record(m, ghostMain)
	assert.Equal(t, ghostWindow, g.side(w))
	assert.Equal(t, ghostMain, g.side(m))
	assert.Equal(t, ghostNone, g.side(r.Uint64()), "never recorded")
	assert.Equal(t, ghostNone, g.side(w^1<<40), "w's bucket, another hash")
	for i := range 20 {
		g.record(r.Uint64(), ghostMain) // the other side: w stays
		if i < 8 {
			assert.Equal(t, ghostMain, g.side(m), "after %d more of its side", i+1)
		}
	}
	assert.Equal(t, ghostWindow, g.side(w), "the main part's evictions do not age the window's ghosts")
	assert.Equal(t, ghostNone, g.side(m), "20 evictions of its side later")
	for range 9 {
		g.record(r.Uint64(), ghostWindow)
	}
	assert.Equal(t, ghostWindow, g.side(w), "9 evictions of its side later")
	g.record(r.Uint64(), ghostWindow)
	assert.Equal(t, ghostNone, g.side(w), "10 evictions of its side later")
	other := w&0xffff_ffff | (w>>32+2)<<32 // w's bucket, another hash
	g.record(other, ghostWindow)
	assert.Equal(t, ghostWindow, g.side(other))
	assert.Equal(t, ghostNone, g.side(w))
}

// TestGhostsShareABucket checks that ghosts whose hashes fall in one
// bucket are all remembered, of either side, eight of them: a
// ghost of a hash recorded again takes its own slot, and a new one takes
// the slot of the oldest (by the evictions of its own side since). A
// direct-mapped table kept one ghost a side there.
func TestGhostsShareABucket(t *testing.T) {
	var g ghosts
	g.size(160) // span: 10
	buckets := uint64(len(g.slots) / ghostWays)
	r := rand.New(rand.NewPCG(5, 6))
	sides := func(i int) uint8 { return ghostWindow + uint8(i%2) }
	var hs []uint64
	for i := range 8 {
		hs = append(hs, r.Uint64()&^(buckets-1)|3) // all in bucket 3
		g.record(hs[i], sides(i))
	}
	for i, h := range hs {
		assert.Equal(t, sides(i), g.side(h), "ghost %d of 8 in one bucket", i)
	}
	g.record(hs[0], ghostWindow) // its own slot: the others stay
	for i, h := range hs {
		assert.Equal(t, sides(i), g.side(h), "ghost %d, after the first was recorded again", i)
	}
	// One more of the main part's: hs[1] is the oldest (4 evictions of
	// its side since; hs[2], the window's oldest, 3).
	g.record(r.Uint64()&^(buckets-1)|3, ghostMain)
	assert.Equal(t, ghostNone, g.side(hs[1]), "the oldest gave its slot")
	for i, h := range hs {
		if i != 1 {
			assert.Equal(t, sides(i), g.side(h), "ghost %d, after one more", i)
		}
	}
}

// TestGhostsRememberTheirSpan records evictions of random hashes, of
// either side at random, and counts the hashes of each side's last span
// evictions that the ghosts still know: all but a few in ten thousand in
// the smallest table, and at least 98 % where the table is fullest (two
// slots a live ghost). A ghost forgotten early moves the window and the
// sketch's aging by chance, by the hash seed; a direct-mapped table of a
// slot a side forgot 20 % where fullest, and 12 % at 284 documents.
func TestGhostsRememberTheirSpan(t *testing.T) {
	for _, tc := range []struct {
		docs int
		min  float64
	}{
		{284, 0.9995},        // span 17 in the smallest table
		{2 * 8192, 0.98},     // span 1024: 2048 live ghosts in 4096 slots
		{2*8192 + 16, 0.999}, // span 1025: in 8192 slots
	} {
		var g ghosts
		g.size(tc.docs)
		r := rand.New(rand.NewPCG(uint64(tc.docs), 7))
		var last [3][]uint64
		known, all := 0, 0
		for i := range 40 * int(g.span) {
			h, side := r.Uint64(), ghostWindow+uint8(r.IntN(2))
			g.record(h, side)
			last[side] = append(last[side], h)
			if i%int(g.span) != 0 || i < 4*int(g.span) {
				continue
			}
			for _, s := range []uint8{ghostWindow, ghostMain} {
				for _, h := range last[s][len(last[s])-int(g.span):] {
					all++
					if g.side(h) == s {
						known++
					}
				}
			}
		}
		assert.GreaterOrEqual(t, float64(known)/float64(all), tc.min, "%d documents, %d slots, span %d: %d of %d known", tc.docs, len(g.slots), g.span, known, all)
	}
}

// TestColdestAloneSizesTheWindow replays sequences whose best window is
// known: a Zipf over many keys and a loop longer than the cache, where
// frequency is all (the window should stay small); and a working set that
// moves on, each key read a few times in a burst soon after it is first
// written and then never again, where only recency counts (the window
// should grow well past its first 1 %, and the hit ratio come near the
// LRU's).
func TestColdestAloneSizesTheWindow(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("deterministic (fixed seeds), and checked by the first run")
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(5, 6)), 1.1, 1, 1_000_000)
	burst := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name     string
		next     func(i int) uint64
		min, max float64 // the window's share at the end
	}{
		{"zipf", func(int) uint64 { return zipf.Uint64() }, 0, 0.05},
		{"loop", func(i int) uint64 { return uint64(i % 1500) }, 0, 0.05},
		// Key i/4 is new at access i; each access reads one of the
		// last 200 keys, at random, so each key is read about 4 times
		// within about 800 accesses of its first.
		{"recency", func(i int) uint64 { return uint64(max(0, i/4-burst.IntN(200))) }, 0.1, windowMax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const capacity, n = 1000, 300_000
			s := newPolicySim(capacity)
			lru := newTestLRU(capacity)
			hits, lruHits := 0, 0
			for i := range n {
				k := tc.next(i)
				if s.access(k) {
					hits++
				}
				if lru.access(k) {
					lruHits++
				}
			}
			t.Logf("%s: window %.3f; %.1f%%, LRU %.1f%%; window +%d -%d", tc.name, s.p.share,
				100*float64(hits)/n, 100*float64(lruHits)/n, s.p.stats.grown, s.p.stats.shrunk)
			assert.GreaterOrEqual(t, s.p.share, tc.min)
			assert.LessOrEqual(t, s.p.share, tc.max)
			if tc.name == "recency" {
				assert.Greater(t, float64(hits), 0.95*float64(lruHits), "near the LRU's hit ratio")
			}
			checkSim(t, s)
		})
	}
}

// TestColdestAgesOnRejectedReturn checks that a new document whose ghost
// is the window's side's (a candidate that lost its duel lately) ages the
// sketch by staleAge uses, and one whose ghost is the main part's does
// not.
func TestColdestAgesOnRejectedReturn(t *testing.T) {
	for _, tc := range []struct {
		side   uint8
		halved bool
	}{{ghostWindow, true}, {ghostMain, false}} {
		var picked atomic.Int64
		p := newColdest(rand.Uint64(), 1000, nil, &picked, nil)
		const h, ghost = uint64(0x1234_5678_9abc_def0), uint64(0x0fed_cba9_8765_4321)
		for range 4 {
			p.sketch.Increment(h)
		}
		p.sketch.Age(p.sketch.Sample() - 4 - staleAge) // one use short of halving, but for staleAge
		require.Equal(t, 4, p.sketch.Estimate(h))
		p.ghosts.size(1000)
		p.ghosts.record(ghost, tc.side)
		p.mu.Lock()
		p.adapt(ghost)
		p.mu.Unlock()
		want := 4
		if tc.halved {
			want = 2
		}
		assert.Equal(t, want, p.sketch.Estimate(h), "side %d", tc.side)
	}
}

// TestColdestWindowStepFollowsDrift checks the window's step: one
// document a ghost while the ghosts' verdicts come mixed, and more while
// they keep pointing one way (so that the window does not lag a workload
// that wants it larger for a whole trace, as on P3 at 40 % of its keys).
func TestColdestWindowStepFollowsDrift(t *testing.T) {
	const capacity, hits = 1000, 300
	setup := func() (*policySim, uint64, uint64) {
		s := newPolicySim(capacity)
		for k := range uint64(capacity) {
			s.access(k)
		}
		const w, m = uint64(0x1111_2222_3333_4444), uint64(0x5555_6666_7777_8888)
		s.p.ghosts.size(capacity)
		s.p.ghosts.record(w, ghostWindow)
		s.p.ghosts.record(m, ghostMain)
		return s, w, m
	}

	s, w, m := setup()
	start := s.p.share
	s.p.mu.Lock()
	for i := range hits {
		s.p.adapt([2]uint64{w, m}[i%2])
	}
	s.p.mu.Unlock()
	assert.InDelta(t, start, s.p.share, 2.0/capacity, "mixed verdicts: one document a ghost, back where it was")

	s, w, m = setup()
	s.p.mu.Lock()
	for range hits {
		s.p.adapt(w)
	}
	s.p.mu.Unlock()
	assert.Greater(t, s.p.share, start+1.5*hits/capacity, "verdicts all the window's: more than one document a ghost")
	assert.LessOrEqual(t, s.p.share, windowMax)
	s.p.ghosts.record(m, ghostMain)
	before := s.p.share
	s.p.mu.Lock()
	s.p.adapt(m)
	s.p.mu.Unlock()
	assert.InDelta(t, before-1.0/capacity, s.p.share, 1e-9, "a verdict against the drift: one document")
	checkSim(t, s)
}

// TestRandomizeEvictionSeeds checks the seeds of the policy's hash: the
// fixed one (0) by default, so that the hash of an id is the same in every
// collection and run; a random one, another in each collection, with
// Options.RandomizeEviction.
func TestRandomizeEvictionSeeds(t *testing.T) {
	hashOf := func(randomize bool) uint64 {
		c, err := New(Options{MaxDocuments: 10, Eviction: EvictColdest, RandomizeEviction: randomize})
		require.NoError(t, err)
		defer c.Close()
		return c.lim.cold.hash(simEntry(12345))
	}
	assert.Equal(t, sketch.Hash(0, "12345"), hashOf(false))
	assert.Equal(t, hashOf(false), hashOf(false))
	a, b := hashOf(true), hashOf(true)
	assert.NotEqual(t, a, b)
	assert.NotEqual(t, hashOf(false), a)
}
