package bench

import (
	"math/bits"
	"time"
)

// subBits is log2 of the number of buckets per power of two: 32, so a
// recorded value is known within 1/32 (about 3 %).
const subBits = 5

// Histogram counts durations in log-linear buckets: exact below 64 ns, then
// 32 buckets per power of two. Record is O(1) and never allocates, so it can
// sit in the timed loop. The zero value is empty and ready to use; it is not
// safe for concurrent use.
type Histogram struct {
	counts [64 << subBits]uint64
	n      uint64
	max    time.Duration
}

func bucketOf(v uint64) int {
	e := bits.Len64(v) - (subBits + 1)
	if e < 0 {
		e = 0
	}
	return e<<subBits + int(v>>uint(e))
}

// bucketRange returns the smallest and largest value in bucket b.
func bucketRange(b int) (lo, hi uint64) {
	if b < 2<<subBits {
		return uint64(b), uint64(b)
	}
	e := b>>subBits - 1
	m := uint64(b - e<<subBits)
	return m << uint(e), (m+1)<<uint(e) - 1
}

// Record adds one duration; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	h.n++
	if d > h.max {
		h.max = d
	}
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the longest duration recorded, exactly.
func (h *Histogram) Max() time.Duration { return h.max }

// Quantile returns the q-quantile (0 < q <= 1): the midpoint of the bucket
// that holds it, capped at Max. It returns 0 for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(b)
			return min(time.Duration((lo+hi)/2), h.max)
		}
	}
	return h.max
}

// Merge adds the durations recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	for b, c := range o.counts {
		h.counts[b] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}
