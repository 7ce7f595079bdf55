package ttlstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// feedDocs returns n documents of spread sizes (about 100 to 1,100 bytes of
// JSON) and spread own ttls (one minute to a day), for ids drawn from ids
// distinct ones.
func feedDocs(n, ids int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = fmt.Appendf(nil, `{"id":"order-%07d","ttl":%d,"status":"open","lines":%d,"note":%q}`,
			rng.IntN(ids), 60+rng.IntN(86400), rng.IntN(20), strings.Repeat("x", rng.IntN(1000)))
	}
	return docs
}

// BenchmarkFeedWrite is the cost of the change feed to writes: Upserts of
// 100,000 ids of spread sizes and ttls, without a feed, with one and no
// reader, and with one reader waiting on it (Feed), caught up.
func BenchmarkFeedWrite(b *testing.B) {
	docs := feedDocs(1<<16, 100_000)
	for _, mode := range []string{"off", "on", "on+reader"} {
		b.Run("feed="+mode, func(b *testing.B) {
			opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), SweepInterval: ttlstore.ManualSweep}
			if mode != "off" {
				opts.ChangeFeed = ttlstore.ChangeFeedOptions{RetainBytes: 64 << 20}
			}
			c, err := ttlstore.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			for _, d := range docs {
				if _, err := c.Upsert(d); err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int)
			if mode == "on+reader" {
				go func() {
					n := 0
					for _, err := range c.Feed(ctx, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Start: ttlstore.FeedFromNow}) {
						if err != nil {
							break
						}
						n++
					}
					done <- n
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Upsert(docs[i&(len(docs)-1)]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cancel()
			if mode == "on+reader" {
				<-done
			}
		})
	}
}

// BenchmarkFeedCatchUp reads 1,000,000 retained changes from the start, in
// pages of 1,000: from memory, and from a durable collection's log (Open,
// which reads the feed back, and the reads). It reports changes/s.
func BenchmarkFeedCatchUp(b *testing.B) {
	const n = 1_000_000
	docs := feedDocs(1<<16, 200_000)
	fill := func(b *testing.B, c *ttlstore.Collection) {
		for i := range n {
			if _, err := c.Upsert(docs[i&(len(docs)-1)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	read := func(b *testing.B, c *ttlstore.Collection) {
		req := ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes}
		got := 0
		for {
			page, err := c.ReadFeed(req)
			if err != nil {
				b.Fatal(err)
			}
			if len(page.Changes) == 0 {
				break
			}
			got += len(page.Changes)
			req.Token = page.Token
		}
		if got != n {
			b.Fatalf("read %d changes, want %d", got, n)
		}
	}
	feed := ttlstore.ChangeFeedOptions{RetainBytes: 4 << 30}
	b.Run("memory", func(b *testing.B) {
		c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), SweepInterval: ttlstore.ManualSweep, ChangeFeed: feed})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		fill(b, c)
		b.ResetTimer()
		for range b.N {
			read(b, c)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
	})
	// One directory for both disk benchmarks, written on first use.
	dir := b.TempDir()
	opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), SweepInterval: ttlstore.ManualSweep, ChangeFeed: feed, Sync: ttlstore.SyncNever, Clock: clock.New()}
	written := false
	write := func(b *testing.B) {
		if written {
			return
		}
		c, err := ttlstore.OpenFS(vfs.OS, dir, opts, 1<<40, false)
		if err != nil {
			b.Fatal(err)
		}
		fill(b, c)
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		written = true
	}
	b.Run("disk", func(b *testing.B) {
		write(b)
		b.ResetTimer()
		for range b.N {
			c, err := ttlstore.OpenFS(vfs.OS, dir, opts, 1<<40, false)
			if err != nil {
				b.Fatal(err)
			}
			read(b, c)
			b.StopTimer()
			c.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
	})
	// The same Open without a feed: what of the time above is the
	// collection's own load rather than the feed's.
	b.Run("disk-open-without-feed", func(b *testing.B) {
		write(b)
		noFeed := opts
		noFeed.ChangeFeed = ttlstore.ChangeFeedOptions{}
		b.ResetTimer()
		for range b.N {
			c, err := ttlstore.OpenFS(vfs.OS, dir, noFeed, 1<<40, false)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			c.Close()
			b.StartTimer()
		}
	})
}
