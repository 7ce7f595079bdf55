package ttlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// TestCheckInvariantsWhileSweeping: CheckInvariants may run while a sweep
// (Sweep here, the background sweeper in TestBoundStress) removes expired
// documents. A sweep removes each batch from its shard's table and from
// EvictColdest's queues under that shard's lock; a check that took the
// shards' locks one after the other counted a batch in a shard it had
// passed and not in the queues it read last ("the queues hold 2 documents,
// the collection 3"), as it did in 20 rounds of 20 here.
func TestCheckInvariantsWhileSweeping(t *testing.T) {
	rounds, docs := 10, 1000
	if raceEnabled {
		rounds = 4
	}
	for round := range rounds {
		c, clk := newCollection(t, ttlstore.Options{
			DefaultTTL:   ttlstore.TTL(-1), // the ttl of each document applies
			Eviction:     ttlstore.EvictColdest,
			MaxDocuments: 2 * docs,
			SweepBatch:   1, // the lock released after every document
		})
		for i := range docs {
			_, err := c.Upsert(fmt.Appendf(nil, `{"id":"d%d","ttl":1}`, i))
			require.NoError(t, err)
		}
		clk.Add(2 * time.Second)
		done := make(chan struct{})
		go func() { defer close(done); c.Sweep() }()
		checks := 0
	loop:
		for {
			select {
			case <-done:
				break loop
			default:
			}
			require.NoError(t, c.CheckInvariants(), "round %d, check %d, during the sweep", round, checks)
			checks++
		}
		require.NoError(t, c.CheckInvariants(), "round %d, after the sweep", round)
		require.Zero(t, c.Stats().Expired)
	}
}
