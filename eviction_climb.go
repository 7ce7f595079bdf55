package ttlstore

// This file is EvictColdest's hill climber: it sizes the policy's window
// from the hit ratio it sees, and ages the sketch by the reads. It only
// changes the window's share (coldest.share); the queues follow it as
// documents come and go.

import "math"

// Caffeine's hill climber's settings.
const (
	climbStart   = 0.01   // the window's first share
	climbStep    = 0.0625 // a first step, as a share of the documents
	climbDecay   = 0.98   // each step is this much of the one before
	climbRestart = 0.05   // a change of hit ratio this large starts over with a first step
	climbMax     = 0.80   // the window's largest share
)

// climb adjusts the window once a sample of reads (ten per document) has
// passed. It is called every 64 additions: the read counts are summed over
// the collection's shards.
func (p *coldest) climb() {
	if p.adds++; p.adds < 64 || p.requests == nil {
		return
	}
	p.adds = 0
	hits, misses := p.requests()
	// The sketch ages by accesses, as Caffeine's does, and the reads
	// reach it late or not at all (a document read more than 15 times
	// between two looks saturates): age it by the reads counted.
	p.sketch.Age(int(hits - p.aged))
	p.aged = hits
	n := p.len()
	reads := hits + misses
	if reads-p.sampled < uint64(10*max(n, 64)) {
		return
	}
	// The hit ratio of this sample: the counts are cumulative, so keep
	// the last ones.
	h := hits - p.lastHits
	rate := float64(h) / float64(reads-p.sampled)
	p.lastHits, p.sampled = hits, reads
	p.stats.climbs++
	change := rate - p.lastRate
	amount := p.step
	if change < 0 {
		amount = -amount
	}
	if math.Abs(change) >= climbRestart {
		p.step = math.Copysign(climbStep*float64(n), amount)
	} else {
		p.step = climbDecay * amount
	}
	p.lastRate = rate
	p.share = min(climbMax, max(0, p.share+amount/float64(max(n, 1))))
}
