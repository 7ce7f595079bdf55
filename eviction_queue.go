package ttlstore

// This file is the FIFO queue of entries that EvictColdest's three segments
// are made of: push at the tail, pop at the head, remove or replace any
// entry in O(1), with nothing allocated but when the ring has to grow.

import "math/bits"

// queue is a FIFO of entries in a ring buffer. A removed entry leaves a
// hole (nil), skipped when it reaches the head; each entry knows its
// position (qpos), so removal and replacement are O(1). Positions count up
// from 0 and wrap at 2^32, which the ring's power-of-two size divides.
type queue struct {
	buf        []*entry
	head, tail uint32 // buf[head&mask] is the first; tail is where the next goes
	n          int    // entries in the queue, holes not counted
}

func (q *queue) mask() uint32 { return uint32(len(q.buf) - 1) }

// push appends e at the tail.
func (q *queue) push(e *entry) {
	if int(q.tail-q.head) == len(q.buf) {
		q.compact()
	}
	e.qpos = q.tail
	q.buf[q.tail&q.mask()] = e
	q.tail++
	q.n++
}

// compact copies the entries, in order and without holes, to a new buffer
// with room for as many again. Amortized over the pushes that filled the
// old buffer, it costs O(1) a push.
func (q *queue) compact() {
	size := 16
	if q.n >= 8 {
		size = 1 << bits.Len(uint(2*q.n-1))
	}
	buf := make([]*entry, size)
	j := uint32(0)
	for i := q.head; i != q.tail; i++ {
		if e := q.buf[i&q.mask()]; e != nil {
			e.qpos = j
			buf[j] = e
			j++
		}
	}
	q.buf, q.head, q.tail = buf, 0, j
}

// first returns the entry at the head, nil if the queue is empty.
func (q *queue) first() *entry {
	for q.head != q.tail {
		if e := q.buf[q.head&q.mask()]; e != nil {
			return e
		}
		q.head++
	}
	return nil
}

// pop removes and returns the entry at the head, nil if the queue is empty.
func (q *queue) pop() *entry {
	e := q.first()
	if e != nil {
		q.buf[q.head&q.mask()] = nil
		q.head++
		q.n--
	}
	return e
}

// remove takes e, which is in the queue, out of it. Holes it leaves at
// the tail are taken back, so that compact need not copy the queue over
// them: a write at the bound pushes the candidate to probation's tail and,
// when the candidate loses its duel, evicts it at once. That left a hole,
// and with writes of new documents that lose (a scan) a compaction of
// probation every time it filled with them, updating qpos in every entry:
// about one cache miss a write.
func (q *queue) remove(e *entry) {
	q.buf[e.qpos&q.mask()] = nil
	q.n--
	for q.tail != q.head && q.buf[(q.tail-1)&q.mask()] == nil {
		q.tail--
	}
}

// set puts e in place of the entry at position pos.
func (q *queue) set(pos uint32, e *entry) { q.buf[pos&q.mask()] = e }
