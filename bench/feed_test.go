package bench

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/tidwall/buntdb"

	"github.com/ttlstore/ttlstore"
)

// The change feed against the peers' nearest equivalents: badger's
// Subscribe (changes under a key prefix, pushed to a callback) for writes
// watched as they commit, and buntdb's OnExpired for expiries. Each reports
// the latency from the write (or the expiry instant) to delivery, p50 and
// p99, as metrics; ns/op is the write's, with the subscriber running.

// feedN is how many writes one iteration of BenchmarkFeedSubscribe makes.
const feedN = 100_000

// feedPayload returns the i-th document.
func feedPayload(i int) []byte {
	return fmt.Appendf(nil, `{"id":"k%07d","n":%d,"pad":"%0*d"}`, i%20_000, i, 50+i%200, 0)
}

// subscriber records, for each write i, the delay from sent[i] to its
// delivery.
type subscriber struct {
	sent []atomic.Int64 // UnixNano before write i
	h    Histogram
	got  atomic.Int64
	done chan struct{}
}

func newSubscriber() *subscriber {
	return &subscriber{sent: make([]atomic.Int64, feedN), done: make(chan struct{})}
}

func (s *subscriber) deliver(i int) {
	s.h.Record(time.Duration(time.Now().UnixNano() - s.sent[i].Load()))
	if s.got.Add(1) == feedN {
		close(s.done)
	}
}

func (s *subscriber) report(b *testing.B) {
	b.ReportMetric(float64(s.h.Quantile(0.5).Nanoseconds()), "p50-deliver-ns")
	b.ReportMetric(float64(s.h.Quantile(0.99).Nanoseconds()), "p99-deliver-ns")
}

// BenchmarkFeedSubscribe writes feedN documents (20,000 ids, 100 to 300
// bytes) on one goroutine while one subscriber receives each change.
func BenchmarkFeedSubscribe(b *testing.B) {
	b.Run("ttlstore", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), ChangeFeed: ttlstore.ChangeFeedOptions{RetainBytes: 64 << 20}})
			if err != nil {
				b.Fatal(err)
			}
			s := newSubscriber()
			ctx, cancel := context.WithCancel(context.Background())
			now, err := c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Start: ttlstore.FeedFromNow})
			if err != nil {
				b.Fatal(err)
			}
			go func() {
				var buf []byte
				for ch, err := range c.Feed(ctx, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: now.Token}) {
					if err != nil {
						return
					}
					buf = ch.Document.AppendJSON(buf[:0])
					s.deliver(numberAfter(buf, `"n":`))
				}
			}()
			b.StartTimer()
			for i := range feedN {
				s.sent[i].Store(time.Now().UnixNano())
				if _, err := c.Upsert(feedPayload(i)); err != nil {
					b.Fatal(err)
				}
			}
			<-s.done
			b.StopTimer()
			cancel()
			c.Close()
			s.report(b)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*feedN), "ns/write")
	})
	b.Run("badger", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			db, err := badger.Open(badger.DefaultOptions("").WithInMemory(true).WithLogger(nil))
			if err != nil {
				b.Fatal(err)
			}
			s := newSubscriber()
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Add(1)
			ready := make(chan struct{})
			go func() {
				defer wg.Done()
				close(ready)
				_ = db.Subscribe(ctx, func(kv *badger.KVList) error {
					for _, x := range kv.Kv {
						s.deliver(numberAfter(x.Value, `"n":`))
					}
					return nil
				}, []pb.Match{{Prefix: []byte("k")}})
			}()
			<-ready
			time.Sleep(10 * time.Millisecond) // Subscribe registers once running, and says nothing when it has
			b.StartTimer()
			for i := range feedN {
				s.sent[i].Store(time.Now().UnixNano())
				p := feedPayload(i)
				if err := db.Update(func(txn *badger.Txn) error {
					return txn.SetEntry(badger.NewEntry(p[7:15], p).WithTTL(time.Hour))
				}); err != nil {
					b.Fatal(err)
				}
			}
			<-s.done
			b.StopTimer()
			cancel()
			wg.Wait()
			db.Close()
			s.report(b)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*feedN), "ns/write")
	})
}

// numberAfter returns the decimal digits after the first key in b.
func numberAfter(b []byte, key string) int {
	i := bytes.Index(b, []byte(key)) + len(key)
	n := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = 10*n + int(b[i]-'0')
	}
	return n
}

// BenchmarkExpiryNotify writes expN documents that expire at one instant,
// and reports how long after it each expiry is delivered: by ttlstore's
// feed (with its background sweeper) and by buntdb's OnExpired.
func BenchmarkExpiryNotify(b *testing.B) {
	const expN = 10_000
	b.Run("ttlstore", func(b *testing.B) {
		var h Histogram
		for range b.N {
			c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(1), ChangeFeed: ttlstore.ChangeFeedOptions{RetainBytes: 64 << 20}})
			if err != nil {
				b.Fatal(err)
			}
			var at time.Time
			for i := range expN {
				d, err := c.Upsert(fmt.Appendf(nil, `{"id":"e%d"}`, i))
				if err != nil {
					b.Fatal(err)
				}
				at, _ = d.ExpiresAt()
			}
			tok, err := c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Start: ttlstore.FeedFromNow})
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			for ch, err := range c.Feed(context.Background(), ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: tok.Token, Previous: true}) {
				if err != nil {
					b.Fatal(err)
				}
				if ch.TimeToLiveExpired {
					exp, _ := ch.Previous.ExpiresAt()
					if exp.IsZero() {
						exp = at
					}
					h.Record(time.Since(exp))
					if got++; got == expN {
						break
					}
				}
			}
			c.Close()
		}
		b.ReportMetric(float64(h.Quantile(0.5).Nanoseconds()), "p50-deliver-ns")
		b.ReportMetric(float64(h.Quantile(0.99).Nanoseconds()), "p99-deliver-ns")
	})
	b.Run("buntdb", func(b *testing.B) {
		var h Histogram
		for range b.N {
			db, err := buntdb.Open(":memory:")
			if err != nil {
				b.Fatal(err)
			}
			var c buntdb.Config
			if err := db.ReadConfig(&c); err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			exp := map[string]time.Time{}
			got := 0
			done := make(chan struct{})
			c.OnExpired = func(keys []string) {
				now := time.Now()
				mu.Lock()
				defer mu.Unlock()
				for _, k := range keys {
					h.Record(now.Sub(exp[k]))
					if got++; got == expN {
						close(done)
					}
				}
			}
			if err := db.SetConfig(c); err != nil {
				b.Fatal(err)
			}
			for i := range expN {
				k := fmt.Sprintf("e%d", i)
				mu.Lock()
				exp[k] = time.Now().Add(time.Second)
				mu.Unlock()
				if err := db.Update(func(tx *buntdb.Tx) error {
					_, _, err := tx.Set(k, `{"id":"`+k+`"}`, &buntdb.SetOptions{Expires: true, TTL: time.Second})
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			<-done
			db.Close()
		}
		b.ReportMetric(float64(h.Quantile(0.5).Nanoseconds()), "p50-deliver-ns")
		b.ReportMetric(float64(h.Quantile(0.99).Nanoseconds()), "p99-deliver-ns")
	})
}
