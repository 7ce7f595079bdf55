package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// write prints the table of hit ratios; with ttlstore and otter among the
// caches, a column of their difference and the summary that issue 22's
// targets are read from; then the list of sequences with their ceilings.
func (r *results) write(w io.Writer) {
	ts, ot, lr := r.column("ttlstore"), r.column("otter"), r.column("lru")
	if lr < 0 {
		lr = r.column("ttlcache")
	}
	shares := slices.ContainsFunc(r.rows, func(x row) bool { return x.share > 0 })
	fmt.Fprint(w, "| workload | capacity |")
	if shares {
		fmt.Fprint(w, " of keys |")
	}
	fmt.Fprintf(w, " %s |", strings.Join(r.caches, " | "))
	compare := ts >= 0 && ot >= 0
	if compare {
		fmt.Fprint(w, " ttlstore − otter |")
	}
	fmt.Fprintf(w, "\n|---|---:|%s%s%s\n", strings.Repeat("---:|", btoi(shares)),
		strings.Repeat("---:|", len(r.caches)), strings.Repeat("---:|", btoi(compare)))
	for _, row := range r.rows {
		fmt.Fprintf(w, "| %s | %d |", row.workload, row.capacity)
		if shares {
			fmt.Fprintf(w, " %g %% |", 100*row.share)
		}
		for _, vs := range row.ratios {
			fmt.Fprintf(w, " %s |", cell(vs))
		}
		if compare {
			fmt.Fprintf(w, " %+.2f |", row.med(ts)-row.med(ot))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if compare {
		r.summary(w, ts, ot, lr)
	}
	fmt.Fprintln(w, "| workload | accesses | keys | ceiling | sequence |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|")
	for _, t := range r.traces {
		fmt.Fprintf(w, "| %s | %d | %d | %.1f | %s |\n", t.workload, t.accesses, t.unique, t.ceiling(), t.about)
	}
	if len(r.absent) > 0 {
		fmt.Fprintf(w, "\nNot in the traces directory, so not replayed: %s.\n", strings.Join(r.absent, ", "))
	}
}

// summary prints, over the rows: the mean of each cache's medians; the
// rows where ttlstore is more than a point below otter, or not ahead of
// LRU where otter is (lr < 0: no LRU column); and the widest range of
// ttlstore's runs, and of ttlstore-random's, with the rows where they
// spread more than half a point.
func (r *results) summary(w io.Writer, ts, ot, lr int) {
	n := float64(len(r.rows))
	fmt.Fprintf(w, "Over the %d rows, the mean of the medians:", len(r.rows))
	for i, name := range r.caches {
		sum := 0.0
		for _, row := range r.rows {
			sum += row.med(i)
		}
		fmt.Fprintf(w, " %s %.2f;", name, sum/n)
	}
	fmt.Fprintln(w)
	var below, behindLRU []string
	for _, row := range r.rows {
		name := fmt.Sprintf("%s %d", row.workload, row.capacity)
		d := row.med(ts) - row.med(ot)
		if d < -1 {
			below = append(below, fmt.Sprintf("%s (%+.2f)", name, d))
		}
		if lr >= 0 && row.med(ot) > row.med(lr) && row.med(ts) <= row.med(lr) {
			behindLRU = append(behindLRU, fmt.Sprintf("%s (%.2f against %.2f)", name, row.med(ts), row.med(lr)))
		}
	}
	fmt.Fprintf(w, "ttlstore more than a point below otter: %s.\n", listOrNone(below))
	if lr >= 0 {
		fmt.Fprintf(w, "ttlstore not ahead of LRU where otter is: %s.\n", listOrNone(behindLRU))
	}
	for _, c := range []int{ts, r.column("ttlstore-random")} {
		if c < 0 || len(r.rows) == 0 || len(r.rows[0].ratios[c]) < 2 {
			continue
		}
		widest, at := 0.0, ""
		var wide []string
		for _, row := range r.rows {
			name := fmt.Sprintf("%s %d", row.workload, row.capacity)
			_, lo, hi := median(row.ratios[c])
			if hi-lo >= widest {
				widest, at = hi-lo, name
			}
			if hi-lo > 0.5 {
				wide = append(wide, fmt.Sprintf("%s (%.2f)", name, hi-lo))
			}
		}
		fmt.Fprintf(w, "The widest range of %s's %d runs: %.2f points (%s); more than 0.5: %s.\n",
			r.caches[c], len(r.rows[0].ratios[c]), widest, at, listOrNone(wide))
	}
	fmt.Fprintln(w)
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// column returns the index of the cache named name, -1 if it has none.
func (r *results) column(name string) int { return slices.Index(r.caches, name) }

// med is the median of the runs of cache i.
func (x row) med(i int) float64 {
	m, _, _ := median(x.ratios[i])
	return m
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
