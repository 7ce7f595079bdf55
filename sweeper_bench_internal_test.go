package ttlstore

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// BenchmarkSweepBatchHold measures how long a sweep holds a shard's lock: it
// sweeps 1M expired documents (of about 200 bytes) one batch at a time, as
// sweep does, and times each batch, lock and unlock included. It reports the
// median and the longest batch (hold-p50-µs, hold-max-µs) and the whole
// sweep per document. Run it with -benchtime=1x. bench/run.sh runs it too,
// for the targets' table.
//
// The documents expire 60 seconds after one write second, in the exact
// tree; in the rows spread=far, an hour after it and spread over the next
// 1,000 seconds (1,000 documents a second), so that the sweep drains the
// far tree (expiry_far.go) as it pops. The sweep comes once all have
// expired, or, in the row sweep=each-second, at each second of the 1,000,
// as a sweeper that keeps up does.
func BenchmarkSweepBatchHold(b *testing.B) {
	const n = 1_000_000
	for _, row := range []struct {
		name  string
		batch int
		ttl   int32
		steps int // sweeps, a second apart, the last after every expiry
	}{
		{"batch=256", DefaultSweepBatch, 60, 1},
		{"batch=1024", 1024, 60, 1},
		{"batch=256/spread=far", DefaultSweepBatch, 3600, 1},
		{"batch=256/spread=far/sweep=each-second", DefaultSweepBatch, 3600, 1001},
	} {
		batch := row.batch
		b.Run(row.name, func(b *testing.B) {
			var holds []time.Duration
			var total time.Duration
			var ms runtime.MemStats
			var gcs uint32 // garbage collections while the sweep ran
			for range b.N {
				b.StopTimer()
				m := clock.NewMock()
				m.Set(time.Unix(1_700_000_000, 0))
				c, err := New(Options{DefaultTTL: TTL(row.ttl), Clock: m, SweepInterval: ManualSweep, SweepBatch: batch})
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					if row.ttl > 60 && i%1000 == 999 {
						m.Add(time.Second)
					}
					doc := fmt.Appendf(nil, `{"id":"user-%07d","name":"Ada Lovelace","email":"ada%d@example.com","tags":["a","b","c"],"score":%d.5,"active":true,"address":{"city":"London","zip":"N1 %d"}}`, i, i, i%100, i%10)
					if _, err := c.Upsert(doc); err != nil {
						b.Fatal(err)
					}
				}
				m.Add(time.Hour + time.Duration(1001-row.steps)*time.Second)
				var buf sweepBuffers
				runtime.ReadMemStats(&ms)
				gcBefore := ms.NumGC
				empty := 0 // batches that drained far but popped nothing
				for range row.steps {
					m.Add(time.Second)
					now := c.now()
					b.StartTimer()
					for i := range c.shards {
						s := &c.shards[i]
						for isExpired(s.minExp.Load(), now) {
							t0 := time.Now()
							removed, _ := c.sweepBatch(s, now, &buf)
							d := time.Since(t0)
							holds = append(holds, d)
							total += d
							if len(removed) == 0 {
								empty++
							}
							buf.clear()
						}
					}
					b.StopTimer()
				}
				if empty > len(holds)/2 {
					b.Fatalf("%d batches of %d popped nothing", empty, len(holds))
				}
				runtime.ReadMemStats(&ms)
				gcs += ms.NumGC - gcBefore
				if st := c.Stats(); st.Live != 0 || st.Expired != 0 {
					b.Fatalf("after the sweep: %+v", st)
				}
				c.Close()
			}
			slices.Sort(holds)
			b.ReportMetric(float64(holds[len(holds)/2].Nanoseconds())/1e3, "hold-p50-µs")
			b.ReportMetric(float64(holds[len(holds)*99/100].Nanoseconds())/1e3, "hold-p99-µs")
			b.ReportMetric(float64(holds[len(holds)*999/1000].Nanoseconds())/1e3, "hold-p99.9-µs")
			b.ReportMetric(float64(holds[len(holds)-1].Nanoseconds())/1e3, "hold-max-µs")
			b.ReportMetric(float64(gcs)/float64(b.N), "gcs/op")
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N)/n, "ns/doc")
		})
	}
}
