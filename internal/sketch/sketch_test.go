package sketch

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSketch counts keys into sketches of several sizes, each filled to
// the number of keys it is sized for: a count-min sketch never
// estimates a key below its count (up to 15), its estimates of the others
// stay close, the four counters of a key share one cache line, and halving
// halves.
func TestSketch(t *testing.T) {
	for _, n := range []int{1, 100, 5000, 100_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var s Sketch
			s.Ensure(n)
			require.Zero(t, len(s.table)%8, "whole blocks")
			r := rand.New(rand.NewPCG(uint64(n), 2))
			keys := make([]uint64, n)
			counts := make([]int, n)
			total := 0
			for i := range keys {
				keys[i] = r.Uint64()
				counts[i] = r.IntN(4)
				total += counts[i]
			}
			require.Less(t, total, s.sample, "no halving while counting")
			for i, h := range keys {
				for range counts[i] {
					s.Increment(h)
				}
			}
			over := 0
			for i, h := range keys {
				got := s.Estimate(h)
				require.GreaterOrEqual(t, got, counts[i], "key %d", i)
				over += got - counts[i]
			}
			assert.Less(t, float64(over)/float64(n), 0.5, "mean overestimate")

			for _, h := range keys[:min(n, 1000)] {
				b, c := s.block(h)
				first, _ := counter(b, c, 0)
				line := uintptr(unsafe.Pointer(first)) &^ 63
				for i := range uint(4) {
					w, _ := counter(b, c, i)
					assert.Equal(t, line, uintptr(unsafe.Pointer(w))&^63, "counter %d of %#x is on another cache line", i, h)
				}
			}

			before := make([]int, len(keys))
			for i, h := range keys {
				before[i] = s.Estimate(h)
			}
			s.Halve()
			for i, h := range keys {
				require.Equal(t, before[i]/2, s.Estimate(h), "key %d after halving", i)
			}
		})
	}
}

// TestSketchSmall checks that a sketch sized for few keys still has
// minWords words, halves after ten uses per key it is sized for (rounded
// up to a power of two, and at least minSampleKeys), and keeps its counts when sized for more keys
// that still fit in its table.
func TestSketchSmall(t *testing.T) {
	var s Sketch
	s.Ensure(10)
	require.Len(t, s.table, minWords)
	require.Equal(t, 10*minSampleKeys, s.Sample(), "sized for 10 keys, ages as if for minSampleKeys")
	s.Ensure(300)
	require.Equal(t, 5120, s.Sample())
	h := uint64(0x1234_5678_9abc_def0)
	for range 3 {
		s.Increment(h)
	}
	s.Ensure(1000)
	assert.Equal(t, 10240, s.Sample())
	assert.Equal(t, 3, s.Estimate(h), "counts kept: the table did not grow")
	s.Ensure(10_000)
	assert.Len(t, s.table, 16384)
	assert.Equal(t, 0, s.Estimate(h), "counts forgotten: the table grew")
}

// TestCountersAsPlaced checks that Count and Estimate, which write the
// four counters out, use the counters counter places: Estimate is their
// least, and Count adds one to each of them that holds it, unless it is 15,
// and to nothing else (conservative update).
func TestCountersAsPlaced(t *testing.T) {
	var s Sketch
	s.Ensure(1 << 10)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		h := rng.Uint64()
		b, c := s.block(h)
		before := *b
		want := uint64(15)
		for i := range uint(4) {
			w, sh := counter(b, c, i)
			want = min(want, *w>>sh&15)
		}
		require.Equal(t, int(want), s.Estimate(h), "estimate of %#x", h)
		grew := s.Count(h)
		expect := before
		anyGrew := false
		for i := range uint(4) {
			if w, sh := counter(&expect, c, i); want < 15 && *w>>sh&15 == want {
				*w += 1 << sh
				anyGrew = true
			}
		}
		require.Equal(t, expect, *b, "counters of %#x after Count", h)
		require.Equal(t, anyGrew, grew, "Count's report for %#x", h)
	}
}
