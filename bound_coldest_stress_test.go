package ttlstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
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
	if ttlstore.RaceRepeat(t) {
		rounds = 1 // the repeats of -count under -race (see RaceRepeat)
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

// TestColdestStress mixes everything that changes what EvictColdest must
// know, at once, on a collection at its bound: writers of every kind
// (Create, Upsert, Replace and ReplaceIfMatch of documents of varying
// weight and ttl), Delete and DeleteIfMatch, Touch, Read and ReadOrLoad,
// Sweep beside the background sweeper, a clock moved by its own goroutine,
// SetDefaultTTL, SetLimits lowering and raising the bounds, and in the
// durable mode (on MemFS) Compact and the background compactor. At the end
// of each phase everything but the background sweeper is stopped and
// CheckInvariants checks, among the rest, that the policy's queues hold
// exactly the stored documents; so again after Close, and after a reopen.
func TestColdestStress(t *testing.T) {
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "durable"
		}
		t.Run(name, func(t *testing.T) { coldestStress(t, durable) })
	}
}

func coldestStress(t *testing.T, durable bool) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const (
		workers = 6
		ids     = 80
		phases  = 4
	)
	ops := 1500
	if raceEnabled {
		ops = 500
		if ttlstore.RaceRepeat(t) {
			ops = 150
		}
	}
	clk := &monotonicClock{Mock: newMock()}
	opts := ttlstore.Options{
		DefaultTTL:   ttlstore.TTL(5),
		Clock:        clk,
		SweepBatch:   3,
		MaxDocuments: 40,
		MaxBytes:     40 * 400,
		Eviction:     ttlstore.EvictColdest,
	}
	// The callbacks call back into the collection, as a cache that logs
	// what it drops might: they run with no lock held.
	var cur atomic.Pointer[ttlstore.Collection]
	callback := func(d ttlstore.Document) {
		if c := cur.Load(); c != nil {
			c.Read(d.ID())
		}
	}
	opts.OnEvict, opts.OnExpire = callback, callback
	fsys := vfs.NewMemFS()
	open := func() *ttlstore.Collection {
		var c *ttlstore.Collection
		var err error
		if durable {
			c, err = ttlstore.OpenFS(fsys, "db", opts, 2048, false)
		} else {
			c, err = ttlstore.New(opts)
		}
		require.NoError(t, err)
		cur.Store(c)
		return c
	}
	c := open()
	defer func() { c.Close() }()

	allowed := []error{ttlstore.ErrFull, ttlstore.ErrConflict, ttlstore.ErrNotFound, ttlstore.ErrPreconditionFailed}
	var failed atomic.Bool
	fail := func(format string, args ...any) {
		failed.Store(true)
		t.Errorf(format, args...)
	}
	check := func(what string, err error) {
		if err == nil {
			return
		}
		for _, a := range allowed {
			if errors.Is(err, a) {
				return
			}
		}
		fail("%s: %v", what, err)
	}
	doc := func(rng *rand.Rand, id string) []byte {
		ttl := []string{"", "", `,"ttl":-1`, `,"ttl":1`, `,"ttl":2`, `,"ttl":7`}[rng.IntN(6)]
		return bndDoc(id, rng.IntN(250), ttl)
	}
	load := func(_ context.Context, id string) (any, error) {
		return fmt.Appendf(nil, `{"id":%q,"loaded":true}`, id), nil
	}

	for p := range phases {
		stop := make(chan struct{})
		var workersWG, helpers sync.WaitGroup
		// helper runs f until stop is closed.
		helper := func(seed uint64, f func(rng *rand.Rand)) {
			helpers.Add(1)
			go func() {
				defer helpers.Done()
				rng := rand.New(rand.NewPCG(uint64(p), seed))
				for !failed.Load() {
					select {
					case <-stop:
						return
					default:
					}
					f(rng)
					runtime.Gosched()
				}
			}()
		}
		helper(100, func(rng *rand.Rand) { // the only goroutine that moves the clock
			clk.Add(time.Duration(rng.Int64N(int64(400*time.Millisecond))) + time.Millisecond)
		})
		helper(101, func(rng *rand.Rand) {
			lim := []struct {
				docs  int
				bytes int64
			}{{40, 40 * 400}, {60, 0}, {0, 30 * 400}, {40, 40 * 400}, {20, 10 * 400}, {5, 0}, {0, 4 * 400}}[rng.IntN(7)]
			check("SetLimits", c.SetLimits(lim.docs, lim.bytes))
		})
		helper(102, func(rng *rand.Rand) {
			check("SetDefaultTTL", c.SetDefaultTTL([]*int32{nil, ttlstore.TTL(-1), ttlstore.TTL(2), ttlstore.TTL(5)}[rng.IntN(4)]))
		})
		helper(103, func(*rand.Rand) { c.Sweep() })
		if durable {
			helper(104, func(*rand.Rand) { check("Compact", c.Compact()) })
		}
		for w := range workers {
			workersWG.Add(1)
			go func() {
				defer workersWG.Done()
				rng := rand.New(rand.NewPCG(uint64(p), uint64(w)))
				for range ops {
					if failed.Load() {
						return
					}
					id := fmt.Sprintf("k%03d", rng.IntN(ids))
					var err error
					switch rng.IntN(11) {
					case 0:
						_, err = c.Create(doc(rng, id))
					case 1, 2:
						_, err = c.Upsert(doc(rng, id))
					case 3:
						_, err = c.Replace(doc(rng, id))
					case 4:
						if d, rerr := c.Read(id); rerr == nil {
							_, err = c.ReplaceIfMatch(doc(rng, id), d.ETag())
						}
					case 5:
						err = c.Delete(id)
					case 6:
						if d, rerr := c.Read(id); rerr == nil {
							err = c.DeleteIfMatch(id, d.ETag())
						}
					case 7:
						_, err = c.Touch(id)
					case 8:
						_, err = c.ReadOrLoad(context.Background(), id, load)
					default:
						_, err = c.Read(id)
					}
					check(id, err)
				}
			}()
		}
		workersWG.Wait()
		close(stop)
		helpers.Wait()
		require.False(t, failed.Load())
		// The background sweeper may still be sweeping: the check holds
		// every shard's lock, so it sees the collection between batches.
		require.NoError(t, c.CheckInvariants(), "phase %d", p)
	}
	st := c.Stats()
	t.Logf("%d live, %d evicted, %d refused, %d swept, %d hits, %d misses", st.Live, st.Evicted, st.Refused, st.Swept, st.Hits, st.Misses)
	require.NoError(t, c.Close())
	require.NoError(t, c.CheckInvariants(), "after Close")
	if durable {
		c = open()
		require.NoError(t, c.CheckInvariants(), "reopened")
	}
}
