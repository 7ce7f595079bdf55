package bench

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlstore/ttlstore"
)

// BenchmarkSweepNothing measures one sweep of a store of 100k or 1M live
// documents of which none has expired: ttlstore Sweep, otter CleanUp,
// ttlcache DeleteExpired (a look at its heap's root), go-cache DeleteExpired
// (a scan of every item). buntdb and the expirable LRU have no call that
// sweeps on demand.
func BenchmarkSweepNothing(b *testing.B) {
	for _, n := range []int{n100k, n1M} {
		b.Run(sizeName(n), func(b *testing.B) {
			forEachKind(b, isSweeper, func(b *testing.B, k Kind) {
				s, _ := filled(k, n, Config{Expiry: true})
				sw := s.(Sweeper)
				b.ReportAllocs()
				for b.Loop() {
					sw.Sweep()
				}
				if !s.Get(Data(n).IDs[0]) {
					b.Fatalf("%s: a sweep removed a live document", k.Name)
				}
			})
		})
	}
}

// BenchmarkSweepExpired measures one sweep that removes 100k expired
// documents, all of the store. Each iteration builds its store outside the
// timer, so run it with a fixed count (-benchtime=10x).
func BenchmarkSweepExpired(b *testing.B) {
	d := Data(n100k)
	b.Run(sizeName(n100k), func(b *testing.B) {
		forEachKind(b, isSweeper, func(b *testing.B, k Kind) {
			dropFixture()
			for b.Loop() {
				b.StopTimer()
				s := k.New(Config{Expiry: true})
				if err := FillExpired(s, d.IDs, d.Docs, d.Len()); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				b.StartTimer()

				s.(Sweeper).Sweep()

				b.StopTimer()
				if t, ok := s.(*TTLStore); ok {
					if st := t.C.Stats(); st.Expired != 0 || st.Swept != uint64(d.Len()) {
						b.Fatalf("after the sweep: %+v", st)
					}
				}
				s.Close()
				b.StartTimer()
			}
		})
	})
}

// Sizes of the mass-expiry workload: a million documents expire at once while
// a reader reads a hundred thousand live ones.
const (
	massExpired = n1M
	massLive    = n100k
	idleReads   = 2_000_000
)

// BenchmarkReadDuringSweep measures the latency of every read of a live
// document, on one goroutine, in a store where a million documents have
// expired: phase=idle while nothing else runs, phase=sweeping while another
// goroutine sweeps the million away (ttlstore Sweep, in batches of 256 per
// shard with the lock released between batches; go-cache DeleteExpired,
// which holds its lock throughout). It reports the 50th, 99th and 99.9th
// percentiles and the maximum of the read latencies (ns, from a log-linear
// histogram, within 3 %), the number of reads, and the sweep's duration.
// A read's latency includes one clock reading and the histogram update.
//
// No hook inside ttlstore measures how long a sweep batch holds a shard's
// lock; max-ns during the sweep is an upper bound of the longest hold a
// reader waited for (it also includes any scheduling delay of the reader).
func BenchmarkReadDuringSweep(b *testing.B) {
	d := Data(massExpired + massLive)
	liveIDs := d.IDs[massExpired:]
	order := ReadOrder(liveIDs)
	build := func(k Kind) func() Store {
		return func() Store {
			s := k.New(Config{Expiry: true})
			if err := FillExpired(s, d.IDs, d.Docs, massExpired); err != nil {
				b.Fatal(err)
			}
			return s
		}
	}
	for _, phase := range []string{"idle", "sweeping"} {
		b.Run("phase="+phase, func(b *testing.B) {
			forEachKind(b, only("ttlstore", "gocache"), func(b *testing.B, k Kind) {
				var h Histogram
				var sweepTime time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					s := fixtureStore("mass/"+k.Name, build(k))
					runtime.GC()
					b.StartTimer()
					if phase == "idle" {
						timedReads(&h, s, order, idleReads, nil)
						continue
					}
					var done atomic.Bool
					go func() {
						t0 := time.Now()
						s.(Sweeper).Sweep()
						sweepTime += time.Since(t0)
						done.Store(true)
					}()
					timedReads(&h, s, order, 0, &done)
					b.StopTimer()
					if t, ok := s.(*TTLStore); ok {
						if st := t.C.Stats(); st.Expired != 0 || st.Live != massLive {
							b.Fatalf("after the sweep: %+v", st)
						}
					}
					dropFixture() // swept: the next run needs a new one
					b.StartTimer()
				}
				b.ReportMetric(float64(h.Quantile(0.50)), "p50-ns")
				b.ReportMetric(float64(h.Quantile(0.99)), "p99-ns")
				b.ReportMetric(float64(h.Quantile(0.999)), "p99.9-ns")
				b.ReportMetric(float64(h.Max()), "max-ns")
				b.ReportMetric(float64(h.Count())/float64(b.N), "reads/op")
				if phase == "sweeping" {
					b.ReportMetric(float64(sweepTime.Milliseconds())/float64(b.N), "sweep-ms")
				}
			})
		})
	}
}

// timedReads reads order in sequence and records each read's latency: n
// reads, or as many as it takes for done to become true.
func timedReads(h *Histogram, s Store, order []string, n int, done *atomic.Bool) {
	misses := 0
	t0 := time.Now()
	for i := 0; ; i++ {
		if done != nil {
			if done.Load() {
				break
			}
		} else if i == n {
			break
		}
		if !s.Get(order[i&orderMask]) {
			misses++
		}
		t1 := time.Now()
		h.Record(t1.Sub(t0))
		t0 = t1
	}
	if misses > 0 {
		panic("bench: a live document was not found")
	}
}

// BenchmarkSetDefaultTTL measures ttlstore's SetDefaultTTL on a collection of
// 1M documents, none expired, alternating between one and two hours. Every
// call re-resolves every document and rebuilds every shard's expiry index
// with all locks held. Run it with a fixed count (-benchtime=5x).
func BenchmarkSetDefaultTTL(b *testing.B) {
	b.Run(sizeName(n1M), func(b *testing.B) {
		forEachKind(b, only("ttlstore"), func(b *testing.B, k Kind) {
			s, _ := filled(k, n1M, Config{Expiry: true})
			c := s.(*TTLStore).C
			ttls := [2]*int32{ttlstore.TTL(7200), ttlstore.TTL(3600)}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := c.SetDefaultTTL(ttls[i%2]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if i%2 == 1 { // leave it as Fill made it
				if err := c.SetDefaultTTL(ttls[1]); err != nil {
					b.Fatal(err)
				}
			}
			if got := c.Len(); got != n1M {
				b.Fatalf("Len = %d after SetDefaultTTL, want %d", got, n1M)
			}
		})
	})
}
