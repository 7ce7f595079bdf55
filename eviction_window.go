package ttlstore

// This file sizes EvictColdest's window, and ages the sketch by the reads
// and by the admissions it got wrong.
//
// What it promises: the window's share of the documents stays within
// [0, windowMax] (a share of 0 is a window of one document); it moves by
// a step of one document (up to 4.6 while the ghosts keep pointing one
// way), and only when a document the policy evicted lately is written
// again; it costs one bucket of the ghosts read a new document and one
// read and written an eviction (a cache line each), and 2 to 4 bytes a
// document (4 KiB at least). A new document that
// lost its duel lately also ages the sketch by staleAge uses.
//
// How: each side of the policy remembers, by hash, the documents it
// evicted lately (ghosts): the window's side, the candidates that lost
// their duel on leaving the window; the main part's, the victims. A side
// remembers its last ghostShare of the documents, a step of Caffeine's
// hill climber. A document written while its ghost is remembered is a hit
// that side would have had with that much more room, so the window grows
// by a step for each the window's ghosts have, and shrinks by one for each
// the main part's have (one document, more while they keep agreeing: see
// driftGain): the window settles where a step more room is worth as much
// to either side. This is how ARC (Megiddo and Modha,
// FAST 2003) sizes its recency side; its ghosts are as large as the cache,
// but ghosts that remember a whole cache see a loop longer than the cache
// as recency, and grow the window until nothing of the loop is kept
// (on the LIRS loop trace at 80 % of its keys, 21 % where a 1 % window
// has 77 %).
//
// Caffeine's and otter's hill climber moves the window each sample of
// reads the way that raised the hit ratio since the last sample. Replayed
// on the public traces (bench/cmd/hitratio -traces) it judged the window
// by the workload: the hit ratio climbs for a while after the cache fills
// and after each change of working set, and on a loop it moves by a point
// or two from one sample to the next, so a move was kept or undone by
// chance, and runs that differed only in the hash seed took different
// paths (5 runs each: P6 at 38,689 documents ended between 24.1 and 32.8
// %, otter between 31.8 and 33.1; sprite at 1,061 between 83.6 and 85.8
// %, otter between 86.7 and 87.1). Both ghosts are counted over the same
// stretch of the workload, so a change of workload moves both, and only
// their difference moves the window.

import (
	"math"
	"math/bits"
)

// The window's bounds, and the ghosts' reach.
const (
	windowStart = 0.01   // the window's first share, Caffeine's
	windowMax   = 0.80   // the window's largest share
	ghostShare  = 0.0625 // the evictions each side remembers, as a share of the documents
)

// staleAge is how many uses the sketch ages by when a candidate it
// rejected lately (a ghost of the window's side) is written again: the
// counts that let probation's head win that duel were stale, and the
// sketch forgets faster while it keeps getting duels wrong. Its halving
// period is ten uses a document, rounded up to a power of two, longer than
// some traces: on P3 at 40 % of its keys (3.9M uses, a halving every 5.2M)
// it never halved, and the runs split in two by the hash seed, 65.1-65.3 %
// and 66.6-66.8 %, whether the window grew to 0.19 late in the trace or
// stayed near 0.10. Aging 160 uses a rejected candidate come back, 7
// seeds each: P3 at 5/15/40 % 22.6/42.9/66.9 % (66.7-67.1 at 40 %), the
// other ARC rows +0.16 on their mean (P6 at 15 % +1.0, P12 and P2 at 15 %
// +0.6, P2 at 5 % -0.5), the LIRS rows +0.02 (sprite at 5 % +0.5, multi2
// at 5 % -0.3). 40 left P3 at 40 % in two modes (65.4-67.1), 80 gave it
// 67.2 but multi3 at 5 % -0.7, 320 spread it 0.9 again.
const staleAge = 160

// The window's step: one document a ghost, and more while the ghosts
// keep saying the same. drift is the moving mean of their verdicts (+1
// the window's side, -1 the main part's) over the last span of them (at
// least driftMin); past driftNoise, each point of it adds driftGain
// documents to the step of a ghost that agrees with it (at most 4.6); one
// that disagrees moves the window one document. One document a ghost left the
// window behind where the ghosts kept pointing one way for a whole trace:
// on P3 at 40 % of its keys (63 % of 147k ghosts the window's) it grew
// from 0.01 to 0.19 only by the end, and a fixed window of any size did
// better; with the drift it is at 0.12 by 60 % of the trace (not 0.085)
// and 0.29 at the end (0.18), and the hit ratio 66.9 -> 67.8 % (7 seeds,
// spread 0.46 -> 0.37). Where the verdicts come
// mixed the step stays one document: a step of two documents
// everywhere cost P12 at 5 % 1.4 and P6 at 15 % 1.1. Policy alone, against
// one document a ghost: the LIRS rows +0.01 on their mean (20 seeds), the
// ARC rows but P3 +0.02 (3 seeds; P2 at 15 % -0.56, P12 at 40 % +0.3,
// P6 at 40 % +0.4, OLTP at 15 % +0.45), P3 at 5/15/40/80 %
// -0.1/0.0/+0.9/0.0. Amplifying the ghosts that disagree with the drift
// too cost P6 at 5 and 15 % 0.4 more and spread them 0.6 to 0.7 in the
// collection's table. A mean over 64 verdicts (drift noisier on small
// caches) cost multi3 at 5 % 0.9; a gain that grows while each sample of
// len/16 writes moves the same way (Rprop), cpp at 5 % 1.4 and multi3 at
// 5 % 2.0.
const (
	driftMin   = 256
	driftGain  = 4
	driftNoise = 0.1
)

// The sides of the policy a ghost belongs to.
const (
	ghostNone uint8 = iota
	ghostWindow
	ghostMain
)

// ghosts remembers, by hash, the last documents each side evicted: a
// table of buckets of ghostWays slots, each the hash's high 31 bits, its
// side, and its number among that side's evictions. A bucket is 64
// bytes, so that looking a hash up, or recording one, costs one cache
// miss. A new ghost takes the slot of its own hash's older ghost of its
// side, else the bucket's oldest (an empty slot is older than any; a
// ghost's age is the evictions of its side since); so a ghost is
// forgotten before span more evictions of its side only when more than
// ghostWays live ghosts fall in its bucket. The table has 2 to 4 slots a
// live ghost (span of each side), and never fewer than ghostMinSlots.
type ghosts struct {
	slots []uint64
	seq   [3]uint32 // evictions recorded, by side
	span  uint32    // how many of a side's last evictions it remembers
	docs  int       // the documents it was sized for
}

// ghostWays is how many ghosts a bucket holds, of either side. In a
// direct-mapped table of pairs of slots, one a side, a ghost lost its
// slot to a newer one of its side before its span was out about one time
// in five, and which ones did was the hash seed's choice: the window's
// size and the sketch's aging (staleAge) then took the seed's path. On
// multi2 at 5 % of its keys (284 documents, 17 ghosts a side in 64
// pairs), 200 seeds spread 1.0 (42.1-43.1, a tenth of the runs above
// 42.8), on the policy alone as in the collection; with ghosts that forget
// nothing, 100 seeds gave one value from p10 to p75; with these buckets
// (and ghostMinSlots), 42.08-42.72, p10 to p90 42.34-42.47, and in the
// 20-seed replay of the 40 LIRS rows 2 rows spread more than 0.5, not 8. Where the table is fullest (2 slots a
// live ghost) a bucket holds 4 live ghosts on average and 1 % of them are
// forgotten early; a direct-mapped table forgot 21 %
// (TestGhostsRememberTheirSpan).
const ghostWays = 8

// ghostMinSlots is the fewest slots the ghosts have, 4 KiB. A small
// table forgets a few ghosts early even with 8-way buckets, and a
// forgotten ghost sends the run on another path by the seed: on sprite at
// 5 % of its keys (354 documents, 44 live ghosts in 128 slots, 0.4 %
// forgotten) 100 seeds spread 1.0 (p10 to p90 0.63) as before the
// buckets; in 512 slots, p10 to p90 is one value (66.57) and the range
// 0.84. The sketch has its own floor, for the same reason (32 KiB).
const ghostMinSlots = 512

// size sizes the table to remember the last ghostShare of n documents
// evicted by each side, forgetting the ghosts if the table changes.
func (g *ghosts) size(n int) {
	g.docs = max(n, 1)
	g.span = uint32(max(1, int(ghostShare*float64(n))))
	want := max(ghostMinSlots, 2<<bits.Len(uint(2*g.span-1))) // two to four slots a live ghost
	if len(g.slots) != want {
		g.slots = make([]uint64, want)
		g.seq = [3]uint32{}
	}
}

// bucket returns h's bucket.
func (g *ghosts) bucket(h uint64) *[ghostWays]uint64 {
	i := (h & uint64(len(g.slots)/ghostWays-1)) * ghostWays
	return (*[ghostWays]uint64)(g.slots[i:])
}

// A slot is a ghost's high 32 bits, the hash's high 31 bits and its side
// (0 the window's, 1 the main part's), over its number among its side's
// evictions; 0 is an empty slot. Its age is the evictions of its side
// since.

// record remembers h as evicted by side. Its slot: that of h's ghost of
// the same side if the bucket has one, else the oldest (an empty slot is
// older than any; the empty slots come last, since none is emptied).
func (g *ghosts) record(h uint64, side uint8) {
	g.seq[side]++
	sw, sm := g.seq[ghostWindow], g.seq[ghostMain]
	id := h>>33<<1 | uint64(side-1)
	b := g.bucket(h)
	k, oldest := 0, uint32(0)
	for i := range b {
		s := b[i]
		if s == 0 {
			if oldest != math.MaxUint32 {
				k = i
			}
			break
		}
		if s>>32 == id {
			k = i
			break
		}
		seq := sw
		if s>>32&1 != 0 {
			seq = sm
		}
		if a := seq - uint32(s); a > oldest {
			k, oldest = i, a
		}
	}
	b[k] = id<<32 | uint64(g.seq[side])
}

// side returns the side that evicted h lately, ghostNone if neither did
// (or if its ghost was overwritten); the window's if both did.
func (g *ghosts) side(h uint64) uint8 {
	if len(g.slots) == 0 {
		return ghostNone
	}
	tag := h >> 33
	b := g.bucket(h)
	found := ghostNone
	for i := range b {
		if s := b[i]; s>>33 == tag && s != 0 {
			seq := g.seq[ghostWindow]
			if s>>32&1 != 0 {
				seq = g.seq[ghostMain]
			}
			if seq-uint32(s) >= g.span {
				continue
			}
			if s>>32&1 == 0 {
				return ghostWindow
			}
			found = ghostMain
		}
	}
	return found
}

// evicted records h, which side evicted, sizing the ghosts first if the
// policy holds twice as many documents as they were sized for, or half.
// p.mu must be held.
func (p *coldest) evicted(h uint64, side uint8) {
	if n := p.len(); n > 2*p.ghosts.docs || 2*n < p.ghosts.docs || p.ghosts.slots == nil {
		p.ghosts.size(n)
	}
	p.ghosts.record(h, side)
}

// adapt moves the window by a step (one document, more while the ghosts'
// verdicts drift one way) if h, being written as a new document, is the
// ghost of a recent eviction, and ages the sketch by staleAge uses if it
// is the window's side's. p.mu must be held.
func (p *coldest) adapt(h uint64) {
	var d float64
	switch p.ghosts.side(h) {
	case ghostWindow:
		d = 1
		p.stats.grown++
		p.sketch.Age(staleAge)
	case ghostMain:
		d = -1
		p.stats.shrunk++
	default:
		return
	}
	p.drift += (d - p.drift) / max(driftMin, float64(p.ghosts.span))
	step := d
	if d*p.drift > 0 {
		step *= 1 + driftGain*max(0, math.Abs(p.drift)-driftNoise)
	}
	p.share = max(0, min(windowMax, p.share+step/float64(max(p.len(), 1))))
}

// age ages the sketch by the reads, every 64 additions: the read counts
// are summed over the collection's shards. The sketch ages by accesses,
// as Caffeine's does, and the reads reach it late or not at all (a
// document read more than 15 times between two looks saturates): it ages
// by the reads counted. p.mu must be held.
func (p *coldest) age() {
	if p.adds++; p.adds < 64 || p.requests == nil {
		return
	}
	p.adds = 0
	hits, _ := p.requests()
	p.sketch.Age(int(hits - p.aged))
	p.aged = hits
}
