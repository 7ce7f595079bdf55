package main

// s3fifo is S3-FIFO, the policy of Yang et al., "FIFO queues are all you
// need for cache eviction" (SOSP 2023), written here as a plain policy over
// uint64 keys to compare the bounded caches with. It follows the paper's
// pseudo-code and the implementation its experiments used (libCacheSim's
// S3FIFOv0):
//
//   - small, a FIFO of 10% of the capacity, takes every new key; main, a
//     FIFO of the other 90%, takes the keys that small promotes and those
//     found in ghost; ghost is a FIFO of evicted keys only (no values),
//     as many as main holds.
//   - A hit adds one to the key's frequency, which saturates at 3 (2 bits).
//   - To make room, small is evicted from while main is within its 90% and
//     small is not empty; main otherwise.
//   - Evicting from small takes its oldest key: with a frequency of 2 or
//     more it moves to main with its frequency cleared and the next oldest
//     is tried; otherwise it goes to ghost, and that is the eviction.
//   - Evicting from main takes its oldest key: with a frequency above 0 it
//     goes back to main's head with one less (a 2-bit CLOCK); otherwise it
//     leaves the cache.
//
// Every key costs 1. It is not safe for concurrent use; the simulator does
// not need it to be.
type s3fifo struct {
	capacity, mainCap, ghostCap int
	entries                     map[uint64]*s3entry
	small, main                 ring[*s3entry]
	// ghost maps a key to the number of its entry in ghostQ; an entry of
	// ghostQ whose key maps to another number (the key left ghost and came
	// back) is stale and is skipped.
	ghost  map[uint64]uint64
	ghostQ ring[ghostEntry]
	seq    uint64
}

type s3entry struct {
	key  uint64
	freq uint8
}

type ghostEntry struct {
	key, seq uint64
}

func newS3FIFO(capacity int) *s3fifo {
	small := max(1, capacity/10)
	return &s3fifo{
		capacity: capacity,
		mainCap:  capacity - small,
		ghostCap: capacity - small,
		entries:  make(map[uint64]*s3entry, capacity),
		ghost:    make(map[uint64]uint64, capacity),
	}
}

func (c *s3fifo) Get(key uint64) bool {
	e, ok := c.entries[key]
	if ok && e.freq < 3 {
		e.freq++
	}
	return ok
}

// Set inserts key, which must not be in the cache, evicting first if the
// cache is full: into main if ghost remembers it, into small otherwise.
func (c *s3fifo) Set(key uint64) {
	for len(c.entries) >= c.capacity {
		c.evict()
	}
	e := &s3entry{key: key}
	c.entries[key] = e
	if _, ok := c.ghost[key]; ok {
		delete(c.ghost, key)
		c.main.push(e)
		return
	}
	c.small.push(e)
}

func (c *s3fifo) Close() {}

func (c *s3fifo) evict() {
	if c.main.len() > c.mainCap || c.small.len() == 0 {
		c.evictMain()
	} else {
		c.evictSmall()
	}
}

func (c *s3fifo) evictSmall() {
	for c.small.len() > 0 {
		e := c.small.pop()
		if e.freq >= 2 {
			e.freq = 0
			c.main.push(e)
			continue
		}
		delete(c.entries, e.key)
		c.remember(e.key)
		return
	}
}

func (c *s3fifo) evictMain() {
	for c.main.len() > 0 {
		e := c.main.pop()
		if e.freq > 0 {
			e.freq--
			c.main.push(e)
			continue
		}
		delete(c.entries, e.key)
		return
	}
}

// remember puts key in ghost, forgetting the oldest keys beyond ghostCap.
func (c *s3fifo) remember(key uint64) {
	c.seq++
	c.ghost[key] = c.seq
	c.ghostQ.push(ghostEntry{key, c.seq})
	for len(c.ghost) > c.ghostCap {
		g := c.ghostQ.pop()
		if c.ghost[g.key] == g.seq {
			delete(c.ghost, g.key)
		}
	}
}

// ring is a FIFO queue on a circular buffer that doubles when full.
type ring[T any] struct {
	buf        []T
	head, size int
}

func (r *ring[T]) len() int { return r.size }

func (r *ring[T]) push(v T) {
	if r.size == len(r.buf) {
		buf := make([]T, max(16, 2*len(r.buf)))
		for i := range r.size {
			buf[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = buf, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

// pop removes and returns the oldest element; the queue must not be empty.
func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v
}
