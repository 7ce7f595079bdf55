package ttlstore

import (
	"sync/atomic"
	"unsafe"
)

// readCounts counts the hits and misses of reads, for Stats and for
// EvictColdest's sketch, which ages by them. A read must write no memory that
// other goroutines' reads write too: a cache line that every read writes
// moves from core to core on every read, which costs a parallel read more
// than the rest of it. So the counts are kept in stripes, whose counters
// never share a cache line, and a read adds to the stripe of its goroutine: the one
// its stack's address picks. Go gives a goroutine no cheaper identity, and a
// goroutine keeps its stack (until the stack grows, when it may move to
// another stripe: any stripe is correct, only sharing one costs). A
// goroutine's first stack is 2 KiB, and stacks are carved one after the
// other from the same spans, so a stripe is 2 KiB of stack addresses:
// goroutines made one after the other get neighbouring stripes, and a
// larger stack several (stripeOf). The sum of the stripes is exact.
type readCounts struct {
	stripes [readStripes]readStripe
}

// readStripes is how many stripes readCounts has: 4 KiB a collection.
const readStripes = 32

// readStripe is 128 bytes with its counters in the middle, so that no cache
// line holds the counters of two stripes, whatever the alignment of the
// collection: they are 112 bytes apart.
type readStripe struct {
	_            [56]byte
	hits, misses atomic.Uint64
	_            [56]byte
}

// stripe returns the calling goroutine's stripe.
func (r *readCounts) stripe() *readStripe {
	var here byte
	// A uintptr made from a pointer is a number: nothing is ever
	// dereferenced through it, so the stack may move freely.
	return &r.stripes[stripeOf(uintptr(unsafe.Pointer(&here)))]
}

// stripeOf is the stripe of a goroutine whose stack pointer is sp: 2 KiB
// of stack addresses a stripe. With 8 KiB a stripe, two goroutines
// that BenchmarkReadHitAscendingParallel (bench/) started, 2 KiB apart,
// shared a stripe in 3 of 8 runs, and a read then took 59 ns instead of
// 41.5: the counters' line went from core to core.
func stripeOf(sp uintptr) int { return int(sp >> 11 & (readStripes - 1)) }

// hit counts a read that found a live document.
func (r *readCounts) hit() { r.stripe().hits.Add(1) }

// miss counts a read that found none.
func (r *readCounts) miss() { r.stripe().misses.Add(1) }

// sum returns the hits and misses counted so far. Under concurrent reads it
// is a sum of counts read at slightly different instants.
func (r *readCounts) sum() (hits, misses uint64) {
	for i := range r.stripes {
		hits += r.stripes[i].hits.Load()
		misses += r.stripes[i].misses.Load()
	}
	return hits, misses
}
