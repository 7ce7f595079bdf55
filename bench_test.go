package ttlstore_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

// The library's own benchmarks, for tuning. The comparison with other caches
// is in the bench/ module.

// benchDocs returns n documents of about 200 bytes of JSON and their ids.
func benchDocs(n int) ([]string, [][]byte) {
	ids := make([]string, n)
	docs := make([][]byte, n)
	for i := range n {
		ids[i] = fmt.Sprintf("user-%07d", i)
		docs[i] = fmt.Appendf(nil, `{"id":%q,"name":"Ada Lovelace","email":"ada%d@example.com","tags":["a","b","c"],"score":%d.5,"active":true,"address":{"city":"London","zip":"N1 %d"}}`, ids[i], i, i%100, i%10)
	}
	return ids, docs
}

// skewClock is the wall clock moved forward by an offset. Benchmarks use it
// rather than clock.Mock, whose Now takes a mutex and would dominate what
// they measure; moving the offset expires documents at once.
type skewClock struct {
	ttlstore.Clock
	skew atomic.Int64
}

func (c *skewClock) Now() time.Time                  { return c.Clock.Now().Add(time.Duration(c.skew.Load())) }
func (c *skewClock) Add(d time.Duration)             { c.skew.Add(int64(d)) }
func (c *skewClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// newBenchCollection returns a collection on the default clock, or on a
// skewClock for benchmarks that expire documents.
func newBenchCollection(b *testing.B, skew bool) *ttlstore.Collection {
	var clk ttlstore.Clock
	if skew {
		clk = &skewClock{Clock: clock.New()}
	}
	c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), Clock: clk, SweepInterval: ttlstore.ManualSweep})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func benchCollection(b *testing.B, n int, skew bool) (*ttlstore.Collection, []string, [][]byte) {
	b.Helper()
	c := newBenchCollection(b, skew)
	b.Cleanup(func() { c.Close() })
	ids, docs := benchDocs(n)
	for _, d := range docs {
		if _, err := c.Upsert(d); err != nil {
			b.Fatal(err)
		}
	}
	return c, ids, docs
}

func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("hit/%d", n), func(b *testing.B) {
			c, ids, _ := benchCollection(b, n, false)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Read(ids[i%n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("hit-parallel/100000", func(b *testing.B) {
		c, ids, _ := benchCollection(b, 100_000, false)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := c.Read(ids[i%len(ids)]); err != nil {
					b.Fatal(err)
				}
				i += 7
			}
		})
	})
	b.Run("hit-skewclock/100000", func(b *testing.B) {
		c, ids, _ := benchCollection(b, 100_000, true)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.Read(ids[i%len(ids)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("expired/100000", func(b *testing.B) {
		c, ids, _ := benchCollection(b, 100_000, true)
		skewOf(c).Add(2 * time.Hour)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.Read(ids[i%len(ids)]); err == nil {
				b.Fatal("expired document found")
			}
		}
	})
}

func BenchmarkWrite(b *testing.B) {
	b.Run("insert", func(b *testing.B) {
		const n = 100_000
		_, docs := benchDocs(n)
		b.ReportAllocs()
		var c *ttlstore.Collection
		for i := 0; i < b.N; i++ {
			if i%n == 0 {
				b.StopTimer()
				if c != nil {
					c.Close()
				}
				c = newBenchCollection(b, false)
				b.StartTimer()
			}
			if _, err := c.Upsert(docs[i%n]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		c.Close()
	})
	b.Run("overwrite", func(b *testing.B) {
		c, _, docs := benchCollection(b, 100_000, true)
		clk := skewOf(c)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%len(docs) == 0 {
				b.StopTimer()
				clk.Add(time.Second) // each pass moves every document's index entry
				b.StartTimer()
			}
			if _, err := c.Upsert(docs[i%len(docs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSweep(b *testing.B) {
	b.Run("nothing-expired/1000000", func(b *testing.B) {
		c, _, _ := benchCollection(b, 1_000_000, false)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if c.Sweep() != 0 {
				b.Fatal("swept")
			}
		}
	})
	b.Run("100000-expired", func(b *testing.B) {
		_, docs := benchDocs(100_000)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c := newBenchCollection(b, true)
			for _, d := range docs {
				if _, err := c.Upsert(d); err != nil {
					b.Fatal(err)
				}
			}
			skewOf(c).Add(2 * time.Hour)
			runtime.GC()
			b.StartTimer()
			if n := c.Sweep(); n != len(docs) {
				b.Fatalf("swept %d", n)
			}
			b.StopTimer()
			c.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkIterate measures one pass of All over 100k documents of which a
// share has expired unswept: the cost per live document (ns/live-doc)
// should not grow with that share.
func BenchmarkIterate(b *testing.B) {
	for _, pct := range []int{0, 50} {
		b.Run(fmt.Sprintf("expired=%d%%", pct), func(b *testing.B) {
			const n = 100_000
			c := newBenchCollection(b, true)
			b.Cleanup(func() { c.Close() })
			_, docs := benchDocs(n)
			expired := n * pct / 100
			for i, d := range docs {
				if i == expired {
					skewOf(c).Add(2 * time.Hour)
				}
				if _, err := c.Upsert(d); err != nil {
					b.Fatal(err)
				}
			}
			live := n - expired
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				got := 0
				for range c.All() {
					got++
				}
				if got != live {
					b.Fatalf("iterated %d, want %d", got, live)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(live), "ns/live-doc")
		})
	}
}

func skewOf(c *ttlstore.Collection) *skewClock { return c.Clock().(*skewClock) }

// BenchmarkBounded measures reads and writes of a full collection under
// each policy, against the same collection with no bound ("none").
func BenchmarkBounded(b *testing.B) {
	const n = 100_000
	policies := []struct {
		name   string
		max    int
		policy ttlstore.EvictionPolicy
	}{
		{"none", 0, ttlstore.NoEviction},
		{"NoEviction", n, ttlstore.NoEviction},
		{"EvictColdest", n, ttlstore.EvictColdest},
		{"EvictSoonestExpiry", n, ttlstore.EvictSoonestExpiry},
	}
	ids, docs := benchDocs(2 * n)
	full := func(b *testing.B, max int, policy ttlstore.EvictionPolicy) *ttlstore.Collection {
		c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), SweepInterval: ttlstore.ManualSweep,
			MaxDocuments: max, Eviction: policy})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		for _, d := range docs[:n] {
			if _, err := c.Upsert(d); err != nil {
				b.Fatal(err)
			}
		}
		return c
	}
	for _, p := range policies {
		b.Run("read/"+p.name, func(b *testing.B) {
			c := full(b, p.max, p.policy)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Read(ids[i%n]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("read-parallel/"+p.name, func(b *testing.B) {
			c := full(b, p.max, p.policy)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := c.Read(ids[i%n]); err != nil {
						b.Fatal(err)
					}
					i += 7
				}
			})
		})
		b.Run("overwrite/"+p.name, func(b *testing.B) {
			c := full(b, p.max, p.policy)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Upsert(docs[i%n]); err != nil {
					b.Fatal(err)
				}
			}
		})
		if p.max == 0 || p.policy != ttlstore.NoEviction {
			// New ids, each evicting one document (none: growing).
			b.Run("insert-evict/"+p.name, func(b *testing.B) {
				c := full(b, p.max, p.policy)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if i > 0 && i%n == 0 && p.max == 0 {
						b.StopTimer()
						c.Close()
						c = full(b, p.max, p.policy)
						b.StartTimer()
					}
					if _, err := c.Upsert(docs[(n+i)%(2*n)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
