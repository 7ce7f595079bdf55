package ttlstore

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

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
