// Command hitratio replays access sequences against bounded caches and
// prints the hit ratio of each as a markdown table: ttlstore with
// EvictColdest, otter v2, ristretto v2, ttlcache v3 and golang-lru's LRU
// (two LRUs), golang-lru's ARC, and a reference S3-FIFO written here.
//
//	cd bench && go run ./cmd/hitratio                 # the generated workloads, about a minute
//	go run ./cmd/hitratio -quick                      # 100k accesses per workload
//	go run ./cmd/hitratio -only ycsb -out /tmp/x.md   # the workloads whose name has "ycsb"
//	go run ./cmd/hitratio -runs 3                     # the median and range of 3 replays per cache
//	./cmd/hitratio/fetch-traces.sh ~/traces           # the public traces, once (git, zstd)
//	go run ./cmd/hitratio -traces ~/traces            # the public traces, 5 runs, 4 capacities each
//
// Each access is a Get; on a miss the key is Set. Every cache holds at most
// its capacity in keys (ttlstore: documents), and replays one sequence on
// one goroutine, alone. The hit ratio is hits over all accesses, the cold
// start included, as in otter's simulator. The generated workloads come
// from fixed seeds, so a run replays the same ones as the last; see
// README.md for them.
//
// With -traces DIR (or TTLSTORE_TRACES=DIR) it replays instead the public
// traces found in DIR (traces.go lists them and their formats; absent ones
// are skipped), each at 5, 15, 40 and 80 % of its distinct keys, against
// otter, ristretto, an LRU and ttlstore (-caches to change), 5 runs each
// (-runs).
//
// The LRUs, ARC, S3-FIFO and ttlstore (whose policy hashes ids with a
// fixed seed by default) are deterministic and replay once; ttlstore-random
// (RandomizeEviction) and otter seed their hashes at random for each new
// cache (otter its admission too), and ristretto's reads reach its policy
// through a lossy buffer, so their figures move from run to run: each cell is the median of the runs,
// with their range when there are several. The time each cache took goes
// to stderr.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	quick := flag.Bool("quick", false, "replay 100k accesses per generated workload instead of 1M (a recorded trace is replayed whole)")
	only := flag.String("only", "", "run only the workloads whose name contains this, or one of these if comma-separated")
	runs := flag.Int("runs", 0, "replay each sequence this many times per cache and capacity, each on a new cache, and print the median and range (default 5 with -traces, else 1)")
	out := flag.String("out", "", "also write the table to this file")
	glimpse := flag.String("glimpse", "", "the Glimpse trace (default: sim/gli.lirs.gz in the ristretto v2 module, found with go list -m)")
	traces := flag.String("traces", os.Getenv("TTLSTORE_TRACES"), "replay the public traces in this directory instead of the generated workloads (default $TTLSTORE_TRACES); see fetch-traces.sh")
	cacheList := flag.String("caches", "", "the columns, comma-separated (default: every cache; with -traces, "+strings.Join(traceCaches, ",")+")")
	maxAccesses := flag.Int("max-accesses", 0, "replay at most this many accesses of each public trace, its first ones (0: whole)")
	shares := flag.String("shares", "", "the capacities of the public traces, in % of their keys, comma-separated (default 5,15,40,80)")
	parallel := flag.Int("parallel", 1, "replays at once; more than 1 moves ristretto's figures, whose policy is fed by a goroutine")
	dump := flag.String("dump", "", "also write each sequence to DIR/NAME.u64, as little-endian 64-bit keys, for the root package's TestColdestReplay")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "hitratio: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	cfg := config{
		accesses:    1_000_000,
		runs:        *runs,
		only:        *only,
		glimpse:     *glimpse,
		traces:      *traces,
		maxAccesses: *maxAccesses,
		parallel:    *parallel,
		dump:        *dump,
		log:         os.Stderr,
	}
	if *quick {
		cfg.accesses = 100_000
	}
	if *shares != "" {
		for _, f := range strings.Split(*shares, ",") {
			pc, err := strconv.ParseFloat(f, 64)
			if err != nil || pc <= 0 || pc > 100 {
				fmt.Fprintf(os.Stderr, "hitratio: -shares: %q is not a percentage\n", f)
				os.Exit(2)
			}
			cfg.shares = append(cfg.shares, pc/100)
		}
	}
	names := []string(nil)
	switch {
	case *cacheList != "":
		names = strings.Split(*cacheList, ",")
	case cfg.traces != "":
		names = traceCaches
	}
	if names != nil {
		ks, err := cachesNamed(names)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hitratio:", err)
			os.Exit(2)
		}
		cfg.caches = ks
	}
	if cfg.runs == 0 && cfg.traces != "" {
		cfg.runs = 5
	}
	start := time.Now()
	res, err := run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hitratio:", err)
		os.Exit(1)
	}
	var b strings.Builder
	res.write(&b)
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "hitratio:", err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "hitratio: done in %s\n", time.Since(start).Round(100*time.Millisecond))
}

// config says what run replays.
type config struct {
	accesses    int       // per generated workload
	runs        int       // replays of each sequence per cache and capacity; 0 is 1
	only        string    // substrings of the workload names to run, comma-separated; "" for all
	glimpse     string    // path of the Glimpse trace; "" to ask go list
	traces      string    // directory of the public traces; "" for the generated workloads
	maxAccesses int       // of a public trace, 0 for all
	shares      []float64 // the capacities of a public trace, as shares of its keys; nil for traceShares
	parallel    int       // replays at once; 0 is 1
	dump        string    // directory to write each sequence to; "" for none
	caches      []cacheKind
	log         io.Writer // progress and timings
}

// row is one workload at one capacity: the hit ratio of each run of each
// cache, in %, in the order of results.caches.
type row struct {
	workload string
	capacity int
	share    float64 // of the sequence's keys, for the public traces; 0 otherwise
	ratios   [][]float64
}

// traceInfo describes one replayed sequence.
type traceInfo struct {
	workload, about  string
	accesses, unique int
}

// ceiling is the highest hit ratio any cache could reach, in %: every
// access but the first to each key hits.
func (t traceInfo) ceiling() float64 {
	return 100 * float64(t.accesses-t.unique) / float64(t.accesses)
}

type results struct {
	caches []string
	runs   int
	rows   []row
	traces []traceInfo
	absent []string // public traces not found
}

// run replays the workloads that cfg selects against every cache of
// cfg.caches (all of them when nil).
func run(cfg config) (*results, error) {
	kinds := cfg.caches
	if kinds == nil {
		kinds = caches
	}
	if cfg.log == nil {
		cfg.log = io.Discard
	}
	runs := max(1, cfg.runs)
	res := &results{runs: runs}
	for _, k := range kinds {
		res.caches = append(res.caches, k.name)
	}
	var all []workload
	if cfg.traces != "" {
		var err error
		all, res.absent, err = traceWorkloads(cfg.traces, cfg.maxAccesses)
		if err != nil {
			return nil, err
		}
		if cfg.shares != nil {
			for i := range all {
				all[i].shares = cfg.shares
			}
		}
		if len(res.absent) > 0 {
			fmt.Fprintf(cfg.log, "not in %s, skipped: %s\n", cfg.traces, strings.Join(res.absent, " "))
		}
	} else {
		all = workloads(cfg.glimpse)
	}
	var ws []workload
	for _, w := range all {
		for _, s := range strings.Split(cfg.only, ",") {
			if strings.Contains(w.name, s) {
				ws = append(ws, w)
				break
			}
		}
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("no workload's name contains %q", cfg.only)
	}
	for _, w := range ws {
		t0 := time.Now()
		trace, err := w.trace(cfg.accesses)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.name, err)
		}
		info := traceInfo{workload: w.name, about: w.about, accesses: len(trace), unique: unique(trace)}
		res.traces = append(res.traces, info)
		fmt.Fprintf(cfg.log, "%s: %d accesses, %d keys, read in %s\n",
			w.name, info.accesses, info.unique, time.Since(t0).Round(time.Millisecond))
		if cfg.dump != "" {
			if err := dumpTrace(filepath.Join(cfg.dump, w.name+".u64"), trace); err != nil {
				return nil, err
			}
		}
		capacities := w.capacities
		for _, s := range w.shares {
			capacities = append(capacities, max(1, int(s*float64(info.unique)+0.5)))
		}
		for i, capacity := range capacities {
			r := replayRow(cfg, kinds, runs, trace, w.name, capacity)
			if i < len(w.shares) {
				r.share = w.shares[i]
			}
			res.rows = append(res.rows, r)
		}
	}
	return res, nil
}

// replayRow replays trace at one capacity, runs times on each cache that
// is not fixed, once on the others, cfg.parallel replays at once.
func replayRow(cfg config, kinds []cacheKind, runs int, trace []uint64, name string, capacity int) row {
	r := row{workload: name, capacity: capacity, ratios: make([][]float64, len(kinds))}
	took := make([]time.Duration, len(kinds))
	type job struct{ cache, run int }
	var jobs []job
	for i, k := range kinds {
		n := runs
		if k.fixed {
			n = 1
		}
		r.ratios[i] = make([]float64, n)
		for j := range n {
			jobs = append(jobs, job{i, j})
		}
	}
	start := time.Now()
	var mu sync.Mutex // protects took
	var wg sync.WaitGroup
	next := make(chan job)
	for range max(1, cfg.parallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				t := time.Now()
				c := kinds[j.cache].new(capacity)
				r.ratios[j.cache][j.run] = 100 * float64(replay(c, trace)) / float64(len(trace))
				c.Close()
				mu.Lock()
				took[j.cache] += time.Since(t)
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	var line strings.Builder
	fmt.Fprintf(&line, "  %s capacity %d:", name, capacity)
	for i, k := range kinds {
		fmt.Fprintf(&line, " %s %s %s;", k.name, cell(r.ratios[i]), took[i].Round(time.Millisecond))
	}
	fmt.Fprintf(cfg.log, "%s row %s\n", line.String(), time.Since(start).Round(time.Millisecond))
	return r
}

// replay runs the accesses of trace against c, Set after each miss, and
// returns the number of hits.
func replay(c cache, trace []uint64) int {
	hits := 0
	for _, k := range trace {
		if c.Get(k) {
			hits++
		} else {
			c.Set(k)
		}
	}
	return hits
}

// dumpTrace writes trace to path as little-endian 64-bit keys.
func dumpTrace(path string, trace []uint64) error {
	b := make([]byte, 0, 8*len(trace))
	for _, k := range trace {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	return os.WriteFile(path, b, 0o644)
}

func unique(trace []uint64) int {
	seen := make(map[uint64]struct{}, len(trace)/4)
	for _, k := range trace {
		seen[k] = struct{}{}
	}
	return len(seen)
}

// median returns the median of vs (the mean of the middle two of an even
// number), and their least and greatest.
func median(vs []float64) (med, lo, hi float64) {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// cell prints the median of vs, and their range if there are several.
func cell(vs []float64) string {
	med, lo, hi := median(vs)
	if len(vs) == 1 {
		return fmt.Sprintf("%.1f", med)
	}
	return fmt.Sprintf("%.1f (%.1f–%.1f)", med, lo, hi)
}
