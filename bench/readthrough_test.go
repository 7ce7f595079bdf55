package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jellydator/ttlcache/v3"
	"github.com/maypok86/otter/v2"
	"github.com/ttlstore/ttlstore"
)

// The read-through workloads: a cache in front of a slower source, read
// with a call that loads a missing value and stores it. ttlstore's
// ReadOrLoad against otter's Get with a Loader and ttlcache's Get with a
// cache-wide loader (WithLoader), plain and wrapped in its
// SuppressedLoader (singleflight). Every loader returns a small struct,
// profile; ttlstore marshals it to JSON as it stores it (store=ttlstore),
// or is given the JSON bytes (store=ttlstore-json); the peers keep the
// struct. store=ttlstore-manual is the read-through written by hand with
// Read and Create, the base for what ReadOrLoad adds.
//
//	BenchmarkLoadHit    a read of a live value, 100k loaded: ReadOrLoad against Read
//	BenchmarkLoadMiss   a miss and its load, a new id every op, one goroutine
//	BenchmarkLoadStorm  64 goroutines miss one new id at once: loads per storm, latency

// profile is what the loaders return.
type profile struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Score int    `json:"score"`
}

// source is the slow store behind the caches: it counts its loads, and
// takes delay over each.
type source struct {
	loads atomic.Int64
	delay time.Duration
}

func (s *source) load(id string) profile {
	s.loads.Add(1)
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	return profile{ID: id, Name: "Ada Lovelace", Score: 1815}
}

// loadJSON is load returning the profile as JSON bytes, built by hand.
func (s *source) loadJSON(id string) []byte {
	p := s.load(id)
	b := make([]byte, 0, 64)
	b = append(b, `{"id":`...)
	b = strconv.AppendQuote(b, p.ID)
	b = append(b, `,"name":`...)
	b = strconv.AppendQuote(b, p.Name)
	b = append(b, `,"score":`...)
	b = strconv.AppendInt(b, int64(p.Score), 10)
	return append(b, '}')
}

// loading is a cache with a read-through get: it returns whether id has a
// value after get, loading it from the source on a miss.
type loading interface {
	get(ctx context.Context, id string) bool
	close()
}

// loadingKind is one read-through cache under test.
type loadingKind struct {
	name string
	new  func(src *source) loading
}

var loadingKinds = []loadingKind{
	{"ttlstore", func(src *source) loading { return newTTLStoreLoading(src, false) }},
	{"ttlstore-json", func(src *source) loading { return newTTLStoreLoading(src, true) }},
	{"ttlstore-manual", newTTLStoreManual},
	{"otter", newOtterLoading},
	{"ttlcache", func(src *source) loading { return newTTLCacheLoading(src, false) }},
	{"ttlcache-suppressed", func(src *source) loading { return newTTLCacheLoading(src, true) }},
}

// ttlstore: ReadOrLoad.

type ttlStoreLoading struct {
	c    *ttlstore.Collection
	load func(context.Context, string) (any, error)
}

func newTTLStoreLoading(src *source, asJSON bool) loading {
	c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(int32(TTL / time.Second))})
	if err != nil {
		panic(err)
	}
	s := &ttlStoreLoading{c: c}
	if asJSON {
		s.load = func(_ context.Context, id string) (any, error) { return src.loadJSON(id), nil }
	} else {
		s.load = func(_ context.Context, id string) (any, error) { return src.load(id), nil }
	}
	return s
}

func (s *ttlStoreLoading) get(ctx context.Context, id string) bool {
	_, err := s.c.ReadOrLoad(ctx, id, s.load)
	return err == nil
}

func (s *ttlStoreLoading) close() { s.c.Close() }

// ttlstore-manual: the read-through one writes without ReadOrLoad, Read
// and, on a miss, load and Create (on ErrConflict, Read again). Every
// caller that misses loads.

type ttlStoreManual struct {
	c   *ttlstore.Collection
	src *source
}

func newTTLStoreManual(src *source) loading {
	s := newTTLStoreLoading(src, false).(*ttlStoreLoading)
	return &ttlStoreManual{c: s.c, src: src}
}

func (s *ttlStoreManual) get(_ context.Context, id string) bool {
	if _, err := s.c.Read(id); err == nil {
		return true
	} else if !errors.Is(err, ttlstore.ErrNotFound) {
		return false
	}
	_, err := s.c.Create(s.src.load(id))
	if errors.Is(err, ttlstore.ErrConflict) {
		_, err = s.c.Read(id)
	}
	return err == nil
}

func (s *ttlStoreManual) close() { s.c.Close() }

// otter: Get with a LoaderFunc.

type otterLoading struct {
	c      *otter.Cache[string, profile]
	loader otter.Loader[string, profile]
}

func newOtterLoading(src *source) loading {
	return &otterLoading{
		c: otter.Must(&otter.Options[string, profile]{
			ExpiryCalculator: otter.ExpiryWriting[string, profile](TTL),
		}),
		loader: otter.LoaderFunc[string, profile](func(_ context.Context, id string) (profile, error) {
			return src.load(id), nil
		}),
	}
}

func (s *otterLoading) get(ctx context.Context, id string) bool {
	_, err := s.c.Get(ctx, id, s.loader)
	return err == nil
}

func (s *otterLoading) close() { s.c.StopAllGoroutines() }

// ttlcache: Get with the cache's loader (WithLoader), which stores what it
// loads with Set; suppressed wraps it in NewSuppressedLoader, which lets one
// load of a key run at a time.

type ttlCacheLoading struct {
	c *ttlcache.Cache[string, profile]
}

func newTTLCacheLoading(src *source, suppressed bool) loading {
	var l ttlcache.Loader[string, profile] = ttlcache.LoaderFunc[string, profile](
		func(c *ttlcache.Cache[string, profile], id string) *ttlcache.Item[string, profile] {
			return c.Set(id, src.load(id), ttlcache.DefaultTTL)
		})
	if suppressed {
		l = ttlcache.NewSuppressedLoader(l, nil)
	}
	return &ttlCacheLoading{c: ttlcache.New(
		ttlcache.WithTTL[string, profile](TTL),
		ttlcache.WithDisableTouchOnHit[string, profile](),
		ttlcache.WithLoader(l),
	)}
}

func (s *ttlCacheLoading) get(_ context.Context, id string) bool { return s.c.Get(id) != nil }

func (s *ttlCacheLoading) close() {}

// ttlStoreRead is ttlstore's plain Read on a collection ttlStoreLoading
// filled: the base of BenchmarkLoadHit.
type ttlStoreRead struct{ *ttlStoreLoading }

func (s ttlStoreRead) get(_ context.Context, id string) bool {
	_, err := s.c.Read(id)
	return err == nil
}

// loadFixture is one filled read-through cache kept between the calls of
// one sub-benchmark, as fixtureStore keeps a Store.
var loadFixture struct {
	key string
	c   loading
	src *source
}

// filledLoading returns a cache of kind k into which the first n ids of the
// data set were loaded, and its source.
func filledLoading(k loadingKind, n int) (loading, *source) {
	key := fmt.Sprintf("%s/%d", k.name, n)
	if loadFixture.key == key {
		return loadFixture.c, loadFixture.src
	}
	dropLoadFixture()
	src := &source{}
	c := k.new(src)
	for _, id := range Data(n).IDs {
		if !c.get(context.Background(), id) {
			panic("bench: " + k.name + ": could not load " + id)
		}
	}
	loadFixture.key, loadFixture.c, loadFixture.src = key, c, src
	return c, src
}

func dropLoadFixture() {
	if loadFixture.c != nil {
		loadFixture.c.close()
	}
	loadFixture.key, loadFixture.c, loadFixture.src = "", nil, nil
}

// BenchmarkLoadHit measures a read-through get of a live value in a cache
// of 100k loaded values, ids in random order, on one goroutine.
// store=ttlstore-read is ttlstore's plain Read on the same collection:
// ReadOrLoad's hit should cost the same.
func BenchmarkLoadHit(b *testing.B) {
	b.Cleanup(dropLoadFixture)
	kinds := append([]loadingKind{{name: "ttlstore-read"}}, loadingKinds...)
	for _, k := range kinds {
		switch k.name {
		case "ttlstore-json", "ttlstore-manual", "ttlcache-suppressed":
			continue // on a hit, the same as ttlstore-read, ttlstore and ttlcache
		}
		b.Run("store="+k.name, func(b *testing.B) {
			var c loading
			var src *source
			if k.name == "ttlstore-read" {
				var l loading
				l, src = filledLoading(loadingKinds[0], n100k)
				c = ttlStoreRead{l.(*ttlStoreLoading)}
			} else {
				c, src = filledLoading(k, n100k)
			}
			order := readOrder(n100k)
			ctx := context.Background()
			loads := src.loads.Load()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !c.get(ctx, order[i&orderMask]) {
					b.Fatal("a hit failed")
				}
			}
			b.StopTimer()
			if n := src.loads.Load() - loads; n != 0 {
				b.Fatalf("%d loads during hits", n)
			}
		})
	}
}

// missIDs returns n ids that no cache holds.
func missIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("miss-%09d", i)
	}
	return ids
}

// BenchmarkLoadMiss measures a read-through get of an id the cache has never
// seen: the miss, the load (which returns at once) and the store. A new
// cache per run; it grows by one value per op.
func BenchmarkLoadMiss(b *testing.B) {
	for _, k := range loadingKinds {
		b.Run("store="+k.name, func(b *testing.B) {
			src := &source{}
			c := k.new(src)
			defer c.close()
			ids := missIDs(b.N)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !c.get(ctx, ids[i]) {
					b.Fatal("a load failed")
				}
			}
			b.StopTimer()
			if n := src.loads.Load(); n != int64(b.N) {
				b.Fatalf("%d loads for %d misses", n, b.N)
			}
		})
	}
}

// stormers is how many goroutines miss the same id at once in
// BenchmarkLoadStorm.
const stormers = 64

// storm is one id missed by every stormer at once.
type storm struct {
	id     string
	start  chan struct{} // closed to let the stormers go
	began  time.Time     // set before start is closed
	wg     sync.WaitGroup
	waited atomic.Int64 // the stormers' latencies, summed, ns
	failed atomic.Int64
}

// BenchmarkLoadStorm measures 64 goroutines (parked beforehand) that miss
// one new id at the same instant, an op per storm: how many loads each
// storm costs (loads/storm; 1 is the least), the time from the release to
// the last caller's return (storm-ns) and a caller's mean latency
// (caller-ns). load= is how long each load takes: 0 (the source answers at
// once, so only the callers that arrive while the load runs can share it)
// or 1ms (a database round trip, by time.Sleep: 1 ms and the timer's
// slack). The ops are few and long: run it with -benchtime 200x or so.
func BenchmarkLoadStorm(b *testing.B) {
	for _, delay := range []time.Duration{0, time.Millisecond} {
		b.Run("load="+delay.String(), func(b *testing.B) {
			for _, k := range loadingKinds {
				if k.name == "ttlstore-json" {
					continue // the same as ttlstore, but for the marshaling
				}
				b.Run("store="+k.name, func(b *testing.B) {
					src := &source{delay: delay}
					c := k.new(src)
					defer c.close()
					benchStorms(b, c, src)
				})
			}
		})
	}
}

func benchStorms(b *testing.B, c loading, src *source) {
	ids := missIDs(b.N)
	p := newStormPool(c)
	defer p.stop()
	var stormNS, callerNS, failed int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, caller, f := p.run(ids[i])
		stormNS += s
		callerNS += caller
		failed += f
	}
	b.StopTimer()
	if failed > 0 {
		b.Fatalf("%d gets failed", failed)
	}
	b.ReportMetric(float64(src.loads.Load())/float64(b.N), "loads/storm")
	b.ReportMetric(float64(stormNS)/float64(b.N), "storm-ns")
	b.ReportMetric(float64(callerNS)/float64(b.N*stormers), "caller-ns")
}

// stormPool is the stormers: goroutines, each waiting for the next storm.
type stormPool struct {
	work    []chan *storm
	workers sync.WaitGroup
}

func newStormPool(c loading) *stormPool {
	p := &stormPool{work: make([]chan *storm, stormers)}
	for w := range p.work {
		p.work[w] = make(chan *storm, 1)
		p.workers.Add(1)
		go func() {
			defer p.workers.Done()
			ctx := context.Background()
			for s := range p.work[w] {
				<-s.start
				if !c.get(ctx, s.id) {
					s.failed.Add(1)
				}
				s.waited.Add(int64(time.Since(s.began)))
				s.wg.Done()
			}
		}()
	}
	return p
}

// run lets every stormer get id at once, and returns the time until the
// last one had it, the sum of their latencies, and how many gets failed.
func (p *stormPool) run(id string) (stormNS, callerNS, failed int64) {
	s := &storm{id: id, start: make(chan struct{})}
	s.wg.Add(stormers)
	for _, ch := range p.work {
		ch <- s
	}
	s.began = time.Now()
	close(s.start)
	s.wg.Wait()
	return int64(time.Since(s.began)), s.waited.Load(), s.failed.Load()
}

// stop ends the stormers' goroutines.
func (p *stormPool) stop() {
	for _, ch := range p.work {
		close(ch)
	}
	p.workers.Wait()
}

// TestLoadingCaches keeps the read-through workloads honest: every cache
// loads a missing id once, then finds it without loading; ReadOrLoad and
// otter load an id once per storm, whoever misses it.
func TestLoadingCaches(t *testing.T) {
	for _, k := range loadingKinds {
		t.Run(k.name, func(t *testing.T) {
			src := &source{}
			c := k.new(src)
			defer c.close()
			ctx := context.Background()
			for range 3 {
				if !c.get(ctx, "p1") {
					t.Fatal("get failed")
				}
			}
			if n := src.loads.Load(); n != 1 {
				t.Fatalf("%d loads of one id, want 1", n)
			}

			src.loads.Store(0)
			src.delay = time.Millisecond
			const storms = 5
			p := newStormPool(c)
			defer p.stop()
			for i := range storms {
				if _, _, failed := p.run(fmt.Sprintf("storm-%d", i)); failed > 0 {
					t.Fatalf("%d gets of a storm failed", failed)
				}
			}
			perStorm := float64(src.loads.Load()) / storms
			switch k.name {
			case "ttlstore", "ttlstore-json", "otter":
				if perStorm != 1 {
					t.Errorf("%.2f loads per storm, want 1", perStorm)
				}
			default:
				if perStorm < 1 {
					t.Errorf("%.2f loads per storm, want at least 1", perStorm)
				}
			}
		})
	}
}
