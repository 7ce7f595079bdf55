package ttlstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/ttlstore/ttlstore"
)

// heapInUse returns the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestBoundHoldsHeap checks that MaxBytes bounds the heap a collection
// really holds: filled far past its bound, a collection's heap is MaxBytes
// within 10%, plus what an empty collection costs, under each policy and
// for each workload: documents of spread-out sizes, and small documents
// whose expiries share one second, spread over 60, or are all distinct
// (the expiry index must cost the same for each). This is what the weight
// (Document.Weight) is for.
func TestBoundHoldsHeap(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("fills 32 MiB four times over; the race detector's shadow memory would blur the figures")
	}
	const maxBytes = 32 << 20
	pad := make([]byte, 4096)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	// small is a document of about 90 bytes whose ttl is ttl(i).
	small := func(ttl func(i int) int) func(*rand.Rand, int) string {
		return func(_ *rand.Rand, i int) string {
			return `{"id":"doc-` + strconv.Itoa(i) + `","ttl":` + strconv.Itoa(ttl(i)) + `,"user":"u` + strconv.Itoa(i%10) + `","payload":"` + string(pad[:28]) + `"}`
		}
	}
	workloads := []struct {
		name       string
		defaultTTL int32
		doc        func(rng *rand.Rand, i int) string
	}{
		{"spread sizes", 3600, func(rng *rand.Rand, i int) string {
			// Sizes from 40 bytes to 4 KiB, most of them small, as
			// in a cache of sessions and documents; ids of spread
			// lengths; a ttl on a third of them.
			n := int(40 * (1 + rng.ExpFloat64()*4))
			n = min(n, len(pad))
			doc := `{"id":"doc-` + strconv.Itoa(i) + "-" + strconv.Itoa(rng.IntN(1000)) + `",`
			if i%3 == 0 {
				doc += `"ttl":` + strconv.Itoa(60+rng.IntN(86400)) + `,`
			}
			return doc + `"v":"` + string(pad[:n]) + `"}`
		}},
		{"small, one expiry second", ttlstore.Never, small(func(int) int { return 3600 })},
		{"small, 60 expiry seconds", ttlstore.Never, small(func(i int) int { return 3600 + i%60 })},
		{"small, distinct expiry seconds", ttlstore.Never, small(func(i int) int { return 3600 + i })},
	}
	for _, w := range workloads {
		for _, policy := range []ttlstore.EvictionPolicy{ttlstore.NoEviction, ttlstore.EvictColdest, ttlstore.EvictSoonestExpiry} {
			t.Run(w.name+"/"+policy.String(), func(t *testing.T) {
				base := heapInUse()
				c, err := ttlstore.New(ttlstore.Options{
					DefaultTTL:    ttlstore.TTL(w.defaultTTL),
					MaxBytes:      maxBytes,
					Eviction:      policy,
					SweepInterval: ttlstore.ManualSweep,
				})
				require.NoError(t, err)
				empty := heapInUse() - base

				rng := rand.New(rand.NewPCG(1, 2))
				var written, refused int64
				for i := 0; written < 4*maxBytes && refused < 1000; i++ {
					d, err := c.Create([]byte(w.doc(rng, i)))
					switch {
					case errors.Is(err, ttlstore.ErrFull):
						refused++
						continue
					case err != nil:
						t.Fatal(err)
					}
					written += d.Weight()
				}
				st := c.Stats()
				require.LessOrEqual(t, st.Bytes, int64(maxBytes))
				heap := heapInUse() - base - empty
				ratio := float64(heap) / float64(maxBytes)
				t.Logf("%s, %s: %d documents, weight %d, heap %d above an empty collection's %d: %.3f of MaxBytes",
					w.name, policy, st.Live, st.Bytes, heap, empty, ratio)
				require.InDelta(t, 1, ratio, 0.10, fmt.Sprintf("heap %d for MaxBytes %d", heap, maxBytes))
				runtime.KeepAlive(c)
				require.NoError(t, c.Close())
			})
		}
	}
}
