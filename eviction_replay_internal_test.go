package ttlstore

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// policySim drives a coldest alone, as a collection bounded at capacity
// documents drives it when each access is a Read and each miss an Upsert:
// a read of a stored key touches its entry; a read of another key is a
// miss, and the write of the key first evicts the policy's victim if the
// collection is full, then adds the new entry. No tables, no JSON: a
// replay costs a tenth of the collection's.
type policySim struct {
	p            *coldest
	capacity     int
	docs         map[uint64]*entry
	hits, misses uint64
	picked       atomic.Int64
}

func newPolicySim(capacity int) *policySim { return newPolicySimSeeded(capacity, rand.Uint64()) }

// newPolicySimSeeded is newPolicySim with the policy's hash seeded with
// hseed (0 is a Collection's, without Options.RandomizeEviction).
func newPolicySimSeeded(capacity int, hseed uint64) *policySim {
	s := &policySim{capacity: capacity, docs: make(map[uint64]*entry, capacity)}
	s.p = newColdest(hseed, capacity, func() (uint64, uint64) { return s.hits, s.misses }, &s.picked, nil)
	return s
}

// simEntry returns an entry whose id is k in decimal, as the hitratio
// command writes it.
func simEntry(k uint64) *entry {
	id := strconv.AppendUint(nil, k, 10)
	e, b := newEntry(len(id))
	copy(b, id)
	e.idLen, e.n = uint32(len(id)), uint32(len(id))
	return e
}

// access reads k, writing it on a miss, and reports whether it was a hit.
func (s *policySim) access(k uint64) bool {
	if e := s.docs[k]; e != nil {
		s.hits++
		e.touch()
		return true
	}
	s.misses++
	if len(s.docs) >= s.capacity {
		v := s.p.victim("", nil, false)
		vk, err := strconv.ParseUint(v.key(), 10, 64)
		if err != nil || s.docs[vk] != v {
			panic(fmt.Sprintf("victim %q is not a stored document", v.key()))
		}
		delete(s.docs, vk)
	}
	e := simEntry(k)
	s.docs[k] = e
	s.p.added(e)
	return false
}

// replayShares is the capacities TestColdestReplay replays at, as shares
// of a trace's keys: TTLSTORE_POLICY_SHARES (percents, comma-separated),
// or those of the hitratio command, 5, 15, 40 and 80 %.
func replayShares(t *testing.T) []float64 {
	v := os.Getenv("TTLSTORE_POLICY_SHARES")
	if v == "" {
		return []float64{0.05, 0.15, 0.40, 0.80}
	}
	var shares []float64
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || x <= 0 || x > 100 {
			t.Fatalf("TTLSTORE_POLICY_SHARES=%q", v)
		}
		shares = append(shares, x/100)
	}
	return shares
}

// collectionSim drives a Collection as the hitratio command does: each
// access is a Read of the key's id, and a miss an Upsert of the document
// {"id":"<k>","v":1}, in a collection bounded at capacity documents with
// EvictColdest, and RandomizeEviction as random says. Its policy's
// counters are those of the collection's.
type collectionSim struct {
	c   *Collection
	doc []byte
}

func newCollectionSim(capacity int, random bool) *collectionSim {
	c, err := New(Options{MaxDocuments: capacity, Eviction: EvictColdest, RandomizeEviction: random, SweepInterval: ManualSweep})
	if err != nil {
		panic(err)
	}
	return &collectionSim{c: c}
}

func (s *collectionSim) access(k uint64) bool {
	id := strconv.FormatUint(k, 10)
	if _, err := s.c.Read(id); err == nil {
		return true
	}
	s.doc = append(s.doc[:0], `{"id":"`...)
	s.doc = append(s.doc, id...)
	s.doc = append(s.doc, `","v":1}`...)
	if _, err := s.c.Upsert(s.doc); err != nil {
		panic(err)
	}
	return false
}

func (s *collectionSim) policy() *coldest { return s.c.lim.cold }
func (s *collectionSim) close()           { s.c.Close() }
func (s *policySim) policy() *coldest     { return s.p }
func (s *policySim) close()               {}

// replayer is what TestColdestReplay replays a trace against.
type replayer interface {
	access(k uint64) bool
	policy() *coldest
	close()
}

// TestColdestReplay replays the sequences in the directory
// TTLSTORE_POLICY_TRACES (files NAME.u64 of little-endian 64-bit keys, as
// `hitratio -dump DIR` writes them) against the policy alone, at the
// capacities hitratio uses (5, 15, 40 and 80 % of each one's keys), with
// TTLSTORE_POLICY_SEEDS runs each (5 by default), and logs the median hit
// ratio, its range, and the counters of the policy in the median run: its
// duels and their outcome, second chances, and the window's share at ten
// points of the replay. The first run hashes ids with the fixed seed a
// Collection uses by default, whose ratio it logs as "fixed"; the others
// with random seeds, as Options.RandomizeEviction does: their range is how
// far another hash could move the row. TTLSTORE_POLICY_WINDOW holds the
// window at that share of the documents (a diagnostic: what a fixed
// window would give). TTLSTORE_POLICY_ONLY keeps the files whose name
// contains it. It is how the policy's changes were judged; it checks
// nothing but that victims are stored documents, and is skipped when the
// variable is not set. With TTLSTORE_POLICY_RUNS set, it logs every run's
// counters, not only the median's (a row whose runs split in two modes
// shows it there). With TTLSTORE_POLICY_COLLECTION set, it replays them
// against a Collection (collectionSim), as the hitratio command does,
// rather than against the policy alone; TTLSTORE_POLICY_SHARES picks the
// capacities (replayShares).
func TestColdestReplay(t *testing.T) {
	dir := os.Getenv("TTLSTORE_POLICY_TRACES")
	if dir == "" {
		t.Skip("TTLSTORE_POLICY_TRACES is not set (see hitratio -dump)")
	}
	seeds := 5
	if v := os.Getenv("TTLSTORE_POLICY_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("TTLSTORE_POLICY_SEEDS=%q", v)
		}
		seeds = n
	}
	held := -1.0
	if v := os.Getenv("TTLSTORE_POLICY_WINDOW"); v != "" {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 || x > windowMax {
			t.Fatalf("TTLSTORE_POLICY_WINDOW=%q", v)
		}
		held = x
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.u64"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .u64 file in %s: %v", dir, err)
	}
	var sum, sumFixed float64
	rows := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".u64")
		if !strings.Contains(name, os.Getenv("TTLSTORE_POLICY_ONLY")) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		trace := make([]uint64, len(b)/8)
		keys := make(map[uint64]struct{})
		for i := range trace {
			trace[i] = binary.LittleEndian.Uint64(b[8*i:])
			keys[trace[i]] = struct{}{}
		}
		for _, share := range replayShares(t) {
			capacity := max(1, int(share*float64(len(keys))+0.5))
			type result struct {
				fixed  bool // the run with the fixed seed
				ratio  float64
				stats  coldStats
				window []string
			}
			var rs []result
			for run := range seeds {
				// The first run hashes as a Collection does by default
				// (seed 0), the others with random seeds, as with
				// Options.RandomizeEviction.
				hseed := uint64(0)
				if run > 0 {
					hseed = rand.Uint64()
				}
				var s replayer = newPolicySimSeeded(capacity, hseed)
				if os.Getenv("TTLSTORE_POLICY_COLLECTION") != "" {
					s = newCollectionSim(capacity, run > 0)
				}
				var r result
				hits := 0
				for i, k := range trace {
					if s.access(k) {
						hits++
					}
					if held >= 0 {
						s.policy().share = held
					}
					if (i+1)%max(1, len(trace)/10) == 0 {
						r.window = append(r.window, fmt.Sprintf("%.3f", s.policy().share))
					}
				}
				r.ratio = 100 * float64(hits) / float64(len(trace))
				r.fixed = run == 0
				r.stats = s.policy().stats
				s.close()
				rs = append(rs, r)
			}
			slices.SortFunc(rs, func(a, b result) int {
				switch {
				case a.ratio < b.ratio:
					return -1
				case a.ratio > b.ratio:
					return 1
				}
				return 0
			})
			if os.Getenv("TTLSTORE_POLICY_RUNS") != "" {
				for _, r := range rs {
					t.Logf("  run %.2f unopposed %d jitter %d won %d/%d grown %d shrunk %d: %s", r.ratio, r.stats.unopposed, r.stats.jittered, r.stats.admitted, r.stats.duels, r.stats.grown, r.stats.shrunk, strings.Join(r.window, " "))
				}
			}
			med := rs[len(rs)/2]
			fixed := rs[slices.IndexFunc(rs, func(r result) bool { return r.fixed })].ratio
			sum += med.ratio
			sumFixed += fixed
			rows++
			st := med.stats
			t.Logf("%-8s %8d %5.1f%%: fixed %6.2f, seeds %6.2f (%.2f–%.2f) duels %d won %.1f%% (jitter %d) unopposed %d promoted %d kept %d demoted %d window +%d -%d: %s",
				name, capacity, 100*share, fixed, med.ratio, rs[0].ratio, rs[len(rs)-1].ratio,
				st.duels, 100*float64(st.admitted)/float64(max(st.duels, 1)), st.jittered, st.unopposed,
				st.promoted, st.kept, st.demoted, st.grown, st.shrunk, strings.Join(med.window, " "))
		}
	}
	if rows > 0 {
		t.Logf("mean of the %d medians: %.2f; of the fixed seed's runs: %.2f", rows, sum/float64(rows), sumFixed/float64(rows))
	}
}
