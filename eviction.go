package ttlstore

// This file is EvictColdest's policy: which document to evict when a write
// needs room. It promises that its queues hold exactly the collection's
// stored documents (see coldest), and it touches nothing but its own
// fields and those of entries it is given: the tables, the expiry index
// and the bound's counters are the caller's. Its frequency sketch is
// internal/sketch; what sizes its window, eviction_window.go; its queues,
// eviction_queue.go.

import (
	"sync"
	"sync/atomic"

	"github.com/ttlstore/ttlstore/internal/sketch"
)

// coldest is EvictColdest's bookkeeping: W-TinyLFU (Einziger, Friedman and
// Manes, "TinyLFU: A Highly Efficient Cache Admission Policy", 2017), as
// Caffeine and otter have it, kept apart from the tables it serves. It only
// picks victims: the bound itself is kept by the collection's counters
// (bound.go).
//
// Documents are in one of three FIFO queues. A new document enters the
// window, 1% of the documents at first, then as large a share as the
// ghosts of recent evictions say it is worth (eviction_window.go). One
// that leaves the window goes to the tail of probation, as the candidate;
// when room is needed, the candidate duels probation's head, the victim,
// and the one a frequency sketch says was used less often is evicted
// (admit). Documents read while in probation move to protected (80% of
// the main part) when they reach its head, and protected's overflow goes
// back to probation's tail, but for documents read since they were last
// looked at, which get a second chance. Caffeine keeps its queues in LRU
// order, moving a node on every read through buffers that readers fill;
// here readers only add to the hits counter of the entry they read (a
// word that is in their cache already), and the queues are FIFO with
// second chances, CLOCK-style, so that a read takes no lock and moves
// nothing.
//
// Every method takes mu, with lock, but added, which leaves the new
// document pending when mu is taken (pend), so that a writer does not wait
// for another's pick of a victim; lock puts the pending documents in the
// queues before anything else. The collection calls added, replaced and
// removed with the document's shard lock held, so the policy learns of
// the changes to one id in the order they were made; victim is called with no lock held
// or with the lock of the writer's shard, and the caller then takes the
// victim's shard lock (if it holds another, only if it is free) to remove
// it. Lock order: shard, then mu.
//
// The queues hold exactly the collection's stored documents, each once,
// but for victims picked and not yet evicted or put back, which count in
// limits.filing, on their own or in the count of the write they were picked
// for (checkInvariants checks this). The bound code relies on it: a
// picked victim that is no longer the stored document of its id is
// dropped (evictPicked), since the policy was told of whatever replaced
// it, and one that is still stored is evicted without a look at the
// queues. So an entry enters the queues only as it is stored (added,
// replaced) or when the caller that picked it puts it back (add), and
// leaves them when it is removed or picked.
type coldest struct {
	// mu protects everything below, and the qpos and seg fields of the
	// entries in the queues.
	mu        sync.Mutex
	hseed     uint64 // the seed of the hash the sketch and the ghosts count documents by (hash)
	window    queue
	probation queue
	protected queue
	// cand is the last document moved from the window to probation, the
	// candidate of the next duel; nil once it has dueled or left.
	cand   *entry
	sketch sketch.Sketch
	// picked counts the victims picked and not yet removed or put back
	// (limits.filing), added to before victim lets go of mu; but not
	// those picked for a write whose own count stands for them (see
	// room.covered).
	picked *atomic.Int64
	rng    uint64 // xorshift state, for admit's random admissions

	// The window's size (eviction_window.go): its share of the
	// documents, moved by the ghosts of recent evictions.
	share  float64
	ghosts ghosts
	drift  float64 // the ghosts' recent verdicts, -1 to 1 (adapt)

	// What the tables hold that the documents' weights do not count
	// (eviction_memory.go): charged is the bound's limits.policyBytes,
	// nil while the collection has no MaxBytes (chargeTo sets it);
	// base, the tables' bytes when the policy was new. mu protects
	// charged.
	charged *atomic.Int64
	base    int

	// The sketch's aging by the reads (eviction_window.go).
	requests func() (hits, misses uint64) // the collection's read counts
	aged     uint64                       // hits the sketch has aged by
	adds     int                          // additions since the read counts were last looked at

	stats coldStats

	// New documents whose writers found mu taken (added), in the order
	// they came, for the next holder of mu to put in the queues (lock).
	// pendMu protects pend; npend is its length, read without pendMu;
	// spare is mu's, the buffer pend is swapped with.
	pendMu sync.Mutex
	pend   []pendingAdd
	npend  atomic.Int32
	spare  []pendingAdd
}

// pendingAdd is a new document whose writer found the policy's mu taken,
// and its key's hash (p.hash).
type pendingAdd struct {
	e *entry
	h uint64
}

// maxPending is the most new documents that wait for mu's holder: a
// writer that finds that many waits for mu itself.
const maxPending = 64

// coldStats counts the policy's decisions, for the tests that explain its
// hit ratios (TestColdestReplay). Plain counters under mu, in the struct
// the policy writes anyway.
type coldStats struct {
	duels     uint64 // a candidate against a victim
	admitted  uint64 // duels the candidate won (and the victim left)
	jittered  uint64 // of those, won at random, not by frequency
	unopposed uint64 // victims evicted with no candidate to duel
	promoted  uint64 // probation to protected, read while in probation
	kept      uint64 // second chances in protected, read while there
	demoted   uint64 // protected to probation
	grown     uint64 // new documents the window's side had evicted lately: the window grew by one
	shrunk    uint64 // new documents the main part had evicted lately: the window shrank by one
}

// The queues an entry can be in (entry.seg).
const (
	segNone uint8 = iota
	segWindow
	segProbation
	segProtected
)

// maxHits is the most reads an entry counts between two looks of the
// policy: the sketch's counters stop at 15 too.
const maxHits = 15

// touch records a read of e for EvictColdest. A document read often stops
// writing to its entry once the count is saturated.
func (e *entry) touch() {
	if atomic.LoadUint32(&e.hits) < maxHits {
		atomic.AddUint32(&e.hits, 1)
	}
}

// newColdest returns the policy for a collection of capacity documents (0
// for no such bound) whose ids it hashes with seed hseed (see hash), whose
// read counts requests returns, and whose limits' filing is picked and
// policyBytes charged (nil if none: its tables are then not counted).
func newColdest(hseed uint64, capacity int, requests func() (hits, misses uint64), picked, charged *atomic.Int64) *coldest {
	p := &coldest{hseed: hseed, rng: 0x9e3779b97f4a7c15, requests: requests, share: windowStart, picked: picked, charged: charged}
	p.sketch.Ensure(capacity)
	p.base = p.sketch.Bytes() + tableMin
	return p
}

// len is the number of documents in the queues.
func (p *coldest) len() int { return p.window.n + p.probation.n + p.protected.n }

// added tells the policy of a new document. If mu is taken, the document
// waits in pend for mu's holder to put it in the queues (lock), unless
// maxPending wait already: a writer at the bound, which takes mu to pick
// its victim, does not wait for it a second time behind another's pick
// (BenchmarkBoundedWrite in bench/, interleaved, 8 runs: 914 -> 867 ns a
// write on 2 goroutines, 705 -> 716 on 1).
func (p *coldest) added(e *entry) {
	h := p.hash(e) // before mu: no other writer waits for it
	if !p.mu.TryLock() {
		p.pendMu.Lock()
		if len(p.pend) < maxPending {
			p.pend = append(p.pend, pendingAdd{e, h})
			p.npend.Store(int32(len(p.pend)))
			p.pendMu.Unlock()
			return
		}
		p.pendMu.Unlock()
		p.mu.Lock()
	}
	p.drain()
	p.addLocked(e, h)
	p.unlock()
}

// lock takes mu, and puts the documents that wait for it in the queues.
func (p *coldest) lock() {
	p.mu.Lock()
	p.drain()
}

// drain puts the new documents that wait for mu in the queues, in the
// order they came. mu must be held.
func (p *coldest) drain() {
	if p.npend.Load() == 0 {
		return
	}
	p.pendMu.Lock()
	batch := p.pend
	p.pend = p.spare
	p.npend.Store(0)
	p.pendMu.Unlock()
	for i, a := range batch {
		p.addLocked(a.e, a.h)
		batch[i] = pendingAdd{}
	}
	p.spare = batch[:0]
	if p.charged != nil {
		p.charged.Store(p.charge()) // as unlock would have, had each writer taken mu
	}
}

// addLocked is added with mu held, for e whose hash is h.
func (p *coldest) addLocked(e *entry, h uint64) {
	p.sketch.Ensure(p.len() + 1)
	p.sketch.Increment(h)
	p.adapt(h)
	p.insert(e)
	p.age()
}

// add puts back e, which victim picked but could not be evicted.
func (p *coldest) add(e *entry) {
	p.lock()
	if e.seg == segNone {
		p.insert(e)
	}
	p.unlock()
}

// insert puts e at the tail of the window, and moves the window's overflow
// to probation.
func (p *coldest) insert(e *entry) {
	p.push(&p.window, e, segWindow)
	for p.window.n > p.windowSize() {
		p.cand = p.leaveWindow()
	}
}

// leaveWindow moves the window's head to probation's tail and returns it.
// Its reads so far go into the sketch: they count for its frequency, but
// not as reads in probation, which would promote it. (Otherwise a scan that
// reads each new document once, right after writing it, would flood
// protected and push the hot set out.)
func (p *coldest) leaveWindow() *entry {
	w := p.window.pop()
	p.flush(w)
	p.push(&p.probation, w, segProbation)
	return w
}

// windowSize is the window's share of the documents, at least one.
func (p *coldest) windowSize() int { return max(1, int(p.share*float64(p.len()))) }

// protectedSize is protected's share: 80% of the main part.
func (p *coldest) protectedSize() int { return (p.len() - p.windowSize()) * 4 / 5 }

// replaced tells the policy that e replaced old, the entry of its id: e
// takes old's place, and the write counts as a use.
func (p *coldest) replaced(old, e *entry) {
	p.lock()
	if old.seg == segNone {
		// Picked by victim, which found e instead: a new document.
		p.sketch.Increment(p.hash(e))
		p.insert(e)
		p.unlock()
		return
	}
	atomic.StoreUint32(&e.hits, min(atomic.LoadUint32(&old.hits)+1, maxHits))
	e.seg, e.qpos = old.seg, old.qpos
	p.queueOf(old.seg).set(old.qpos, e)
	old.seg = segNone
	if p.cand == old {
		p.cand = e
	}
	p.unlock()
}

// removed tells the policy that the documents were deleted, swept or
// evicted.
func (p *coldest) removed(batch []slot) {
	p.lock()
	for _, sl := range batch {
		p.detach(sl.e)
	}
	p.unlock()
}

// removedOne is removed for one document.
func (p *coldest) removedOne(e *entry) {
	p.lock()
	p.detach(e)
	p.unlock()
}

// detach takes e out of its queue, if it is in one.
func (p *coldest) detach(e *entry) {
	if e.seg == segNone {
		return
	}
	p.queueOf(e.seg).remove(e)
	e.seg = segNone
	if p.cand == e {
		p.cand = nil
	}
}

// victim picks the document to evict, other than the one with id skip and
// those whose ids are in others (nil for none), takes it out of the queues,
// counts it in picked if count is set, and returns it; nil when there is
// none.
func (p *coldest) victim(skip string, others map[string]struct{}, count bool) *entry {
	p.lock()
	defer p.unlock()
	// The documents not to evict, when met, are set aside and put back at
	// the tail of their queues at the end, so that the others are looked
	// at.
	var aside asideSet
	defer aside.restore(p)
	setAside := func(e *entry) { aside.add(p, e) }
	kept := func(e *entry) bool { return excepted(e.key(), skip, others) }
	// chances bounds the second chances given in one call: readers may
	// keep reading, and each read earns one.
	chances := p.len() + 8
	for {
		v := p.probation.first()
		if v == nil {
			// The main part is all protected, or empty.
			if d := p.protected.pop(); d != nil {
				p.push(&p.probation, d, segProbation)
				continue
			}
			w := p.window.first()
			if w == nil {
				return nil
			}
			if kept(w) {
				setAside(w)
				continue
			}
			p.detach(w)
			if count {
				p.picked.Add(1)
			}
			return w
		}
		if chances > 0 && atomic.LoadUint32(&v.hits) > 0 {
			// Read since it came to probation: promote it.
			chances--
			p.flush(v)
			p.probation.pop()
			if v == p.cand {
				p.cand = nil
			}
			p.push(&p.protected, v, segProtected)
			p.stats.promoted++
			chances = p.demote(chances)
			continue
		}
		if kept(v) {
			setAside(v)
			continue
		}
		c := p.cand
		if c == nil || c == v {
			// No candidate: the window's head is the one the write
			// making room would push out of the window.
			if p.window.n > 0 && p.window.n >= p.windowSize() {
				c = p.leaveWindow()
			}
		}
		p.cand = nil
		hv := p.hash(v)
		if c != nil && c != v && !kept(c) {
			p.stats.duels++
			if hc := p.hash(c); p.admit(c, hc, v, hv) {
				p.stats.admitted++
				p.evicted(hv, ghostMain)
			} else {
				v, hv = c, hc // the candidate loses the duel
				p.evicted(hc, ghostWindow)
			}
		} else {
			p.stats.unopposed++
			p.evicted(hv, ghostMain)
		}
		p.detach(v)
		if count {
			p.picked.Add(1)
		}
		return v
	}
}

// asideSet holds the documents victim met but may not evict, taken out of
// their queues until it returns: the first without allocating.
type asideSet struct {
	first asideEntry
	more  []asideEntry
}

type asideEntry struct {
	e   *entry
	seg uint8
}

// add takes e out of its queue, remembering which.
func (a *asideSet) add(p *coldest, e *entry) {
	x := asideEntry{e, e.seg}
	if a.first.e == nil {
		a.first = x
	} else {
		a.more = append(a.more, x)
	}
	p.detach(e)
}

// restore puts them back at the tail of their queues, in the order met.
func (a *asideSet) restore(p *coldest) {
	if a.first.e != nil {
		p.push(p.queueOf(a.first.seg), a.first.e, a.first.seg)
	}
	for _, x := range a.more {
		p.push(p.queueOf(x.seg), x.e, x.seg)
	}
}

// demote moves protected's overflow to probation's tail, but for documents
// read since they were last looked at, which go back to protected's tail
// while chances last. It returns the chances left.
func (p *coldest) demote(chances int) int {
	for p.protected.n > p.protectedSize() {
		d := p.protected.pop()
		if chances > 0 && atomic.LoadUint32(&d.hits) > 0 {
			chances--
			p.flush(d)
			p.push(&p.protected, d, segProtected)
			p.stats.kept++
			continue
		}
		p.push(&p.probation, d, segProbation)
		p.stats.demoted++
	}
	return chances
}

// admit reports whether the candidate should stay rather than the victim:
// when it was used more often, by the sketch. Like Caffeine, it lets a
// warm candidate in at random now and then, so that an attacker cannot keep
// a hot victim in place by making candidates collide with it in the sketch.
func (p *coldest) admit(cand *entry, hc uint64, victim *entry, hv uint64) bool {
	cf, vf := p.freq(cand, hc), p.freq(victim, hv)
	if cf > vf {
		return true
	}
	if cf >= 6 {
		p.rng ^= p.rng << 13
		p.rng ^= p.rng >> 7
		p.rng ^= p.rng << 17
		if p.rng&127 == 0 {
			p.stats.jittered++
			return true
		}
	}
	return false
}

// freq is the frequency of e, whose hash is h: the sketch's count, once
// e's reads are in it.
func (p *coldest) freq(e *entry, h uint64) int {
	for n := min(atomic.SwapUint32(&e.hits, 0), maxHits); n > 0; n-- {
		p.sketch.Count(h) // its age: every read counts toward it (age)
	}
	return p.sketch.Estimate(h)
}

// flush adds e's reads to the sketch.
func (p *coldest) flush(e *entry) {
	if atomic.LoadUint32(&e.hits) > 0 {
		p.freq(e, p.hash(e))
	}
}

// hash is the hash the sketch and the ghosts count e by: sketch.Hash of
// its key with the policy's seed, fixed unless the collection asked for a
// random one (Options.RandomizeEviction), so that the same workload keeps
// the same documents in every run. It is not the table's hash, whose seed
// is random for every collection so that no one can choose ids that
// collide in the table.
func (p *coldest) hash(e *entry) uint64 { return sketch.Hash(p.hseed, e.key()) }

func (p *coldest) queueOf(seg uint8) *queue {
	switch seg {
	case segWindow:
		return &p.window
	case segProbation:
		return &p.probation
	}
	return &p.protected
}

func (p *coldest) push(q *queue, e *entry, seg uint8) {
	q.push(e)
	e.seg = seg
}
