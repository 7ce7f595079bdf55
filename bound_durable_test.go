package ttlstore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// The bounded mode in durable collections: an eviction is logged as a
// delete, so what was evicted stays evicted across restarts and crashes;
// Open enforces a bound lower than what the directory holds; a log that
// cannot take an eviction's record loses nothing.

// bdClock is a clock that moves only when the test calls Add, as
// clock.Mock, but without the millisecond of real sleep Mock.Add takes: the
// collections here have no background sweeper, so nothing waits on it and
// its timers (the embedded Mock's, at start) are never used.
type bdClock struct {
	*clock.Mock
	mu  sync.Mutex
	now time.Time
}

func newBDClock() *bdClock { return &bdClock{Mock: newMock(), now: start} }

func (c *bdClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *bdClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *bdClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Add moves the clock on by d.
func (c *bdClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set is not for these tests: the embedded Mock's would not move Now.
func (c *bdClock) Set(time.Time) { panic("bdClock.Set") }

// bdRecorder records what a collection reports to OnEvict and OnExpire. It
// is safe for concurrent use.
type bdRecorder struct {
	mu      sync.Mutex
	evicted []string         // ids, in the order they were reported
	docs    map[string]int64 // weight of each evicted document, by id
	expired []string
}

func newBDRecorder() *bdRecorder { return &bdRecorder{docs: map[string]int64{}} }

func (r *bdRecorder) onEvict(d ttlstore.Document) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evicted = append(r.evicted, d.ID())
	r.docs[d.ID()] = d.Weight()
}

func (r *bdRecorder) onExpire(d ttlstore.Document) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expired = append(r.expired, d.ID())
}

// evictions returns the ids reported to OnEvict so far.
func (r *bdRecorder) evictions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evicted)
}

func (r *bdRecorder) expirations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.expired)
}

// evictedBytes is the total weight of the evicted documents.
func (r *bdRecorder) evictedBytes() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n uint64
	for _, id := range r.evicted {
		n += uint64(r.docs[id])
	}
	return n
}

// bdOptions are the options of the tests' durable bounded collections: a
// DefaultTTL of an hour, the mock clock clk, no background sweeper, and the
// recorder's callbacks (r may be nil).
func bdOptions(clk clock.Clock, policy ttlstore.EvictionPolicy, maxDocs int, maxBytes int64, r *bdRecorder) ttlstore.Options {
	opts := ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(3600),
		Clock:         clk,
		SweepInterval: ttlstore.ManualSweep,
		MaxDocuments:  maxDocs,
		MaxBytes:      maxBytes,
		Eviction:      policy,
	}
	if r != nil {
		opts.OnEvict = r.onEvict
		opts.OnExpire = r.onExpire
	}
	return opts
}

// bdOpen opens the durable collection "db" on fsys with opts, compacting
// only when asked (or once the log passes minCompact, when positive).
func bdOpen(t testing.TB, fsys vfs.FS, opts ttlstore.Options, minCompact int64) *ttlstore.Collection {
	t.Helper()
	if minCompact <= 0 {
		minCompact = 1 << 30
	}
	c, err := ttlstore.OpenFS(fsys, "db", opts, minCompact, false)
	require.NoError(t, err)
	return c
}

// bdCheck checks that c's structures agree and that its usage is what its
// documents weigh: Stats().Live is what All yields, Stats().Bytes the sum
// of their weights (no document may be expired and unswept), and, when
// bounded is true, within the bounds in force.
func bdCheck(t testing.TB, c *ttlstore.Collection, bounded bool) {
	t.Helper()
	require.NoError(t, c.CheckInvariants())
	st := c.Stats()
	require.Zero(t, st.Expired, "bdCheck needs every document in memory to be live")
	n, bytes := 0, int64(0)
	for d := range c.All() {
		n++
		bytes += d.Weight()
	}
	assert.Equal(t, n, st.Live, "Stats().Live")
	assert.Equal(t, bytes, st.Bytes, "Stats().Bytes is not the weight of the documents")
	if bounded {
		if st.MaxDocuments > 0 {
			assert.LessOrEqual(t, st.Live, st.MaxDocuments, "past MaxDocuments")
		}
		if st.MaxBytes > 0 {
			assert.LessOrEqual(t, st.Bytes, st.MaxBytes, "past MaxBytes")
		}
	}
}

// bdDoc is the document with id i: its size varies with i, and one in
// three has its own ttl, so that EvictSoonestExpiry has an order to follow.
func bdDoc(i int) string {
	id := fmt.Sprintf("d%03d", i)
	if i%3 == 0 {
		return fmt.Sprintf(`{"id":%q,"v":%d,"ttl":%d,"pad":"%s"}`, id, i, 100+(i*37)%900, strings.Repeat("x", (i*13)%90))
	}
	return fmt.Sprintf(`{"id":%q,"v":%d,"pad":"%s"}`, id, i, strings.Repeat("y", (i*29)%90))
}

// bdBounds are the bounds the tests try, each with both evicting policies.
var bdBounds = []struct {
	name     string
	maxDocs  int
	maxBytes int64
}{
	{"MaxDocuments", 8, 0},
	{"MaxBytes", 0, 2000},
	{"both", 10, 2500},
}

var bdPolicies = []ttlstore.EvictionPolicy{ttlstore.EvictColdest, ttlstore.EvictSoonestExpiry}

// TestDurableBoundEvictedStayEvicted: a document evicted to make room is
// gone after Close and Open, whether the directory is reopened with the
// same bound or with none; every other document is back exactly as it was
// (_ts, _etag and all), and reopening within the bound evicts nothing.
func TestDurableBoundEvictedStayEvicted(t *testing.T) {
	for _, b := range bdBounds {
		for _, policy := range bdPolicies {
			t.Run(b.name+"/"+policy.String(), func(t *testing.T) {
				dir := t.TempDir()
				clk := newBDClock()
				rec := newBDRecorder()
				// SyncNever on the real file system: Close syncs, and
				// the test stays fast.
				opts := bdOptions(clk, policy, b.maxDocs, b.maxBytes, rec)
				opts.Sync = ttlstore.SyncNever
				c, err := ttlstore.Open(dir, opts)
				require.NoError(t, err)
				const written = 40
				for i := range written {
					upsert(t, c, bdDoc(i))
					if i%4 == 0 {
						live(t, c, fmt.Sprintf("d%03d", i)) // some are read, for EvictColdest
					}
					if i%10 == 9 {
						clk.Add(time.Second)
					}
				}
				bdCheck(t, c, true)
				evicted := rec.evictions()
				require.NotEmpty(t, evicted, "nothing was evicted: the test proves nothing")
				before := shownOf(c)
				assert.Len(t, before.docs, written-len(evicted), "every document written is either stored or was evicted")
				for _, id := range evicted {
					assert.NotContains(t, before.docs, id, "reported to OnEvict, still stored")
				}
				st := c.Stats()
				assert.Equal(t, uint64(len(evicted)), st.Evicted)
				assert.Equal(t, rec.evictedBytes(), st.EvictedBytes)
				require.NoError(t, c.Close())

				for _, reopen := range []struct {
					name              string
					maxDocs, maxBytes int64
				}{{"same bound", int64(b.maxDocs), b.maxBytes}, {"no bound", 0, 0}} {
					rec2 := newBDRecorder()
					c, err := ttlstore.Open(dir, bdOptions(clk, policy, int(reopen.maxDocs), reopen.maxBytes, rec2))
					require.NoError(t, err, reopen.name)
					after := shownOf(c)
					assert.True(t, after.equal(before), "%s: reopened to\n  %v\nwant\n  %v", reopen.name, after, before)
					for _, id := range evicted {
						assert.NotContains(t, after.docs, id, "%s: an evicted document came back", reopen.name)
					}
					assert.Empty(t, rec2.evictions(), "%s: Open evicted within the bound", reopen.name)
					assert.Zero(t, c.Stats().Evicted, reopen.name)
					bdCheck(t, c, true)
					require.NoError(t, c.Close())
				}
			})
		}
	}
}

// TestDurableBoundCrash runs random histories on a bounded durable
// collection (writes past the bound, deletes, touches, reads, clock moves,
// compactions) under SyncAlways on a crash-simulating file system, with one
// fault injected at a random file-system operation in most of them, then
// crashes the machine. The reopened collection must show the state after
// the last write that was acknowledged (or refused with ErrFull, whose
// evictions stand), or that after the write in flight when the log
// failed, or the acknowledged one less a prefix of the evictions the write
// in flight logged before its own record (they stand whether or not the
// write does); and every document reported to OnEvict before the last
// acknowledged write (and not written again since) must stay evicted: an
// eviction is synced with the write that made it.
func TestDurableBoundCrash(t *testing.T) {
	// Few histories by default, to keep the test fast; set
	// TTLSTORE_CRASH_SEEDS for a deeper run.
	seeds := 15
	if raceEnabled {
		seeds = 6
	}
	if os.Getenv("TTLSTORE_CRASH_SEEDS") != "" {
		seeds = crashSeeds(t)
	}
	// Bounds tighter than bdBounds: the histories write 14 ids.
	bounds := []struct {
		name     string
		maxDocs  int
		maxBytes int64
	}{{"MaxDocuments", 6, 0}, {"MaxBytes", 0, 1000}, {"both", 8, 1200}}
	for _, b := range bounds {
		for _, policy := range bdPolicies {
			t.Run(b.name+"/"+policy.String(), func(t *testing.T) {
				faults, evictions := 0, 0
				for seed := range seeds {
					f, e := bdCrashHistory(t, uint64(seed), policy, b.maxDocs, b.maxBytes)
					faults += f
					evictions += e
				}
				t.Logf("%d histories, %d with a write that failed, %d evictions", seeds, faults, evictions)
				require.Positive(t, evictions)
			})
		}
	}
}

// bdCrashHistory runs one history; it returns 1 if a write failed, and the
// number of evictions.
func bdCrashHistory(t *testing.T, seed uint64, policy ttlstore.EvictionPolicy, maxDocs int, maxBytes int64) (int, int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	fsys := vfs.NewMemFS()
	fsys.SetPreallocation(preallocationOf(seed))
	clk := newBDClock()
	var mu sync.Mutex
	gone := map[string]bool{} // evicted, and not written since
	var lastOp []string       // evicted by the last operation, in order
	evictions := 0
	opts := bdOptions(clk, policy, maxDocs, maxBytes, nil)
	opts.OnEvict = func(d ttlstore.Document) {
		mu.Lock()
		gone[d.ID()] = true
		lastOp = append(lastOp, d.ID())
		evictions++
		mu.Unlock()
	}
	c := bdOpen(t, fsys, opts, []int64{0, 700}[rng.IntN(2)])
	if rng.IntN(5) > 0 { // one history in five runs without a fault
		fsys.SetHook(vfs.FailNth(1+rng.Int64N(300), nil))
	}

	acked := shownOf(c)
	goneAtAck := map[string]bool{}
	var inflight *shown
	for op := 0; op < 60 && inflight == nil; op++ {
		id := "d" + strconv.Itoa(rng.IntN(14))
		var err error
		mu.Lock()
		lastOp = lastOp[:0]
		mu.Unlock()
		switch k := rng.IntN(20); {
		case k < 10:
			doc := fmt.Sprintf(`{"id":%q,"n":%d,"pad":"%0*d"}`, id, op, rng.IntN(60), 0)
			switch rng.IntN(4) {
			case 0:
				doc = fmt.Sprintf(`{"id":%q,"n":%d,"ttl":%d}`, id, op, 30+rng.IntN(300))
			case 1:
				doc = fmt.Sprintf(`{"id":%q,"n":%d,"ttl":-1}`, id, op)
			}
			_, err = c.Upsert([]byte(doc))
			if err == nil {
				mu.Lock()
				delete(gone, id)
				mu.Unlock()
			}
		case k < 12:
			err = c.Delete(id)
		case k < 13:
			_, err = c.Touch(id)
		case k < 16:
			_, err = c.Read(id)
		case k < 18:
			clk.Add(time.Duration(rng.IntN(40)) * time.Second)
			acked = shownOf(c) // the same writes, seen at the new time
			continue
		default:
			if err := c.Compact(); err != nil {
				require.ErrorIs(t, err, ttlstore.ErrIO, "seed %d", seed)
			}
			continue
		}
		switch {
		case err == nil, errors.Is(err, ttlstore.ErrFull):
			// A refused write changes nothing but the evictions it
			// made, which stand and are synced.
			acked = shownOf(c)
			mu.Lock()
			goneAtAck = maps.Clone(gone)
			mu.Unlock()
		case errors.Is(err, ttlstore.ErrNotFound):
		default:
			require.ErrorIs(t, err, ttlstore.ErrIO, "seed %d", seed)
			s := shownOf(c)
			inflight = &s
		}
	}
	// The write in flight may have logged evictions before its own
	// record: a crash may keep any prefix of them without the write.
	partial := []shown{acked}
	if inflight != nil {
		for _, id := range lastOp {
			p := shown{docs: maps.Clone(partial[len(partial)-1].docs), def: acked.def}
			delete(p.docs, id)
			partial = append(partial, p)
		}
	}
	require.NoError(t, c.CheckInvariants(), "seed %d", seed)
	after := fsys.Crash(rng, true)
	c.Close() // the dead machine's collection: its errors do not matter

	c2 := bdOpen(t, after, bdOptions(clk, policy, maxDocs, maxBytes, nil), 0)
	defer c2.Close()
	require.NoError(t, c2.CheckInvariants(), "seed %d", seed)
	got := shownOf(c2)
	ok := inflight != nil && got.equal(*inflight)
	for _, p := range partial {
		ok = ok || got.equal(p)
	}
	if !ok {
		t.Fatalf("seed %d: reopened to\n  %v\nwant the acknowledged state\n  %v\nor the in-flight one\n  %v\nor the acknowledged one less some of the in-flight write's evictions %v", seed, got, acked, inflight, lastOp)
	}
	for id := range goneAtAck {
		if inflight != nil && got.equal(*inflight) {
			if _, ok := inflight.docs[id]; ok {
				continue // written again by the write in flight
			}
		}
		assert.NotContains(t, got.docs, id, "seed %d: evicted before the last acknowledged write, back after a crash", seed)
	}
	st := c2.Stats()
	if maxDocs > 0 {
		assert.LessOrEqual(t, st.Live+st.Expired, maxDocs, "seed %d", seed)
	}
	if maxBytes > 0 {
		assert.LessOrEqual(t, st.Bytes, maxBytes, "seed %d", seed)
	}
	if inflight != nil {
		return 1, evictions
	}
	return 0, evictions
}

// bdFill returns a MemFS whose directory "db" holds n documents, bdDoc(0)
// to bdDoc(n-1), written with no bound, the state they show, and when
// each expires.
func bdFill(t *testing.T, clk clock.Clock, n int) (*vfs.MemFS, shown, map[string]time.Time) {
	t.Helper()
	fsys := vfs.NewMemFS()
	c := bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
	expiry := map[string]time.Time{}
	for i := range n {
		d := upsert(t, c, bdDoc(i))
		expiry[d.ID()] = bdExpiry(d)
	}
	want := shownOf(c)
	require.NoError(t, c.Close())
	return fsys, want, expiry
}

// TestDurableBoundOpenEvicts: opened with a bound lower than what its
// directory holds, a collection under an evicting policy evicts the
// surplus during Open (reporting it to OnEvict and counting it in Stats)
// and logs the evictions: reopened with no bound, it shows the reduced set,
// even after a power loss right after Open.
func TestDurableBoundOpenEvicts(t *testing.T) {
	const n = 20
	for _, b := range []struct {
		name     string
		maxDocs  int
		maxBytes int64
	}{{"MaxDocuments", 12, 0}, {"MaxBytes", 0, 1500}} {
		for _, policy := range bdPolicies {
			for _, restart := range []string{"close", "power loss"} {
				t.Run(b.name+"/"+policy.String()+"/"+restart, func(t *testing.T) {
					clk := newBDClock()
					fsys, full, expiry := bdFill(t, clk, n)
					rec := newBDRecorder()
					c := bdOpen(t, fsys, bdOptions(clk, policy, b.maxDocs, b.maxBytes, rec), 0)
					evicted := rec.evictions()
					require.NotEmpty(t, evicted, "Open evicted nothing")
					if b.maxDocs > 0 {
						assert.Len(t, evicted, n-b.maxDocs, "Open evicts exactly the surplus")
					}
					st := c.Stats()
					assert.Equal(t, uint64(len(evicted)), st.Evicted)
					assert.Equal(t, rec.evictedBytes(), st.EvictedBytes)
					assert.Empty(t, rec.expirations())
					bdCheck(t, c, true)
					reduced := shownOf(c)
					assert.Len(t, reduced.docs, n-len(evicted))
					for _, id := range evicted {
						assert.Contains(t, full.docs, id)
						assert.NotContains(t, reduced.docs, id)
					}
					for id, js := range reduced.docs {
						assert.Equal(t, full.docs[id], js, "a document kept by Open changed")
					}
					if policy == ttlstore.EvictSoonestExpiry {
						// The evicted are those that expire soonest.
						for kept := range reduced.docs {
							for _, id := range evicted {
								assert.False(t, expiry[id].After(expiry[kept]), "%s (expiring %v) evicted, %s (expiring %v) kept", id, expiry[id], kept, expiry[kept])
							}
						}
					}

					if restart == "close" {
						require.NoError(t, c.Close())
					} else {
						crashed := fsys.Crash(nil, false) // nothing unsynced survives
						c.Close()
						fsys = crashed
					}
					rec2 := newBDRecorder()
					c = bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, 0, 0, rec2), 0)
					defer c.Close()
					got := shownOf(c)
					assert.True(t, got.equal(reduced), "reopened with no bound to\n  %v\nwant what the bounded Open kept\n  %v", got, reduced)
					assert.Empty(t, rec2.evictions())
					bdCheck(t, c, false)
				})
			}
		}
	}
}

// bdParse stores js in a throwaway in-memory collection on clk and returns
// the stored document, to learn its weight.
func bdParse(t *testing.T, js string, clk clock.Clock) ttlstore.Document {
	t.Helper()
	c, _ := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), Clock: clk})
	d, err := c.Upsert([]byte(js))
	require.NoError(t, err)
	return d
}

func bdExpiry(d ttlstore.Document) time.Time {
	exp, ok := d.ExpiresAt()
	if !ok {
		return time.Unix(1<<62, 0)
	}
	return exp
}

// TestDurableBoundOpenSweepsFirst: when documents expired while the
// collection was closed, Open makes room by removing them first (reported
// to OnExpire, not OnEvict), and evicts only what is still over the bound.
func TestDurableBoundOpenSweepsFirst(t *testing.T) {
	for _, policy := range bdPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			clk := newBDClock()
			fsys := vfs.NewMemFS()
			c := bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
			for i := range 6 {
				upsert(t, c, fmt.Sprintf(`{"id":"short%d","ttl":10}`, i))
			}
			for i := range 10 {
				upsert(t, c, fmt.Sprintf(`{"id":"long%d","ttl":%d}`, i, 100+i))
			}
			require.NoError(t, c.Close())
			clk.Add(time.Minute) // the short ones expire while it is closed

			rec := newBDRecorder()
			c = bdOpen(t, fsys, bdOptions(clk, policy, 8, 0, rec), 0)
			assert.Len(t, rec.expirations(), 6, "the expired documents go first")
			evicted := rec.evictions()
			assert.Len(t, evicted, 2, "then only the surplus is evicted")
			for _, id := range evicted {
				assert.True(t, strings.HasPrefix(id, "long"), id)
			}
			if policy == ttlstore.EvictSoonestExpiry {
				assert.ElementsMatch(t, []string{"long0", "long1"}, evicted, "not the soonest to expire")
			}
			st := c.Stats()
			assert.Equal(t, 8, st.Live)
			assert.Equal(t, uint64(2), st.Evicted)
			assert.Equal(t, uint64(6), st.Swept)
			bdCheck(t, c, true)
			want := shownOf(c)
			require.NoError(t, c.Close())

			c = bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
			defer c.Close()
			got := shownOf(c)
			assert.True(t, got.equal(want), "the evictions at Open were not logged: reopened to\n  %v\nwant\n  %v", got, want)
		})
	}
}

// TestDurableBoundOpenNoEviction: under NoEviction, a collection opened
// with a bound lower than what its directory holds loses nothing; writes
// that need room are refused with ErrFull until deletes bring it under the
// bound, while overwrites that need no more room go in.
func TestDurableBoundOpenNoEviction(t *testing.T) {
	const n, bound = 20, 12
	clk := newBDClock()
	fsys, full, _ := bdFill(t, clk, n)
	rec := newBDRecorder()
	c := bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, bound, 0, rec), 0)
	assert.True(t, shownOf(c).equal(full), "NoEviction: Open removed something")
	st := c.Stats()
	assert.Equal(t, n, st.Live)
	assert.Equal(t, bound, st.MaxDocuments)
	assert.Zero(t, st.Evicted)
	bdCheck(t, c, false)

	// An overwrite with a document no heavier needs no room.
	_, err := c.Upsert([]byte(`{"id":"d001"}`))
	require.NoError(t, err, "an overwrite that needs no room was refused")
	refused := uint64(0)
	for i := range n - bound + 1 {
		_, err := c.Create([]byte(`{"id":"new"}`))
		require.ErrorIs(t, err, ttlstore.ErrFull, "with %d documents and MaxDocuments %d", n-i, bound)
		refused++
		assert.False(t, live(t, c, "new"))
		require.NoError(t, c.Delete(fmt.Sprintf("d%03d", 2+i)))
	}
	assert.Equal(t, refused, c.Stats().Refused)
	_, err = c.Create([]byte(`{"id":"new"}`))
	require.NoError(t, err, "room was made by deletes")
	_, err = c.Create([]byte(`{"id":"new2"}`))
	require.ErrorIs(t, err, ttlstore.ErrFull)
	assert.Empty(t, rec.evictions())
	want := shownOf(c)
	assert.Len(t, want.docs, bound)
	require.NoError(t, c.Close())

	c = bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
	defer c.Close()
	got := shownOf(c)
	assert.True(t, got.equal(want), "reopened to\n  %v\nwant\n  %v", got, want)
	bdCheck(t, c, false)
}

// bdFailWrite returns a MemFS hook that fails the n-th write (counting
// from 1) with err, and lets everything else through: a Write, or an
// Append through the log's mapping that extends the file, which on a
// MemFS without preallocation is every Append.
func bdFailWrite(n int, err error) func(vfs.Op, string) error {
	var mu sync.Mutex
	writes := 0
	return func(op vfs.Op, _ string) error {
		if op != vfs.OpWrite && op != vfs.OpAllocate {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		writes++
		if writes == n {
			return err
		}
		return nil
	}
}

// TestDurableBoundEvictionLogFails: when the log cannot take an eviction's
// delete record (a full disk, a failed write), the write that needed the
// room fails with ErrIO and nothing is lost: the would-be victim is still
// stored and readable, nothing is reported to OnEvict, Stats agree with the
// contents; and after a restart the directory holds exactly that.
func TestDurableBoundEvictionLogFails(t *testing.T) {
	injected := errors.New("injected EIO")
	for _, fault := range []string{"disk full", "failed write"} {
		for _, policy := range bdPolicies {
			for _, restart := range []string{"kill", "power loss"} {
				t.Run(fault+"/"+policy.String()+"/"+restart, func(t *testing.T) {
					const bound = 6
					clk := newBDClock()
					fsys := vfs.NewMemFS()
					rec := newBDRecorder()
					c := bdOpen(t, fsys, bdOptions(clk, policy, bound, 0, rec), 0)
					for i := range bound {
						upsert(t, c, bdDoc(i))
					}
					before := shownOf(c)
					stBefore := c.Stats()
					switch fault {
					case "disk full":
						fsys.SetCapacity(fsysUsed(t, fsys) + 1) // not room for a delete record
					default:
						fsys.SetHook(bdFailWrite(1, injected))
					}
					_, err := c.Upsert([]byte(`{"id":"new","v":1}`))
					require.ErrorIs(t, err, ttlstore.ErrIO)
					if fault == "disk full" {
						require.ErrorIs(t, err, syscall.ENOSPC)
					} else {
						require.ErrorIs(t, err, injected)
					}
					assert.Empty(t, rec.evictions(), "an eviction that was not logged was reported")
					assert.False(t, live(t, c, "new"))
					for id := range before.docs {
						assert.True(t, live(t, c, id), "%s was lost: its eviction was never logged", id)
					}
					assert.True(t, shownOf(c).equal(before), "the failed write changed the contents")
					st := c.Stats()
					assert.Equal(t, stBefore.Live, st.Live)
					assert.Equal(t, stBefore.Bytes, st.Bytes)
					assert.Zero(t, st.Evicted)
					assert.Zero(t, st.EvictedBytes)
					bdCheck(t, c, true)

					// The log has failed for good: SetLimits cannot log
					// evictions either, and removes nothing.
					assert.ErrorIs(t, c.SetLimits(bound/2, 0), ttlstore.ErrIO)
					assert.True(t, shownOf(c).equal(before), "SetLimits removed what it could not log")
					assert.Empty(t, rec.evictions())
					require.NoError(t, c.CheckInvariants())
					assert.ErrorIs(t, c.Close(), ttlstore.ErrIO)

					var after *vfs.MemFS
					if restart == "kill" {
						after = fsys.Kill()
					} else {
						after = fsys.Crash(rand.New(rand.NewPCG(3, 4)), true)
					}
					after.SetCapacity(0)
					c = bdOpen(t, after, bdOptions(clk, policy, bound, 0, nil), 0)
					defer c.Close()
					got := shownOf(c)
					assert.True(t, got.equal(before), "reopened to\n  %v\nwant\n  %v", got, before)
					bdCheck(t, c, true)
					// The reopened collection evicts normally.
					upsert(t, c, `{"id":"new","v":2}`)
					assert.Equal(t, uint64(1), c.Stats().Evicted)
					bdCheck(t, c, true)
				})
			}
		}
	}
}

// TestDurableBoundSecondEvictionFails: a write that needs two evictions
// (a heavy document under MaxBytes) and whose log fails at the second keeps
// the first, which was logged and reported, and fails with ErrIO; after a
// kill the directory holds what memory held.
func TestDurableBoundSecondEvictionFails(t *testing.T) {
	for _, policy := range bdPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			clk := newBDClock()
			fsys := vfs.NewMemFS()
			rec := newBDRecorder()
			small := func(i int) string { return fmt.Sprintf(`{"id":"s%d","ttl":%d}`, i, 100+i) }
			// The bound holds exactly six small documents.
			probe := bdParse(t, small(0), clk)
			c := bdOpen(t, fsys, bdOptions(clk, policy, 0, 6*probe.Weight(), rec), 0)
			for i := range 6 {
				upsert(t, c, small(i))
			}
			require.Empty(t, rec.evictions())
			heavy := fmt.Sprintf(`{"id":"heavy","ttl":50,"pad":"%s"}`, strings.Repeat("h", int(probe.Weight())))
			require.Greater(t, bdParse(t, heavy, clk).Weight(), probe.Weight(), "the heavy document needs two evictions")
			injected := errors.New("injected EIO")
			fsys.SetHook(bdFailWrite(2, injected))
			_, err := c.Upsert([]byte(heavy))
			require.ErrorIs(t, err, ttlstore.ErrIO)
			require.ErrorIs(t, err, injected)
			evicted := rec.evictions()
			require.Len(t, evicted, 1, "the first eviction was logged: it stands, reported")
			assert.False(t, live(t, c, evicted[0]))
			assert.False(t, live(t, c, "heavy"))
			st := c.Stats()
			assert.Equal(t, 5, st.Live)
			assert.Equal(t, uint64(1), st.Evicted)
			assert.Equal(t, rec.evictedBytes(), st.EvictedBytes)
			bdCheck(t, c, true)
			want := shownOf(c)
			c.Close()

			after := fsys.Kill()
			c = bdOpen(t, after, bdOptions(clk, policy, 0, 6*probe.Weight(), nil), 0)
			defer c.Close()
			got := shownOf(c)
			assert.True(t, got.equal(want), "reopened to\n  %v\nwant\n  %v", got, want)
			bdCheck(t, c, true)
		})
	}
}

// TestDurableBoundOpenEvictionLogFails: Open with a lower bound on a full
// disk fails with ErrIO, reports nothing, releases the directory and leaves
// it as it was: it reopens, once there is room, to every document.
func TestDurableBoundOpenEvictionLogFails(t *testing.T) {
	for _, policy := range bdPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			clk := newBDClock()
			fsys, full, _ := bdFill(t, clk, 20)
			fsys.SetCapacity(fsysUsed(t, fsys) + 1)
			rec := newBDRecorder()
			_, err := ttlstore.OpenFS(fsys, "db", bdOptions(clk, policy, 10, 0, rec), 1<<30, false)
			require.ErrorIs(t, err, ttlstore.ErrIO)
			require.ErrorIs(t, err, syscall.ENOSPC)
			assert.Empty(t, rec.evictions(), "an eviction that was not logged was reported")
			fsys.SetCapacity(0)
			c := bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
			defer c.Close()
			got := shownOf(c)
			assert.True(t, got.equal(full), "reopened to\n  %v\nwant\n  %v", got, full)
			// The log's mapping refuses a write whole when it cannot
			// grow: nothing torn (write(2) would write part of it).
			assert.Zero(t, c.Stats().TornBytes, "the refused write left bytes in the log")
			bdCheck(t, c, false)
		})
	}
}

// TestDurableBoundOpenEvictionLogFillsDisk: Open with a lower bound on a
// disk with room for only some of the evictions' records fails with ErrIO;
// what it reported to OnEvict is what it logged: after a restart with no
// bound, exactly those documents are gone.
func TestDurableBoundOpenEvictionLogFillsDisk(t *testing.T) {
	for _, policy := range bdPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			clk := newBDClock()
			// Learn the size of one eviction's record (every id is as
			// long): evict one.
			fsys, _, _ := bdFill(t, clk, 20)
			used := fsysUsed(t, fsys)
			c := bdOpen(t, fsys, bdOptions(clk, policy, 19, 0, nil), 0)
			require.NoError(t, c.Close())
			record := fsysUsed(t, fsys) - used
			require.Positive(t, record)
			// Start again, with room for three such records and a half.
			fsys, full, _ := bdFill(t, clk, 20)
			fsys.SetCapacity(fsysUsed(t, fsys) + 3*record + record/2)
			rec := newBDRecorder()
			_, err := ttlstore.OpenFS(fsys, "db", bdOptions(clk, policy, 10, 0, rec), 1<<30, false)
			require.ErrorIs(t, err, ttlstore.ErrIO)
			require.ErrorIs(t, err, syscall.ENOSPC)
			evicted := rec.evictions()
			assert.Len(t, evicted, 3, "the disk had room for three evictions")

			fsys = fsys.Kill()
			fsys.SetCapacity(0)
			c = bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
			defer c.Close()
			got := shownOf(c)
			want := shown{docs: maps.Clone(full.docs), def: full.def}
			for _, id := range evicted {
				delete(want.docs, id)
			}
			assert.True(t, got.equal(want), "reopened to\n  %v\nwant all but what was reported evicted %v\n  %v", got, evicted, want)
			bdCheck(t, c, false)
		})
	}
}

// TestDurableBoundSetLimitsSynced: under SyncAlways, the evictions
// SetLimits makes are durable when it returns: a power loss right after
// does not bring them back.
func TestDurableBoundSetLimitsSynced(t *testing.T) {
	for _, policy := range bdPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			clk := newBDClock()
			fsys, _, _ := bdFill(t, clk, 20)
			rec := newBDRecorder()
			c := bdOpen(t, fsys, bdOptions(clk, policy, 0, 0, rec), 0)
			require.NoError(t, c.SetLimits(7, 0))
			evicted := rec.evictions()
			require.Len(t, evicted, 13)
			bdCheck(t, c, true)
			want := shownOf(c)
			crashed := fsys.Crash(nil, false) // nothing unsynced survives
			c.Close()

			c = bdOpen(t, crashed, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
			defer c.Close()
			got := shownOf(c)
			assert.True(t, got.equal(want), "reopened to\n  %v\nwant\n  %v", got, want)
		})
	}
}

// TestDurableBoundRefusedWriteEvictsNothing: under EvictSoonestExpiry, a
// write that evicting every document that can expire would not make room
// for is refused with ErrFull before it evicts anything (issue 23): it
// changes nothing, on disk either, so a power loss right after brings back
// every document.
func TestDurableBoundRefusedWriteEvictsNothing(t *testing.T) {
	clk := newBDClock()
	fsys := vfs.NewMemFS()
	rec := newBDRecorder()
	small := func(id string, ttl int) string { return fmt.Sprintf(`{"id":%q,"ttl":%d}`, id, ttl) }
	w := bdParse(t, small("e1", 100), clk).Weight()
	c := bdOpen(t, fsys, bdOptions(clk, ttlstore.EvictSoonestExpiry, 0, 4*w, rec), 0)
	upsert(t, c, small("e1", 100))
	upsert(t, c, small("e2", 200))
	upsert(t, c, small("f1", -1))
	upsert(t, c, small("f2", -1))
	// Heavier than the two expiring documents together, lighter than the
	// bound: evicting both cannot make room.
	heavy := fmt.Sprintf(`{"id":"heavy","pad":"%s"}`, strings.Repeat("h", int(2*w)))
	hw := bdParse(t, heavy, clk).Weight()
	require.Greater(t, hw, 2*w)
	require.LessOrEqual(t, hw, 4*w)
	want := shownOf(c)
	_, err := c.Upsert([]byte(heavy))
	require.ErrorIs(t, err, ttlstore.ErrFull)
	assert.Empty(t, rec.evictions(), "the expiring documents were evicted, in vain")
	assert.Equal(t, []string{"e1", "e2", "f1", "f2"}, ids(c))
	assert.True(t, shownOf(c).equal(want), "a refused write changed the collection")
	crashed := fsys.Crash(nil, false) // nothing unsynced survives
	c.Close()

	c = bdOpen(t, crashed, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
	defer c.Close()
	got := shownOf(c)
	assert.True(t, got.equal(want), "a power loss after a refused write: reopened to\n  %v\nwant\n  %v", got, want)
}

// TestDurableBoundReadOrLoad: documents ReadOrLoad stores in a full
// durable collection evict others as writes do, and the evictions are
// logged: a restart shows what the collection held.
func TestDurableBoundReadOrLoad(t *testing.T) {
	for _, policy := range bdPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			clk := newBDClock()
			fsys := vfs.NewMemFS()
			rec := newBDRecorder()
			c := bdOpen(t, fsys, bdOptions(clk, policy, 5, 0, rec), 0)
			load := func(_ context.Context, id string) (any, error) {
				return []byte(`{"id":"` + id + `","loaded":true}`), nil
			}
			for i := range 12 {
				d, err := c.ReadOrLoad(context.Background(), "k"+strconv.Itoa(i), load)
				require.NoError(t, err)
				assert.Equal(t, "k"+strconv.Itoa(i), d.ID())
			}
			assert.Len(t, rec.evictions(), 7)
			bdCheck(t, c, true)
			want := shownOf(c)
			require.NoError(t, c.Close())

			c = bdOpen(t, fsys, bdOptions(clk, ttlstore.NoEviction, 0, 0, nil), 0)
			defer c.Close()
			got := shownOf(c)
			assert.True(t, got.equal(want), "reopened to\n  %v\nwant\n  %v", got, want)
		})
	}
}

// TestDurableBoundBytesAfterReopen: the weight of what a collection holds
// is recomputed when it is loaded to exactly what it was when it closed,
// whatever the documents' JSON (escaped ids, members the store strips,
// white space), so that the bound holds across restarts and a reopen
// within the bound evicts nothing.
func TestDurableBoundBytesAfterReopen(t *testing.T) {
	docs := []string{
		`{"id":"plain","v":1}`,
		`{"id":"\u0065scaped","v":"\u00e9"}`,
		`{ "id" : "spaced" , "v" : [ 1 , 2 , 3 ] }`,
		`{"_ts":12345,"id":"stamped","_etag":"\"0000\"","v":1}`,
		`{"id":"big","pad":"` + strings.Repeat("z", 3000) + `"}`,
		`{"id":"forever","ttl":-1}`,
		`{"id":"short","ttl":300}`,
	}
	for _, b := range bdBounds {
		for _, policy := range bdPolicies {
			t.Run(b.name+"/"+policy.String(), func(t *testing.T) {
				clk := newBDClock()
				fsys := vfs.NewMemFS()
				maxBytes := b.maxBytes
				if maxBytes > 0 {
					maxBytes += 4000 // room for "big"
				}
				opts := bdOptions(clk, policy, b.maxDocs, maxBytes, nil)
				c := bdOpen(t, fsys, opts, 0)
				for i := range 30 {
					upsert(t, c, docs[i%len(docs)])
					upsert(t, c, bdDoc(i))
				}
				bdCheck(t, c, true)
				st := c.Stats()
				require.Positive(t, st.Evicted)
				want := shownOf(c)
				require.NoError(t, c.Close())

				for _, reopen := range []string{"same bound", "no bound", "after compaction"} {
					o := opts
					if reopen == "no bound" {
						o = bdOptions(clk, policy, 0, 0, nil)
					}
					c := bdOpen(t, fsys, o, 0)
					got := c.Stats()
					assert.Equal(t, st.Bytes, got.Bytes, "%s: Stats().Bytes changed across a restart", reopen)
					assert.Equal(t, st.Live, got.Live, reopen)
					assert.Zero(t, got.Evicted, "%s: Open evicted within the bound", reopen)
					assert.True(t, shownOf(c).equal(want), reopen)
					bdCheck(t, c, true)
					if reopen == "no bound" {
						require.NoError(t, c.Compact())
					}
					require.NoError(t, c.Close())
				}
			})
		}
	}
}

// TestDurableBoundCompaction: compactions, asked for and in the
// background, of a log full of evictions keep exactly the documents the
// collection holds: after a restart or a power loss, the same contents,
// the evicted still gone.
func TestDurableBoundCompaction(t *testing.T) {
	for _, b := range bdBounds {
		for _, policy := range bdPolicies {
			for _, restart := range []string{"close", "power loss"} {
				t.Run(b.name+"/"+policy.String()+"/"+restart, func(t *testing.T) {
					clk := newBDClock()
					fsys := vfs.NewMemFS()
					rec := newBDRecorder()
					opts := bdOptions(clk, policy, b.maxDocs, b.maxBytes, rec)
					c := bdOpen(t, fsys, opts, 2048) // the background compactor runs too
					written := map[string]bool{}
					for i := range 60 {
						upsert(t, c, bdDoc(i))
						written[fmt.Sprintf("d%03d", i)] = true
						if i == 30 {
							require.NoError(t, c.Compact())
						}
						if i%7 == 0 {
							live(t, c, fmt.Sprintf("d%03d", i/2))
						}
					}
					require.NoError(t, c.Compact())
					// More writes after the snapshot, with evictions in
					// the new log.
					for i := 60; i < 70; i++ {
						upsert(t, c, bdDoc(i))
						written[fmt.Sprintf("d%03d", i)] = true
					}
					bdCheck(t, c, true)
					evicted := rec.evictions()
					require.NotEmpty(t, evicted)
					want := shownOf(c)
					assert.Len(t, want.docs, len(written)-len(evicted))
					names, err := fsys.List("db")
					require.NoError(t, err)
					assert.Contains(t, strings.Join(names, " "), ".snap", "no snapshot was written")

					if restart == "close" {
						require.NoError(t, c.Close())
					} else {
						crashed := fsys.Crash(nil, false) // nothing unsynced survives
						c.Close()
						fsys = crashed
					}
					for _, o := range []ttlstore.Options{opts, bdOptions(clk, policy, 0, 0, nil)} {
						rec2 := newBDRecorder()
						o.OnEvict = rec2.onEvict
						c := bdOpen(t, fsys, o, 2048)
						got := shownOf(c)
						assert.True(t, got.equal(want), "reopened to\n  %v\nwant\n  %v", got, want)
						for _, id := range evicted {
							assert.NotContains(t, got.docs, id, "an evicted document came back")
						}
						assert.Empty(t, rec2.evictions())
						bdCheck(t, c, true)
						require.NoError(t, c.Close())
					}
				})
			}
		}
	}
}

// TestDurableBoundConcurrentWriters: writers racing past the bound of a
// durable collection (with readers, and the background compactor) never
// take it past the bound; every document written is either stored or was
// reported to OnEvict, once; and a restart, or a power loss under
// SyncAlways, brings back exactly what it held.
func TestDurableBoundConcurrentWriters(t *testing.T) {
	writers, each := 8, 60
	if raceEnabled {
		each = 25
	}
	for _, policy := range bdPolicies {
		for _, restart := range []string{"close", "power loss"} {
			t.Run(policy.String()+"/"+restart, func(t *testing.T) {
				clk := newBDClock()
				fsys := vfs.NewMemFS()
				rec := newBDRecorder()
				opts := bdOptions(clk, policy, 40, 6000, rec)
				c := bdOpen(t, fsys, opts, 4096)
				var wg sync.WaitGroup
				errs := make(chan error, writers)
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range each {
							doc := fmt.Sprintf(`{"id":"w%d-%d","ttl":%d,"pad":"%s"}`, w, i, 100+(w*each+i)%500, strings.Repeat("p", (w+i)%50))
							if _, err := c.Upsert([]byte(doc)); err != nil {
								errs <- err
								return
							}
							c.Read(fmt.Sprintf("w%d-%d", (w+1)%writers, i/2))
						}
						errs <- nil
					}()
				}
				wg.Wait()
				for range writers {
					require.NoError(t, <-errs)
				}
				bdCheck(t, c, true)
				evicted := rec.evictions()
				want := shownOf(c)
				assert.Len(t, want.docs, writers*each-len(evicted))
				seen := map[string]bool{}
				for _, id := range evicted {
					assert.False(t, seen[id], "%s reported to OnEvict twice", id)
					seen[id] = true
					assert.NotContains(t, want.docs, id)
				}
				assert.Equal(t, uint64(len(evicted)), c.Stats().Evicted)

				if restart == "close" {
					require.NoError(t, c.Close())
				} else {
					crashed := fsys.Crash(nil, false) // nothing unsynced survives
					c.Close()
					fsys = crashed
				}
				c = bdOpen(t, fsys, bdOptions(clk, policy, 40, 6000, nil), 0)
				defer c.Close()
				got := shownOf(c)
				assert.True(t, got.equal(want), "reopened to\n  %v\nwant\n  %v", got, want)
				assert.Zero(t, c.Stats().Evicted)
				bdCheck(t, c, true)
			})
		}
	}
}
