package ttlstore

// This file is what EvictColdest's tables cost the bound: the memory of
// its frequency sketch, its three queues and its ghosts of recent
// evictions that the documents' weights do not count, which MaxBytes then
// counts instead (limits.policyBytes, limits.byteBound).
//
// A document's weight counts policyDocBytes for its place in the tables: a
// slot in a queue and a word of the sketch. The tables hold more than that:
// the queues' rings and the sketch are powers of two, up to twice what
// their documents fill, and the ghosts take 2 to 4 bytes a document (4 KiB
// at least). For a
// collection of 182k documents of about 90 bytes at a MaxBytes of 32 MiB
// (TestBoundHoldsHeap) that was 29 bytes a document, 5 MiB: the heap was
// 1.10 times MaxBytes where NoEviction's was 0.93. What the tables hold
// beyond policyDocBytes a document, and beyond what they held when the
// collection was new (its sketch, at least 32 KiB, and the smallest rings;
// an empty collection's memory is no document's), is taken from what the
// documents may use. It changes only when a table is resized, or with the
// number of documents.

import "sync/atomic"

// policyDocBytes is the part of docOverhead that stands for a document's
// place in EvictColdest's tables: a queue slot and a sketch word.
const policyDocBytes = 16

// tableMin is what the tables hold beyond the sketch while the collection
// has only a few documents: each queue's smallest ring (16 slots) and the
// ghosts' smallest table (ghostMinSlots).
const tableMin = 8 * (3*16 + ghostMinSlots)

// tableBytes is the memory of the policy's tables. p.mu must be held.
func (p *coldest) tableBytes() int {
	return p.sketch.Bytes() + 8*(len(p.window.buf)+len(p.probation.buf)+len(p.protected.buf)+len(p.ghosts.slots))
}

// charge is what the tables hold beyond the documents' weights and beyond
// what they held when the policy was new. p.mu must be held.
func (p *coldest) charge() int64 {
	return int64(max(0, p.tableBytes()-p.base-policyDocBytes*p.len()))
}

// chargeTo has the policy store what its tables hold beyond the
// documents' weights in charged from now on, if it stored it nowhere: a
// collection made without MaxBytes, given one by SetLimits, which calls it
// before the bound is in force. Without a byte bound nothing reads it,
// and a write at the bound, which changes the number of documents twice
// (its victim out, its document in), stored it twice: two atomic stores to
// the bound's counters' line, and some 60 instructions.
func (p *coldest) chargeTo(charged *atomic.Int64) {
	p.lock()
	if p.charged == nil {
		p.charged = charged
	}
	p.unlock()
}

// unlock stores what the tables hold beyond the documents' weights in
// p.charged, if it changed, and releases p.mu. Every method that takes
// p.mu releases it so, after whatever resized a table or changed the
// number of documents.
func (p *coldest) unlock() {
	if p.charged != nil {
		if c := p.charge(); c != p.charged.Load() {
			p.charged.Store(c)
		}
	}
	p.mu.Unlock()
}
