package bench

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// durableWriters are the numbers of concurrent writers of BenchmarkDurableWrite.
var durableWriters = []int{1, 16, 64}

// BenchmarkDurableWrite measures writes of ~200-byte JSON documents to a
// durable store, with 1, 16 and 64 goroutines writing at once, at each sync
// level (sync=always, everysecond, never; see Sync for what each store runs
// with). Every run opens an empty store in a directory of its own
// (b.TempDir, outside the timer); the writers share b.N writes that cycle
// over the data set's 100k ids (the first pass inserts, later ones
// overwrite with the other value). ns/op is the elapsed time over b.N, so
// writes/s is its inverse; each write's latency goes into a histogram
// (p50-ns, p99-ns, max-ns). For ttlstore, fsyncs/s and writes/fsync come
// from Stats.LogSyncs; the peers do not say.
//
// Background work counts where it happens within the run: buntdb's
// once-a-second fsync and automatic shrink, badger's memtable flushes and
// compactions, ttlstore's compaction once its log passes 64 MiB.
func BenchmarkDurableWrite(b *testing.B) {
	d := Data(n100k)
	for _, w := range durableWriters {
		b.Run(fmt.Sprintf("writers=%d", w), func(b *testing.B) {
			for _, sy := range []Sync{SyncAlways, SyncEverySecond, SyncNever} {
				b.Run("sync="+sy.String(), func(b *testing.B) {
					for _, k := range DurableKinds {
						if !hasSync(k, sy) {
							continue
						}
						b.Run("store="+k.Name, func(b *testing.B) {
							benchDurableWrites(b, k, sy, w, d)
						})
					}
				})
			}
		})
	}
}

func hasSync(k DurableKind, s Sync) bool {
	for _, x := range k.Syncs {
		if x == s {
			return true
		}
	}
	return false
}

func benchDurableWrites(b *testing.B, k DurableKind, sy Sync, writers int, d *Dataset) {
	dropFixture()
	s, err := k.Open(b.TempDir(), DurableConfig{Sync: sy})
	if err != nil {
		b.Fatal(err)
	}
	var syncs0 uint64
	sc, counts := s.(syncCounter)
	if counts {
		syncs0 = sc.Syncs()
	}
	hists := make([]Histogram, writers)
	errs := make([]error, writers)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for g := range writers {
		wg.Add(1)
		go func(h *Histogram) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				j := i % d.Len()
				doc := d.Docs[j]
				if (i/d.Len())%2 == 1 {
					doc = d.Alt[j]
				}
				t0 := time.Now()
				err := s.Set(d.IDs[j], doc)
				h.Record(time.Since(t0))
				if err != nil {
					errs[g] = err
					return
				}
			}
		}(&hists[g])
	}
	wg.Wait()
	b.StopTimer()
	elapsed := b.Elapsed().Seconds()
	var syncs uint64
	if counts {
		syncs = sc.Syncs() - syncs0
	}
	for _, err := range errs {
		if err != nil {
			s.Close()
			b.Fatalf("%s: write: %v", k.Name, err)
		}
	}
	if !s.Get(d.IDs[0]) || !s.Get(d.IDs[(b.N-1)%d.Len()]) {
		b.Errorf("%s: a written document is missing", k.Name)
	}
	if err := s.Close(); err != nil {
		b.Fatalf("%s: Close: %v", k.Name, err)
	}
	var h Histogram
	for i := range hists {
		h.Merge(&hists[i])
	}
	b.ReportMetric(float64(b.N)/elapsed, "writes/s")
	b.ReportMetric(float64(h.Quantile(0.50)), "p50-ns")
	b.ReportMetric(float64(h.Quantile(0.99)), "p99-ns")
	b.ReportMetric(float64(h.Max()), "max-ns")
	if counts {
		b.ReportMetric(float64(syncs)/elapsed, "fsyncs/s")
		if syncs > 0 {
			b.ReportMetric(float64(b.N)/float64(syncs), "writes/fsync")
		}
	}
}
