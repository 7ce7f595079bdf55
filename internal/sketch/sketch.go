// Package sketch is the frequency sketch of ttlstore's EvictColdest policy:
// a count-min sketch of 4-bit counters that estimates how often each of
// many keys was used, in 8 bytes a key, and forgets old uses by halving
// every counter now and then, as Caffeine's FrequencySketch does
// (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache
// Admission Policy", 2017).
//
// What it promises: an estimate is never below the number of times a key
// was counted since the last halving, nor above 15 (the counters
// saturate); it is above the count only when other keys share all four of
// the key's counters, which stays rare while the sketch holds about as
// many keys as it was sized for. A halving halves every estimate (rounding
// down). Counting or estimating a key costs one cache miss: its four
// counters are on one cache line. Keys are given as 64-bit hashes, which
// the caller computes with a seed of its own; the sketch mixes them again,
// so a hash whose low bits are poor still spreads.
//
// A Sketch is not safe for concurrent use: the policy calls it under its
// mutex. The zero Sketch must be sized with Ensure before use.
package sketch

import "math/bits"

// Sketch is a count-min sketch of 4-bit counters. Each key counts in four
// counters, and its frequency is the least of them. The four are in one
// block of eight words, 64 bytes, a cache line: one in each pair of words,
// picked by the hash, so that counting or estimating a key costs one cache
// miss rather than four (for a sketch of 100k keys, 1 MiB, that was four
// misses in each of the sketch's calls a write at the bound makes, about
// six a write). When the uses counted toward aging reach ten times the
// number of keys it is sized for (rounded up to a power of two, and at
// least minSampleKeys), every counter is halved, so that the sketch
// forgets old popularity. It holds
// one word (16 counters) per key it is sized for, 8 bytes, and never fewer
// than minWords.
type Sketch struct {
	table     []uint64
	blockMask uint64 // the number of blocks less one
	adds      int    // uses counted toward the next halving
	sample    int    // uses between halvings
}

// minWords is the fewest words a sketch has, 32 KiB. A cache of a few
// hundred keys sees many times as many keys go by between two halvings,
// and a sketch of one word a key shares most of its counters between
// them: which keys collide then decides which are admitted, and so the hit
// ratio, more than how often they were used. On the LIRS traces at 5 to 80
// % of their keys (50 to 8,000 documents), with the window held at 1 %, a
// sketch of one word a document let EvictColdest's hit ratio move by up
// to 2.5 points between runs that differed only in the hash seed (by more
// than half a point on 14 of 40 rows); one of 4096 words, by 0.6 at most
// (on one row).
const minWords = 4096

// minSampleKeys is the fewest keys a sketch ages as if sized for: it
// halves after no fewer than ten times as many uses, 2,560. A small cache
// must tell apart keys that come back after many more uses than it holds
// documents: when the sketch halves more often than such a key comes
// back, its count is back to 0 before each of its uses, and it ties with,
// or loses to, any newcomer. On the LIRS loop trace (1,011 keys read in
// turn) at 51 documents, a halving every 640 uses let candidates win 15 %
// of their duels, and the cache hit nothing, as LRU; every 2,560, they win
// 0.5 % and it keeps a fixed part of the loop (4.6 %). The other rows it
// moves (the caches of fewer than 129 documents): cs at 70 documents
// +0.3, gli at 126 +0.45, cpp at 61 -0.04. Every 1,280: loop 4.0, cpp
// -0.3; every 4,096 and more, cpp at 61 -1.7 to -2.8.
const minSampleKeys = 256

// Ensure sizes the sketch for n keys, forgetting what it counted if its
// table has to grow. It never shrinks.
func (s *Sketch) Ensure(n int) {
	want := max(minSampleKeys, 1<<bits.Len(uint(max(n, 1)-1)))
	if s.sample >= 10*want {
		return
	}
	words := max(want, minWords)
	if len(s.table) != words {
		s.table = make([]uint64, words)
		s.blockMask = uint64(words/8 - 1)
	}
	s.adds = 0
	s.sample = 10 * want
}

// Bytes is the memory the sketch's table holds.
func (s *Sketch) Bytes() int { return 8 * len(s.table) }

// Sample is the number of uses between two halvings.
func (s *Sketch) Sample() int { return s.sample }

// seeds mix a hash into a block and the positions of four counters in it.
var seeds = [2]uint64{0xc3a5c85c97cb3127, 0xb492b66fbe98f273}

// block returns h's block and the bits that place h's counters in it: 8
// for each of the four (see counter).
func (s *Sketch) block(h uint64) (*[8]uint64, uint64) {
	x := (h ^ h>>29) * seeds[0]
	x ^= x >> 32
	c := (h ^ h>>31) * seeds[1]
	i := (x & s.blockMask) << 3
	return (*[8]uint64)(s.table[i : i+8]), c >> 32
}

// counter returns the word and the shift of the i-th counter (i < 4) of a
// hash whose block and placing bits block returned: in the i-th pair of
// words of the block, the word and the counter in it picked by 5 of the
// bits.
func counter(b *[8]uint64, c uint64, i uint) (*uint64, uint) {
	c >>= i * 8 & 63
	return &b[i<<1&6|uint(c&1)], uint(c>>1&15) << 2
}

// Increment counts one use of h, and ages the sketch by it.
func (s *Sketch) Increment(h uint64) {
	if s.Count(h) {
		s.Age(1)
	}
}

// Count counts one use of h, and reports whether its estimate grew (it
// does unless it is 15). It does not age the sketch: the caller ages it by
// the uses it counts (Age). It adds one only to those of h's four counters
// that hold its estimate, the least (conservative update, Estan and
// Varghese, SIGCOMM 2002): a counter that other keys raised above h's
// count stays where they put it, so that they raise each other's
// estimates less. The four counters are written out, not looped over (see
// counter): a third of the instructions.
func (s *Sketch) Count(h uint64) bool {
	b, c := s.block(h)
	w0, w1, w2, w3 := &b[c&1], &b[c>>8&1+2], &b[c>>16&1+4], &b[c>>24&1+6]
	s0, s1, s2, s3 := c>>1&15<<2, c>>9&15<<2, c>>17&15<<2, c>>25&15<<2
	v0, v1, v2, v3 := *w0>>s0&15, *w1>>s1&15, *w2>>s2&15, *w3>>s3&15
	m := min(v0, v1, v2, v3)
	if m == 15 {
		return false
	}
	*w0 += least(v0, m) << s0
	*w1 += least(v1, m) << s1
	*w2 += least(v2, m) << s2
	*w3 += least(v3, m) << s3
	return true
}

// least returns 1 if the counter v holds the estimate m, else 0.
func least(v, m uint64) uint64 {
	if v == m {
		return 1
	}
	return 0
}

// Age counts n uses toward the next halving, and halves when they reach
// the sample.
func (s *Sketch) Age(n int) {
	s.adds += n
	if s.adds >= s.sample {
		s.Halve()
	}
}

// Estimate is the count of h: the least of its counters, 0 to 15 (see
// Count for their places).
func (s *Sketch) Estimate(h uint64) int {
	b, c := s.block(h)
	m := min(b[c&1]>>(c>>1&15<<2)&15, b[c>>8&1+2]>>(c>>9&15<<2)&15,
		b[c>>16&1+4]>>(c>>17&15<<2)&15, b[c>>24&1+6]>>(c>>25&15<<2)&15)
	return int(m)
}

// Halve halves every counter, and the uses counted toward the next
// halving.
func (s *Sketch) Halve() {
	for i, w := range s.table {
		s.table[i] = w >> 1 & 0x7777777777777777
	}
	s.adds /= 2
}
