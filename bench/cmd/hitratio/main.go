// Command hitratio replays access sequences against bounded caches and
// prints the hit ratio of each as a markdown table: ttlstore with
// EvictColdest, otter v2, ristretto v2, ttlcache v3 and golang-lru's LRU
// (two LRUs), golang-lru's ARC, and a reference S3-FIFO written here.
//
//	cd bench && go run ./cmd/hitratio                 # every workload, about a minute
//	go run ./cmd/hitratio -quick                      # 100k accesses per workload
//	go run ./cmd/hitratio -only ycsb -out /tmp/x.md   # the workloads whose name has "ycsb"
//	go run ./cmd/hitratio -runs 3                     # the mean of 3 replays per cache
//
// Each access is a Get; on a miss the key is Set. Every cache holds at most
// its capacity in keys (ttlstore: documents), and replays one sequence on
// one goroutine, alone. The hit ratio is hits over all accesses, the cold
// start included, as in otter's simulator. Each sequence comes from a fixed
// seed, so a run replays the same ones as the last; see README.md for the
// workloads. The LRUs, ARC and S3-FIFO are deterministic; ttlstore and
// otter seed their sketches (otter its admission too) at random, and
// ristretto's reads reach its policy through a lossy buffer, so their
// figures move from run to run: -runs averages. The time each cache took
// goes to stderr.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	quick := flag.Bool("quick", false, "replay 100k accesses per workload instead of 1M (a recorded trace is replayed whole)")
	only := flag.String("only", "", "run only the workloads whose name contains this")
	runs := flag.Int("runs", 1, "replay each sequence this many times per cache and capacity, each on a new cache, and print the mean (stderr: the range)")
	out := flag.String("out", "", "also write the table to this file")
	glimpse := flag.String("glimpse", "", "the Glimpse trace (default: sim/gli.lirs.gz in the ristretto v2 module, found with go list -m)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "hitratio: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	cfg := config{accesses: 1_000_000, runs: *runs, only: *only, glimpse: *glimpse, log: os.Stderr}
	if *quick {
		cfg.accesses = 100_000
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
	accesses int    // per generated workload
	runs     int    // replays of each sequence per cache and capacity, averaged; 0 is 1
	only     string // substring of the workload names to run; "" for all
	glimpse  string // path of the Glimpse trace; "" to ask go list
	caches   []cacheKind
	log      io.Writer // progress and timings
}

// row is one workload at one capacity: the hit ratio of each cache, in %
// (the mean of config.runs), in the order of results.caches.
type row struct {
	workload string
	capacity int
	ratios   []float64
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
	rows   []row
	traces []traceInfo
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
	res := &results{}
	for _, k := range kinds {
		res.caches = append(res.caches, k.name)
	}
	var ws []workload
	for _, w := range workloads(cfg.glimpse) {
		if strings.Contains(w.name, cfg.only) {
			ws = append(ws, w)
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
		fmt.Fprintf(cfg.log, "%s: %d accesses, %d keys, made in %s\n",
			w.name, info.accesses, info.unique, time.Since(t0).Round(time.Millisecond))
		for _, capacity := range w.capacities {
			r := row{workload: w.name, capacity: capacity}
			var line strings.Builder
			fmt.Fprintf(&line, "  %s capacity %d:", w.name, capacity)
			rowStart := time.Now()
			for _, k := range kinds {
				t := time.Now()
				sum, lo, hi := 0.0, 100.0, 0.0
				for range runs {
					c := k.new(capacity)
					v := 100 * float64(replay(c, trace)) / float64(len(trace))
					c.Close()
					sum, lo, hi = sum+v, min(lo, v), max(hi, v)
				}
				r.ratios = append(r.ratios, sum/float64(runs))
				fmt.Fprintf(&line, " %s %.1f%%", k.name, sum/float64(runs))
				if runs > 1 {
					fmt.Fprintf(&line, " (%.1f-%.1f)", lo, hi)
				}
				fmt.Fprintf(&line, " %s;", time.Since(t).Round(time.Millisecond))
			}
			fmt.Fprintf(cfg.log, "%s row %s\n", line.String(), time.Since(rowStart).Round(time.Millisecond))
			res.rows = append(res.rows, r)
		}
	}
	return res, nil
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

func unique(trace []uint64) int {
	seen := make(map[uint64]struct{}, len(trace)/4)
	for _, k := range trace {
		seen[k] = struct{}{}
	}
	return len(seen)
}

// write prints the table of hit ratios, then the list of workloads with
// their ceilings.
func (r *results) write(w io.Writer) {
	fmt.Fprintf(w, "| workload | capacity | %s |\n", strings.Join(r.caches, " | "))
	fmt.Fprintf(w, "|---|---:|%s\n", strings.Repeat("---:|", len(r.caches)))
	for _, row := range r.rows {
		fmt.Fprintf(w, "| %s | %d |", row.workload, row.capacity)
		for _, v := range row.ratios {
			fmt.Fprintf(w, " %.1f |", v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | accesses | keys | ceiling | sequence |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|")
	for _, t := range r.traces {
		fmt.Fprintf(w, "| %s | %d | %d | %.1f | %s |\n", t.workload, t.accesses, t.unique, t.ceiling(), t.about)
	}
}
