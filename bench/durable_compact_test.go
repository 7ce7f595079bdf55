package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// durableN is the number of documents of the expensive durable workloads:
// 1M, or BENCH_DURABLE_N for a quick check (run.sh sets 100000 with
// BENCH_QUICK=1). Their names carry it (n=1M, n=100k), so that a quick run
// is never mistaken for a full one.
func durableN(b *testing.B) int {
	v := os.Getenv("BENCH_DURABLE_N")
	if v == "" {
		return n1M
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1000 {
		b.Fatalf("BENCH_DURABLE_N=%q: want a number of documents, at least 1000", v)
	}
	return n
}

// stallWriters returns the number of goroutines that write during a
// compaction: 4, or BENCH_STALL_WRITERS. With 4 writers and a reader on 2
// cores, a call's latency includes waiting for a processor (the longest
// write with no compaction under way is 50-70 ms there); with 1, what the
// compaction itself holds up shows.
func stallWriters(b *testing.B) int {
	v := os.Getenv("BENCH_STALL_WRITERS")
	if v == "" {
		return 4
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("BENCH_STALL_WRITERS=%q: want a number of goroutines, at least 1", v)
	}
	return n
}

// stallResult is what compactStall measured: write and read latencies
// while nothing else happened (idle) and while the compaction ran.
type stallResult struct {
	compact          time.Duration
	idleWrite, write Histogram
	idleRead, read   Histogram
	idleWrites       int
}

// compactStall loads the documents of d into a new store of kind k in dir
// (untimed: DurableKind.Load), compacts and closes it, so that no
// compaction is under way or due, and reopens it at sync level sy with no
// automatic compaction (buntdb). Then writers goroutines overwrite
// random documents and one goroutine reads random ones, each recording the
// latency of every call: first with nothing else going on (idle), until
// they have written d.Len()/10 documents or for 2 s, whichever comes first;
// then while the store compacts once (ttlstore Compact, buntdb Shrink). A
// call that overlaps the compaction in any part counts for it.
func compactStall(dir string, k DurableKind, sy Sync, d *Dataset, writers int) (*stallResult, error) {
	if err := k.Load(dir, d.IDs, d.Docs); err != nil {
		return nil, err
	}
	s, err := k.Open(dir, DurableConfig{Sync: SyncNever, NoAutoCompact: true})
	if err != nil {
		return nil, err
	}
	err = s.Compact()
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	s, err = k.Open(dir, DurableConfig{Sync: sy, NoAutoCompact: true})
	if err != nil {
		return nil, err
	}
	r, err := runStall(s, d, writers)
	if lerr := checkLen(s, d.Len()); err == nil {
		err = lerr
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return r, err
}

// checkLen returns an error if s can count its documents and does not hold
// n. Every document of the workloads lives for an hour.
func checkLen(s DurableStore, n int) error {
	if l, ok := s.(lener); ok && l.Len() != n {
		return fmt.Errorf("the store holds %d documents, want %d", l.Len(), n)
	}
	return nil
}

// Phases of runStall.
const (
	phaseIdle int32 = iota
	phaseCompacting
	phaseDone
)

func runStall(s DurableStore, d *Dataset, writers int) (*stallResult, error) {
	r := &stallResult{}
	order := ReadOrder(d.IDs)
	runtime.GC()
	var phase atomic.Int32
	// overlaps says whether a call that started in phase p0 overlapped the
	// compaction.
	overlaps := func(p0 int32) bool { return p0 != phaseIdle || phase.Load() != phaseIdle }

	idleTarget := int64(d.Len() / 10)
	var idleWrites atomic.Int64
	idleDone := make(chan struct{})
	var once sync.Once

	var wg sync.WaitGroup
	idleW := make([]Histogram, writers)
	compW := make([]Histogram, writers)
	errs := make([]error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; ; i++ {
				p0 := phase.Load()
				if p0 == phaseDone {
					return
				}
				j := rng.IntN(d.Len())
				doc := d.Alt[j]
				if i%2 == 1 {
					doc = d.Docs[j]
				}
				t0 := time.Now()
				err := s.Set(d.IDs[j], doc)
				lat := time.Since(t0)
				if err != nil {
					errs[g] = err
					once.Do(func() { close(idleDone) })
					return
				}
				if overlaps(p0) {
					compW[g].Record(lat)
				} else {
					idleW[g].Record(lat)
					if idleWrites.Add(1) == idleTarget {
						once.Do(func() { close(idleDone) })
					}
				}
			}
		}()
	}
	var misses atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			p0 := phase.Load()
			if p0 == phaseDone {
				return
			}
			t0 := time.Now()
			found := s.Get(order[i&orderMask])
			lat := time.Since(t0)
			if !found {
				misses.Add(1)
			}
			if overlaps(p0) {
				r.read.Record(lat)
			} else {
				r.idleRead.Record(lat)
			}
		}
	}()

	timeout := time.NewTimer(2 * time.Second)
	select {
	case <-idleDone:
	case <-timeout.C:
	}
	timeout.Stop()
	phase.Store(phaseCompacting)
	t0 := time.Now()
	cerr := s.Compact()
	r.compact = time.Since(t0)
	phase.Store(phaseDone)
	wg.Wait()

	for g := range writers {
		r.idleWrite.Merge(&idleW[g])
		r.write.Merge(&compW[g])
	}
	r.idleWrites = int(idleWrites.Load())
	err := errors.Join(errs...)
	if cerr != nil {
		err = errors.Join(fmt.Errorf("compact: %w", cerr), err)
	}
	if n := misses.Load(); n > 0 {
		err = errors.Join(err, fmt.Errorf("%d reads of live documents missed", n))
	}
	return r, err
}

// BenchmarkDurableCompactStall measures how long writers wait while a
// durable store of 1M documents (BENCH_DURABLE_N) compacts: ttlstore
// Compact (a snapshot of the live documents beside a new log) and buntdb
// Shrink (its append-only file rewritten), with 4 goroutines
// (BENCH_STALL_WRITERS) overwriting random documents and one reading random
// ones throughout (see compactStall). sync=never runs the writers with ttlstore SyncNever and
// buntdb Never (the compaction's own cost); sync=always with SyncAlways and
// Always (every write also waits for an fsync).
//
// It reports the compaction's duration (compact-ms, and ns/op); the
// latencies of the writes that overlapped it (p99-ns, p99.9-ns, max-ns; how
// many: writes); of the writes before it (idle-p99.9-ns, idle-max-ns; how
// many: idle-writes, which the log holds when the compaction starts); and
// of the reads (read-p99.9-ns, read-max-ns during the compaction,
// idle-read-max-ns before). A latency includes the goroutine's scheduling
// delays: with 4 writers, six goroutines share 2 cores. Building the store takes most of
// the time; run it with -benchtime 1x.
//
// buntdb's Shrink sleeps 250 ms before it starts, which its compact-ms
// includes; it does not fsync the new file.
func BenchmarkDurableCompactStall(b *testing.B) {
	n := durableN(b)
	d := Data(n)
	dropFixture()
	b.Run(sizeName(n), func(b *testing.B) {
		for _, sy := range []Sync{SyncNever, SyncAlways} {
			b.Run("sync="+sy.String(), func(b *testing.B) {
				for _, k := range DurableKinds {
					if !k.Compacts {
						continue
					}
					b.Run("store="+k.Name, func(b *testing.B) {
						var compact time.Duration
						var last *stallResult
						b.StopTimer()
						for range b.N {
							r, err := compactStall(b.TempDir(), k, sy, d, stallWriters(b))
							if err != nil {
								b.Fatalf("%s: %v", k.Name, err)
							}
							compact += r.compact
							last = r
							runtime.GC()
						}
						// ns/op is the compaction: the timer never ran.
						b.ReportMetric(float64(compact.Nanoseconds())/float64(b.N), "ns/op")
						r := last
						b.ReportMetric(float64(compact.Milliseconds())/float64(b.N), "compact-ms")
						b.ReportMetric(float64(r.write.Quantile(0.99)), "p99-ns")
						b.ReportMetric(float64(r.write.Quantile(0.999)), "p99.9-ns")
						b.ReportMetric(float64(r.write.Max()), "max-ns")
						b.ReportMetric(float64(r.write.Count()), "writes")
						b.ReportMetric(float64(r.idleWrites), "idle-writes")
						b.ReportMetric(float64(r.idleWrite.Quantile(0.999)), "idle-p99.9-ns")
						b.ReportMetric(float64(r.idleWrite.Max()), "idle-max-ns")
						b.ReportMetric(float64(r.read.Quantile(0.999)), "read-p99.9-ns")
						b.ReportMetric(float64(r.read.Max()), "read-max-ns")
						b.ReportMetric(float64(r.idleRead.Max()), "idle-read-max-ns")
					})
				}
			})
		}
	})
}

// BenchmarkDurableReopen measures opening a directory that holds 1M
// documents (BENCH_DURABLE_N) of ~200 bytes, the page cache warm: until
// Open returns a store that serves them all. Each store's directory is
// loaded once (DurableKind.Load, which closes it) and opened b.N times.
// state=log opens it as loading left it; state=snapshot after one more
// open, Compact (buntdb Shrink) and Close. ttlstore's background compactor
// runs during the load (its log passes 64 MiB), so state=log is a snapshot
// of part of the documents plus a log of the rest (snap-MB says how much);
// state=snapshot is a snapshot and an empty log. buntdb always loads one
// append-only file: all the writes, or after Shrink one per document.
// badger has no state=snapshot: Close flushes its memtable to a table, and
// Open reads the LSM tree's index, not the documents. dir-MB is the
// directory's size. Run it with -benchtime 1x.
func BenchmarkDurableReopen(b *testing.B) {
	n := durableN(b)
	d := Data(n)
	dropFixture()
	root := b.TempDir()
	dirs := map[string]string{}
	compacted := map[string]bool{}
	// dirOf returns k's directory, loaded (and compacted) as the state
	// asks.
	dirOf := func(b *testing.B, k DurableKind, state string) string {
		dir, ok := dirs[k.Name]
		if !ok {
			dir = fmt.Sprintf("%s/%s", root, k.Name)
			if err := k.Load(dir, d.IDs, d.Docs); err != nil {
				b.Fatalf("%s: load: %v", k.Name, err)
			}
			dirs[k.Name] = dir
		}
		if state == "snapshot" && !compacted[k.Name] {
			s, err := k.Open(dir, DurableConfig{Sync: SyncNever, NoAutoCompact: true})
			if err != nil {
				b.Fatal(err)
			}
			err = s.Compact()
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				b.Fatalf("%s: compact: %v", k.Name, err)
			}
			compacted[k.Name] = true
		}
		return dir
	}
	b.Run(sizeName(n), func(b *testing.B) {
		for _, state := range []string{"log", "snapshot"} {
			b.Run("state="+state, func(b *testing.B) {
				for _, k := range DurableKinds {
					if state == "snapshot" && !k.Compacts {
						continue
					}
					b.Run("store="+k.Name, func(b *testing.B) {
						dir := dirOf(b, k, state)
						total, snap, err := DirSize(dir, ".snap")
						if err != nil {
							b.Fatal(err)
						}
						runtime.GC()
						b.ResetTimer()
						for range b.N {
							b.StartTimer()
							s, err := k.Open(dir, DurableConfig{})
							b.StopTimer()
							if err != nil {
								b.Fatalf("%s: open: %v", k.Name, err)
							}
							err = checkLen(s, n)
							if err == nil && (!s.Get(d.IDs[0]) || !s.Get(d.IDs[n-1])) {
								err = errors.New("a document is missing")
							}
							if cerr := s.Close(); err == nil {
								err = cerr
							}
							if err != nil {
								b.Fatalf("%s: after open: %v", k.Name, err)
							}
							runtime.GC()
						}
						b.ReportMetric(float64(total)/1e6, "dir-MB")
						if k.Name == "ttlstore" {
							b.ReportMetric(float64(snap)/1e6, "snap-MB")
						}
					})
				}
			})
		}
	})
}
