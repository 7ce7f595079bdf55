package main

import (
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"strings"
)

// A workload is one access sequence, replayed at each of its capacities.
type workload struct {
	name       string
	about      string // for the list of workloads
	capacities []int
	// shares are more capacities, as shares of the sequence's distinct
	// keys (the public traces').
	shares []float64
	// trace returns the sequence; n is the number of accesses asked for
	// (1M, or 100k with -quick), which a recorded trace ignores.
	trace func(n int) ([]uint64, error)
}

// workloads returns every workload, in the order of the table. glimpse is
// the path of the Glimpse trace; "" finds it with go list.
func workloads(glimpse string) []workload {
	ws := []workload{{
		name:       "zipf",
		about:      "Go's rand.Zipf(s=1.0001, v=10, imax=5e7), keys as drawn (otter's published setting)",
		capacities: []int{500, 5_000, 80_000},
		trace:      goZipfTrace,
	}}
	for _, theta := range []float64{0.7, 0.99, 1.2} {
		ws = append(ws, workload{
			name:       fmt.Sprintf("ycsb-%g", theta),
			about:      fmt.Sprintf("YCSB Zipfian over 1M items, θ=%g, ranks hashed to keys", theta),
			capacities: []int{1_000, 10_000, 100_000},
			trace:      func(n int) ([]uint64, error) { return ycsbTrace(n, 1_000_000, theta), nil },
		})
	}
	ws = append(ws, workload{
		name:       "glimpse",
		about:      "the Glimpse trace of the LIRS paper (ristretto's sim/gli.lirs.gz), whole",
		capacities: []int{250, 500, 1_000, 2_000},
		trace: func(int) ([]uint64, error) {
			if glimpse == "" {
				path, err := ristrettoGlimpse()
				if err != nil {
					return nil, err
				}
				glimpse = path
			}
			return readTraceFile(glimpse, formatLIRS)
		},
	})
	for _, keys := range []int{1_500, 15_000} {
		ws = append(ws, workload{
			name:       fmt.Sprintf("loop-%d", keys),
			about:      fmt.Sprintf("keys 0..%d in order, again and again", keys-1),
			capacities: []int{keys * 2 / 3},
			trace:      func(n int) ([]uint64, error) { return loopTrace(n, keys), nil },
		})
	}
	ws = append(ws, workload{
		name:       "shift-0.99",
		about:      "YCSB Zipfian over 100k items, θ=0.99, for half the accesses, then over 100k other items",
		capacities: []int{1_000, 10_000},
		trace:      func(n int) ([]uint64, error) { return shiftTrace(n, 100_000, 0.99), nil },
	})
	return ws
}

// Seeds of the generated workloads: every run replays the same sequences.
const (
	zipfSeed  = 1
	ycsbSeed  = 2
	shiftSeed = 3
)

// goZipfTrace is n draws of Go's rand.Zipf with the parameters of otter's
// simulator (configs/zipf.toml), so its column can be held against otter's
// published hit ratios; otter's simulator seeds with the time, this with
// zipfSeed.
func goZipfTrace(n int) ([]uint64, error) {
	z := rand.NewZipf(rand.New(rand.NewSource(zipfSeed)), 1.0001, 10, 5e7)
	t := make([]uint64, n)
	for i := range t {
		t[i] = z.Uint64()
	}
	return t, nil
}

// ycsbTrace is n draws of ycsbZipf over items ranks, each rank hashed to a
// key so that the hot keys are scattered over the key space.
func ycsbTrace(n, items int, theta float64) []uint64 {
	z := newYCSBZipf(items, theta)
	r := rand.New(rand.NewSource(ycsbSeed))
	t := make([]uint64, n)
	for i := range t {
		t[i] = scramble(z.next(r.Float64()))
	}
	return t
}

// shiftTrace is n/2 draws of ycsbZipf over items ranks, then n-n/2 over the
// same ranks offset by items, so that the hot set moves at once to keys
// never seen before.
func shiftTrace(n, items int, theta float64) []uint64 {
	z := newYCSBZipf(items, theta)
	r := rand.New(rand.NewSource(shiftSeed))
	t := make([]uint64, n)
	for i := range t {
		rank := z.next(r.Float64())
		if i >= n/2 {
			rank += uint64(items)
		}
		t[i] = scramble(rank)
	}
	return t
}

// loopTrace is 0, 1, …, keys-1, 0, 1, … for n accesses.
func loopTrace(n, keys int) []uint64 {
	t := make([]uint64, n)
	for i := range t {
		t[i] = uint64(i % keys)
	}
	return t
}

// ycsbZipf is YCSB's ZipfianGenerator (not the scrambled one): it draws an
// item rank in [0, n) with P(i) proportional to 1/(i+1)^θ by the method of
// Gray et al., "Quickly generating billion-record synthetic databases"
// (SIGMOD 1994): ranks 0 and 1 exactly, the others by inverting the
// continuous approximation of the distribution. zeta(n, θ) is summed once,
// directly, so θ may be above 1 (YCSB's incremental zeta is only a way to
// compute the same sum); θ = 1 is not allowed.
type ycsbZipf struct {
	n, half           float64
	alpha, zetan, eta float64
}

func newYCSBZipf(n int, theta float64) *ycsbZipf {
	if theta == 1 || theta <= 0 || n < 2 {
		panic(fmt.Sprintf("ycsbZipf: n=%d θ=%g", n, theta))
	}
	zetan := zeta(n, theta)
	return &ycsbZipf{
		n:     float64(n),
		alpha: 1 / (1 - theta),
		zetan: zetan,
		eta:   (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta(2, theta)/zetan),
		half:  1 + math.Pow(0.5, theta),
	}
}

// zeta is the sum of 1/i^θ for i in [1, n].
func zeta(n int, theta float64) float64 {
	sum := 0.0
	for i := n; i >= 1; i-- { // smallest terms first
		sum += math.Pow(float64(i), -theta)
	}
	return sum
}

// next maps u, uniform in [0, 1), to a rank.
func (z *ycsbZipf) next(u float64) uint64 {
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	r := z.n * math.Pow(z.eta*u-z.eta+1, z.alpha)
	return uint64(min(max(r, 2), z.n-1))
}

// scramble is splitmix64's finalizer: a bijection of uint64 that spreads
// neighbouring ranks over the key space (distinct ranks, distinct keys).
func scramble(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// ristrettoGlimpse returns the path of sim/gli.lirs.gz in the ristretto v2
// module this program is built with, as `go list -m` finds it (in the
// module cache); it must be run inside the bench module.
func ristrettoGlimpse() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/dgraph-io/ristretto/v2").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m github.com/dgraph-io/ristretto/v2 (run inside bench, or give -glimpse): %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("go list -m github.com/dgraph-io/ristretto/v2: module not downloaded (go mod download, or give -glimpse)")
	}
	return dir + "/sim/gli.lirs.gz", nil
}
