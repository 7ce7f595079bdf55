// Command benchsummary reads the raw output of the bench workloads (go test
// -bench, any -count) and prints, for every workload and unit, ttlstore's
// median and each peer's median with the ratio ttlstore/peer (below 1 means
// ttlstore needs less; for a rate such as writes/s, above 1 means ttlstore
// does more), then checks ttlstore against those of its targets that the
// output measured.
//
//	go run ./cmd/benchsummary results/2026-01-02.txt
//
// Benchmark names must carry the store as a store=<name> component; the rest
// of the name is the workload. benchstat (see run.sh) gives the confidence
// intervals and significance; this adds the ratios and the targets.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const base = "ttlstore"

// results holds samples by workload, unit and store.
type results struct {
	rows   []string // workloads in the order first seen
	units  map[string][]string
	stores []string
	vals   map[string]map[string]map[string][]float64
}

var procs = regexp.MustCompile(`-\d+$`)

func (r *results) add(row, unit, store string, v float64) {
	if r.vals[row] == nil {
		r.vals[row] = map[string]map[string][]float64{}
		r.rows = append(r.rows, row)
	}
	if r.vals[row][unit] == nil {
		r.vals[row][unit] = map[string][]float64{}
		r.units[row] = append(r.units[row], unit)
	}
	if !slices.Contains(r.stores, store) {
		r.stores = append(r.stores, store)
	}
	r.vals[row][unit][store] = append(r.vals[row][unit][store], v)
}

func parse(in io.Reader, r *results) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procs.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
		var parts []string
		store := ""
		for _, p := range strings.Split(name, "/") {
			if s, ok := strings.CutPrefix(p, "store="); ok {
				store = s
			} else {
				parts = append(parts, p)
			}
		}
		if store == "" && strings.HasPrefix(name, "SweepBatchHold/") {
			store = base // the library's own benchmark, which run.sh adds
		}
		if store == "" {
			continue
		}
		row := strings.Join(parts, "/")
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return fmt.Errorf("%q: %v", sc.Text(), err)
			}
			r.add(row, f[i+1], store, v)
		}
	}
	return sc.Err()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// med is the median of row/unit for store, NaN when there is none.
func (r *results) med(row, unit, store string) float64 {
	return median(r.vals[row][unit][store])
}

func format(v float64, unit string) string {
	if math.IsNaN(v) {
		return "-"
	}
	if unit == "ns/op" || strings.HasSuffix(unit, "-ns") || unit == "ns/live-doc" {
		switch {
		case v >= 1e9:
			return fmt.Sprintf("%.3gs", v/1e9)
		case v >= 1e6:
			return fmt.Sprintf("%.3gms", v/1e6)
		case v >= 1e3:
			return fmt.Sprintf("%.3gµs", v/1e3)
		}
		return fmt.Sprintf("%.3gns", v)
	}
	if strings.HasSuffix(unit, "/s") && v >= 1e4 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

func ratio(a, b float64) string {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return ""
	case b == 0 && a == 0:
		return " (=)"
	case b == 0:
		return " (∞)"
	}
	return fmt.Sprintf(" (%.2fx)", a/b)
}

func (r *results) table(w io.Writer) {
	peers := slices.DeleteFunc(slices.Clone(r.stores), func(s string) bool { return s == base })
	header := []string{"workload", "unit", base}
	header = append(header, peers...)
	var lines [][]string
	for _, row := range r.rows {
		for _, unit := range r.units[row] {
			b := r.med(row, unit, base)
			line := []string{row, unit, fmt.Sprintf("%s n=%d", format(b, unit), len(r.vals[row][unit][base]))}
			for _, p := range peers {
				v := r.med(row, unit, p)
				if math.IsNaN(v) {
					line = append(line, "")
					continue
				}
				line = append(line, format(v, unit)+ratio(b, v))
			}
			lines = append(lines, line)
		}
	}
	width := make([]int, len(header))
	for _, l := range append([][]string{header}, lines...) {
		for i, c := range l {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	pr := func(l []string) {
		for i, c := range l {
			fmt.Fprintf(w, "%-*s  ", width[i], c)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Medians; in parentheses ttlstore/peer (below 1: ttlstore needs less;\nfor a rate such as writes/s, above 1: ttlstore does more).\n\n")
	pr(header)
	for _, l := range lines {
		pr(l)
	}
}

// A target is one goal for ttlstore, checked on the medians.
type target struct {
	name  string
	check func(r *results) (met bool, detail string, ok bool)
}

func nan(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

var targets = []target{
	{"read hit faster than every peer serially, 0 allocs", func(r *results) (bool, string, bool) {
		t := r.med("ReadHit", "ns/op", base)
		allocs := r.med("ReadHit", "allocs/op", base)
		if nan(t) {
			return false, "", false
		}
		met := allocs == 0
		var parts []string
		for _, p := range r.stores {
			if v := r.med("ReadHit", "ns/op", p); p != base && !nan(v) {
				met = met && t < v
				parts = append(parts, fmt.Sprintf("%s %.2fx", p, t/v))
			}
		}
		return met, fmt.Sprintf("%s, %g allocs; ttlstore/peer: %s", format(t, "ns/op"), allocs, strings.Join(parts, ", ")), true
	}},
	{"parallel read hit within 1.2x otter", func(r *results) (bool, string, bool) {
		t, o := r.med("ReadHitParallel", "ns/op", base), r.med("ReadHitParallel", "ns/op", "otter")
		if nan(t, o) {
			return false, "", false
		}
		return t/o <= 1.2, fmt.Sprintf("%s vs %s: %.2fx", format(t, "ns/op"), format(o, "ns/op"), t/o), true
	}},
	{"insert <= 0.8x ttlcache, <= otter, <= 3 allocs", writeTarget("Insert", 3)},
	{"overwrite <= 0.8x ttlcache, <= otter, <= 3 allocs", writeTarget("Overwrite", 3)},
	{"expired read no slower than a hit (both on the expiry workloads' clock)", func(r *results) (bool, string, bool) {
		e, h := r.med("ReadExpired", "ns/op", base), r.med("ReadHitExpiryClock", "ns/op", base)
		if nan(e, h) {
			return false, "", false
		}
		return e <= h, fmt.Sprintf("expired %s (%g allocs) vs hit %s: %.2fx", format(e, "ns/op"),
			r.med("ReadExpired", "allocs/op", base), format(h, "ns/op"), e/h), true
	}},
	{"iteration cost per live doc flat (50% expired within 1.2x of 0%)", func(r *results) (bool, string, bool) {
		z, t, f := r.med("Iterate/expired=0%", "ns/live-doc", base), r.med("Iterate/expired=10%", "ns/live-doc", base), r.med("Iterate/expired=50%", "ns/live-doc", base)
		if nan(z, f) {
			return false, "", false
		}
		return f/z <= 1.2, fmt.Sprintf("0%% %s, 10%% %s, 50%% %s per live doc: 50%%/0%% = %.2fx", format(z, "ns/live-doc"), format(t, "ns/live-doc"), format(f, "ns/live-doc"), f/z), true
	}},
	{"sweep with nothing expired under 1µs at 1M", func(r *results) (bool, string, bool) {
		t := r.med("SweepNothing/n=1M", "ns/op", base)
		if nan(t) {
			return false, "", false
		}
		return t < 1000, format(t, "ns/op"), true
	}},
	{"deleting 100k expired faster than go-cache DeleteExpired", func(r *results) (bool, string, bool) {
		t, g := r.med("SweepExpired/n=100k", "ns/op", base), r.med("SweepExpired/n=100k", "ns/op", "gocache")
		if nan(t, g) {
			return false, "", false
		}
		return t < g, fmt.Sprintf("%s vs %s: %.2fx", format(t, "ns/op"), format(g, "ns/op"), t/g), true
	}},
	{"read p99 during mass-expiry sweep <= 2x idle p99", func(r *results) (bool, string, bool) {
		s, i := r.med("ReadDuringSweep/phase=sweeping", "p99-ns", base), r.med("ReadDuringSweep/phase=idle", "p99-ns", base)
		if nan(s, i) {
			return false, "", false
		}
		return s <= 2*i, fmt.Sprintf("p99 %s vs idle %s: %.2fx; max during sweep %s", format(s, "p99-ns"), format(i, "p99-ns"), s/i,
			format(r.med("ReadDuringSweep/phase=sweeping", "max-ns", base), "max-ns")), true
	}},
	{"longest sweep lock hold < 1 ms at the default batch (256)", func(r *results) (bool, string, bool) {
		m, p := r.med("SweepBatchHold/batch=256", "hold-max-µs", base), r.med("SweepBatchHold/batch=256", "hold-p50-µs", base)
		if nan(m) {
			return false, "", false
		}
		return m < 1000, fmt.Sprintf("longest %.0f µs, median batch %.0f µs (1M expired)", m, p), true
	}},
	{"memory <= 87 B/doc overhead", func(r *results) (bool, string, bool) {
		a, b := r.med("Memory/n=100k", "B/doc-overhead", base), r.med("Memory/n=1M", "B/doc-overhead", base)
		if nan(a) && nan(b) {
			return false, "", false
		}
		return (nan(a) || a <= 87) && (nan(b) || b <= 87), fmt.Sprintf("100k: %.1f, 1M: %.1f B/doc", a, b), true
	}},
	{"read cost flat from 10k to 1M (within 1.5x)", func(r *results) (bool, string, bool) {
		a, b, c := r.med("ReadHitScale/n=10k", "ns/op", base), r.med("ReadHitScale/n=100k", "ns/op", base), r.med("ReadHitScale/n=1M", "ns/op", base)
		if nan(a, c) {
			return false, "", false
		}
		lo, hi := min(a, b, c), max(a, b, c)
		return hi/lo <= 1.5, fmt.Sprintf("10k %s, 100k %s, 1M %s: max/min %.2fx", format(a, "ns/op"), format(b, "ns/op"), format(c, "ns/op"), hi/lo), true
	}},
}

// The targets of the speed work: reads and writes against otter, ttlcache
// and go-cache, on one goroutine and on all of them, in memory, durable
// with SyncNever and bounded (BenchmarkModes), and how reads scale.
var speedTargets = []target{
	{"read hit, random order, 1 goroutine: <= 0.8x otter, 0 allocs", readTarget("ReadHit")},
	{"read hit, ascending order, 1 goroutine: <= 0.8x otter, 0 allocs", readTarget("ReadHitAscending")},
	{"read hit, random order, parallel: <= 0.8x otter, 0 allocs", readTarget("ReadHitParallel")},
	{"read hit, ascending order, parallel: <= 0.8x otter, 0 allocs", readTarget("ReadHitAscendingParallel")},
	{"insert, 1 goroutine: <= otter, <= 0.8x ttlcache (aim: <= go-cache)", writeTarget("Insert", math.Inf(1))},
	{"insert, parallel: <= otter, <= 0.8x ttlcache (aim: <= go-cache)", writeTarget("InsertParallel", math.Inf(1))},
	{"overwrite, 1 goroutine: <= otter, <= 0.8x ttlcache (aim: <= go-cache)", writeTarget("Overwrite", math.Inf(1))},
	{"overwrite, parallel: <= otter, <= 0.8x ttlcache (aim: <= go-cache)", writeTarget("OverwriteParallel", math.Inf(1))},
	{"durable SyncNever: reads unchanged (within 1.1x of in-memory), 0 allocs", modeTarget(durableMode, modeReads, 1.1, true)},
	{"durable SyncNever: writes within 1.3x of in-memory", modeTarget(durableMode, modeWrites, 1.3, false)},
	{"bounded, full: reads within 1.1x of unbounded, 0 allocs", modeTarget(boundedMode, modeReads, 1.1, true)},
	{"bounded, full: writes within 1.1x of unbounded", modeTarget(boundedMode, modeWrites, 1.1, false)},
	{"read cost from 10k to 1M grows no more than otter's", func(r *results) (bool, string, bool) {
		const lo, hi = "ReadHitScale/n=10k", "ReadHitScale/n=1M"
		t0, t1 := r.med(lo, "ns/op", base), r.med(hi, "ns/op", base)
		o0, o1 := r.med(lo, "ns/op", "otter"), r.med(hi, "ns/op", "otter")
		if nan(t0, t1, o0, o1) {
			return false, "", false
		}
		return t1/t0 <= o1/o0, fmt.Sprintf("ttlstore %s to %s: %.2fx; otter %s to %s: %.2fx",
			format(t0, "ns/op"), format(t1, "ns/op"), t1/t0, format(o0, "ns/op"), format(o1, "ns/op"), o1/o0), true
	}},
}

// readTarget checks that ttlstore's read in row takes at most 0.8 times
// otter's, with no allocation.
func readTarget(row string) func(r *results) (bool, string, bool) {
	return func(r *results) (bool, string, bool) {
		t, o, a := r.med(row, "ns/op", base), r.med(row, "ns/op", "otter"), r.med(row, "allocs/op", base)
		if nan(t, o) {
			return false, "", false
		}
		return t <= 0.8*o && a == 0, fmt.Sprintf("%s vs %s: %.2fx, %g allocs", format(t, "ns/op"), format(o, "ns/op"), t/o, a), true
	}
}

// The rows of BenchmarkModes and its modes' names (store=…); the in-memory
// mode is store=ttlstore, the base.
const (
	durableMode = "ttlstore-durable-never"
	boundedMode = "ttlstore-bounded-full"
)

var (
	modeReads  = []string{"readhit", "readhit-ascending", "readhit-parallel", "readhit-ascending-parallel"}
	modeWrites = []string{"insert", "insert-parallel", "overwrite", "overwrite-parallel"}
)

// modeTarget checks that ttlstore in mode takes at most limit times the
// in-memory collection's ns/op in BenchmarkModes' op=… rows ops (and, with
// zeroAllocs, allocates nothing). The detail marks the rows over the limit.
func modeTarget(mode string, ops []string, limit float64, zeroAllocs bool) func(r *results) (bool, string, bool) {
	return func(r *results) (bool, string, bool) {
		met, measured := true, false
		var parts []string
		for _, op := range ops {
			row := "Modes/op=" + op
			m, x := r.med(row, "ns/op", base), r.med(row, "ns/op", mode)
			if nan(m, x) {
				continue
			}
			measured = true
			ok := x <= limit*m
			part := fmt.Sprintf("%s: %s vs %s, %.2fx", op, format(x, "ns/op"), format(m, "ns/op"), x/m)
			if a := r.med(row, "allocs/op", mode); zeroAllocs && a != 0 {
				ok = false
				part += fmt.Sprintf(" %g allocs", a)
			}
			if !ok {
				part += " (over)"
			}
			met = met && ok
			parts = append(parts, part)
		}
		return met, strings.Join(parts, "; "), measured
	}
}

// The durable workloads' targets (BenchmarkDurable*, run by run.sh durable).
var durableTargets = []target{
	{"durable: SyncAlways, 64 writers, >= 10x the writes/s of buntdb Always and badger SyncWrites=true", func(r *results) (bool, string, bool) {
		return throughputTarget(r, []string{"DurableWrite/writers=64/sync=always"}, 10)
	}},
	{"durable: SyncEverySecond >= buntdb EverySecond and badger SyncWrites=false in writes/s, 1 and 64 writers", func(r *results) (bool, string, bool) {
		return throughputTarget(r, []string{"DurableWrite/writers=1/sync=everysecond", "DurableWrite/writers=64/sync=everysecond"}, 1)
	}},
	{"durable: longest writer stall during a compaction of 1M documents < 5 ms (SyncNever)", func(r *results) (bool, string, bool) {
		const row = "DurableCompactStall/n=1M/sync=never"
		m := r.med(row, "max-ns", base)
		if nan(m) {
			return false, "", false
		}
		detail := fmt.Sprintf("max %s, p99.9 %s, idle max %s, compaction %s; reads: max %s",
			format(m, "max-ns"), format(r.med(row, "p99.9-ns", base), "-ns"), format(r.med(row, "idle-max-ns", base), "-ns"),
			format(r.med(row, "ns/op", base), "ns/op"), format(r.med(row, "read-max-ns", base), "-ns"))
		if a := r.med("DurableCompactStall/n=1M/sync=always", "max-ns", base); !nan(a) {
			detail += fmt.Sprintf("; SyncAlways: max %s (idle max %s)", format(a, "-ns"),
				format(r.med("DurableCompactStall/n=1M/sync=always", "idle-max-ns", base), "-ns"))
		}
		return m < 5e6, detail, true
	}},
	{"durable: reopening 1M documents < 2 s (from the log and from a snapshot)", func(r *results) (bool, string, bool) {
		l, s := r.med("DurableReopen/n=1M/state=log", "ns/op", base), r.med("DurableReopen/n=1M/state=snapshot", "ns/op", base)
		if nan(l) && nan(s) {
			return false, "", false
		}
		return (nan(l) || l < 2e9) && (nan(s) || s < 2e9), fmt.Sprintf("log %s, snapshot %s", format(l, "ns/op"), format(s, "ns/op")), true
	}},
	{"durable: reads of a durable collection within 1.1x of an in-memory one (serial and parallel)", func(r *results) (bool, string, bool) {
		met, measured := true, false
		var parts []string
		for _, row := range []string{"DurableReadHit", "DurableReadHitParallel"} {
			m, d := r.med(row, "ns/op", base), r.med(row, "ns/op", "ttlstore-durable")
			if nan(m, d) {
				continue
			}
			measured = true
			met = met && d <= 1.1*m
			parts = append(parts, fmt.Sprintf("%s: durable %s vs %s, %.2fx", row, format(d, "ns/op"), format(m, "ns/op"), d/m))
		}
		return met, strings.Join(parts, "; "), measured
	}},
}

// throughputTarget checks that ttlstore's writes/s is at least factor times
// every peer's in each of rows.
func throughputTarget(r *results, rows []string, factor float64) (bool, string, bool) {
	met, measured := true, false
	var parts []string
	for _, row := range rows {
		t := r.med(row, "writes/s", base)
		if nan(t) {
			continue
		}
		var ps []string
		for _, p := range r.stores {
			if v := r.med(row, "writes/s", p); p != base && !nan(v) {
				measured = true
				met = met && t >= factor*v
				ps = append(ps, fmt.Sprintf("%s %.2fx", p, t/v))
			}
		}
		parts = append(parts, fmt.Sprintf("%s: %.0f/s; ttlstore/peer: %s", row, t, strings.Join(ps, ", ")))
	}
	return met, strings.Join(parts, "; "), measured
}

// writeTarget checks that ttlstore's write in row takes at most 0.8 times
// ttlcache's and at most otter's, with at most maxAllocs allocations (+Inf:
// any). go-cache's ratio, an aim, is shown but not checked.
func writeTarget(row string, maxAllocs float64) func(r *results) (bool, string, bool) {
	return func(r *results) (bool, string, bool) {
		t, c, o := r.med(row, "ns/op", base), r.med(row, "ns/op", "ttlcache"), r.med(row, "ns/op", "otter")
		a := r.med(row, "allocs/op", base)
		if nan(t, c, o) {
			return false, "", false
		}
		detail := fmt.Sprintf("%s, %g allocs; /ttlcache %.2fx, /otter %.2fx", format(t, "ns/op"), a, t/c, t/o)
		if g := r.med(row, "ns/op", "gocache"); !nan(g) {
			detail += fmt.Sprintf(", /gocache %.2fx", t/g)
		}
		return t <= 0.8*c && t <= o && a <= maxAllocs, detail, true
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchsummary raw-output-file...")
		os.Exit(2)
	}
	r := &results{units: map[string][]string{}, vals: map[string]map[string]map[string][]float64{}}
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		err = parse(f, r)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
	}
	r.table(os.Stdout)
	fmt.Println("\nTargets (ttlstore):")
	unmeasured := 0
	for _, t := range slices.Concat(targets, speedTargets, durableTargets) {
		met, detail, ok := t.check(r)
		status := "MET   "
		switch {
		case !ok:
			unmeasured++
			continue
		case !met:
			status = "MISSED"
		}
		fmt.Printf("  %s %s: %s\n", status, t.name, detail)
	}
	if unmeasured > 0 {
		fmt.Printf("  (%d more not measured in this output)\n", unmeasured)
	}
}
