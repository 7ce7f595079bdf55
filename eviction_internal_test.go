package ttlstore

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSketch counts keys into sketches of several sizes, each filled to
// the number of documents it is sized for: a count-min sketch never
// estimates a key below its count (up to 15), its estimates of the others
// stay close, the four counters of a key share one cache line, and halving
// halves.
func TestSketch(t *testing.T) {
	for _, n := range []int{1, 100, 5000, 100_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var s sketch
			s.ensure(n)
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
					s.increment(h)
				}
			}
			over := 0
			for i, h := range keys {
				got := s.estimate(h)
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
				before[i] = s.estimate(h)
			}
			s.halve()
			for i, h := range keys {
				require.Equal(t, before[i]/2, s.estimate(h), "key %d after halving", i)
			}
		})
	}
}

// TestQueue checks the FIFO order of a queue through pushes, removals at
// the head, in the middle and at the tail, and the compactions they cause,
// and that removals at the tail leave no holes behind.
func TestQueue(t *testing.T) {
	type op struct {
		what byte // 'a' to push (add) entry i, 'r' to remove it, 'p' to pop
		i    int
	}
	// Pushes of new entries, each removed at once: candidates that lose
	// their duel. The queue stays at one entry and never compacts.
	losers := []op{{'a', 0}}
	for i := 1; i < 90; i++ {
		losers = append(losers, op{'a', i}, op{'r', i})
	}
	tests := []struct {
		name string
		ops  []op
		want []int // the entries, in order, at the end
		span int   // tail - head at the end
	}{
		{"pushes", []op{{'a', 0}, {'a', 1}, {'a', 2}}, []int{0, 1, 2}, 3},
		{"a pop", []op{{'a', 0}, {'a', 1}, {'a', 2}, {'p', 0}}, []int{1, 2}, 2},
		{"removed in the middle", []op{{'a', 0}, {'a', 1}, {'a', 2}, {'r', 1}}, []int{0, 2}, 3},
		{"removed at the tail", []op{{'a', 0}, {'a', 1}, {'a', 2}, {'r', 2}}, []int{0, 1}, 2},
		{"removed at the tail after a hole", []op{{'a', 0}, {'a', 1}, {'a', 2}, {'r', 1}, {'r', 2}}, []int{0}, 1},
		{"all removed, from the tail", []op{{'a', 0}, {'a', 1}, {'r', 1}, {'r', 0}}, nil, 0},
		{"pushed after a removal at the tail", []op{{'a', 0}, {'a', 1}, {'r', 1}, {'a', 2}}, []int{0, 2}, 2},
		{"candidates that lose at once", losers, []int{0}, 1},
	}
	entries := make([]*entry, 100)
	for i := range entries {
		entries[i] = &entry{}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q queue
			for _, o := range tt.ops {
				switch o.what {
				case 'a':
					q.push(entries[o.i])
				case 'r':
					q.remove(entries[o.i])
				case 'p':
					q.pop()
				}
			}
			assert.Equal(t, tt.span, int(q.tail-q.head), "span")
			var got []int
			for e := q.pop(); e != nil; e = q.pop() {
				got = append(got, slices.Index(entries, e))
			}
			assert.Equal(t, tt.want, got)
			assert.Zero(t, q.n)
		})
	}
}
