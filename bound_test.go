package ttlstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ttlstore/ttlstore"
)

// The black-box tests of the bounded mode: Options.MaxDocuments, MaxBytes,
// Eviction and OnEvict, SetLimits, Document.Weight, and the counters Stats
// gained with them.

var bndPolicies = []ttlstore.EvictionPolicy{ttlstore.NoEviction, ttlstore.EvictColdest, ttlstore.EvictSoonestExpiry}

// bndDoc is a document with the given id, a payload of pad bytes and ttl
// (a JSON member such as `,"ttl":5`, or "").
func bndDoc(id string, pad int, ttl string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"p":%q%s}`, id, strings.Repeat("x", pad), ttl)
}

// bndState is what a refused write must leave unchanged: every live
// document as stored (stamp included), and the counts of the contents.
type bndState struct {
	Docs  map[string]string
	Core  ttlstore.Stats
	Bytes int64
}

func bndStateOf(c *ttlstore.Collection) bndState {
	st := c.Stats()
	s := bndState{Docs: make(map[string]string), Core: ttlstore.CoreStats(st), Bytes: st.Bytes}
	for d := range c.All() {
		s.Docs[d.ID()] = d.String()
	}
	return s
}

// bndWeight returns the weight of doc as stored in a collection of its own.
func bndWeight(t testing.TB, doc []byte) int64 {
	t.Helper()
	c, err := ttlstore.New(ttlstore.Options{SweepInterval: ttlstore.ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	d, err := c.Upsert(doc)
	require.NoError(t, err)
	return d.Weight()
}

// bndPadFor returns the least payload that makes bndDoc(id, pad, "") weigh
// at least weight (weights step with the allocator's size classes).
func bndPadFor(t testing.TB, id string, weight int64) int {
	t.Helper()
	c, err := ttlstore.New(ttlstore.Options{SweepInterval: ttlstore.ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	for pad := 0; pad < int(weight); pad++ {
		d, err := c.Upsert(bndDoc(id, pad, ""))
		require.NoError(t, err)
		if d.Weight() >= weight {
			return pad
		}
	}
	t.Fatalf("no document %q weighs %d or more", id, weight)
	return 0
}

// bndEvictions records what OnEvict was called with.
type bndEvictions struct {
	mu     sync.Mutex
	docs   []ttlstore.Document
	weight uint64
}

func (e *bndEvictions) add(d ttlstore.Document) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.docs = append(e.docs, d)
	e.weight += uint64(d.Weight())
}

func (e *bndEvictions) ids() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, d := range e.docs {
		out = append(out, d.ID())
	}
	return out
}

func (e *bndEvictions) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.docs)
}

// bndWait waits for ch to close; the deadline only guards against a hang
// (a deadlock is what it catches).
func bndWait(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s (deadlock?)", what)
	}
}

// bndGoroutineID is the id of the calling goroutine, from its stack header.
func bndGoroutineID() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	return string(bytes.Fields(b)[1])
}

// TestBoundNoEvictionAtMaxDocuments fills a NoEviction collection to
// MaxDocuments: every write up to the bound succeeds (one budget for the
// whole collection, whatever the shards), the next new document is refused
// with ErrFull and changes nothing, overwrites still go in, and a Delete
// makes room.
func TestBoundNoEvictionAtMaxDocuments(t *testing.T) {
	for _, n := range []int{1, 7, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c, _ := newCollection(t, ttlstore.Options{MaxDocuments: n})
			for i := range n {
				var err error
				if i%2 == 0 {
					_, err = c.Create(bndDoc(fmt.Sprintf("d%03d", i), 10, ""))
				} else {
					_, err = c.Upsert(bndDoc(fmt.Sprintf("d%03d", i), 10, ""))
				}
				require.NoError(t, err, "write %d of %d", i+1, n)
			}
			require.Equal(t, n, c.Len())
			before := bndStateOf(c)

			writes := []struct {
				name  string
				write func() (ttlstore.Document, error)
			}{
				{"Create", func() (ttlstore.Document, error) { return c.Create(bndDoc("new1", 10, "")) }},
				{"Upsert", func() (ttlstore.Document, error) { return c.Upsert(bndDoc("new2", 0, "")) }},
				{"ReadOrLoad", func() (ttlstore.Document, error) {
					return c.ReadOrLoad(context.Background(), "new3", func(context.Context, string) (any, error) {
						return bndDoc("new3", 1, ""), nil
					})
				}},
			}
			for i, w := range writes {
				_, err := w.write()
				require.ErrorIs(t, err, ttlstore.ErrFull, w.name)
				assert.Contains(t, err.Error(), fmt.Sprintf("MaxDocuments is %d and %d documents are stored", n, n), w.name)
				assert.Equal(t, before, bndStateOf(c), "%s refused with ErrFull changed the collection", w.name)
				assert.Equal(t, uint64(i+1), c.Stats().Refused, w.name)
				assert.Zero(t, c.Stats().Evicted)
			}
			// A Replace of an absent id is not found, not full.
			_, err := c.Replace(bndDoc("new4", 0, ""))
			require.ErrorIs(t, err, ttlstore.ErrNotFound)
			require.NotErrorIs(t, err, ttlstore.ErrFull)
			assert.Equal(t, uint64(len(writes)), c.Stats().Refused)

			// Overwrites need no room.
			_, err = c.Upsert(bndDoc("d000", 10, `,"v":1`))
			require.NoError(t, err, "Upsert of a stored id at the bound")
			_, err = c.Replace(bndDoc(fmt.Sprintf("d%03d", n-1), 500, ""))
			require.NoError(t, err, "Replace of a stored id at the bound (no MaxBytes)")
			_, err = c.Touch("d000")
			require.NoError(t, err)
			assert.Equal(t, n, c.Len())

			// A Delete makes room for one.
			require.NoError(t, c.Delete("d000"))
			_, err = c.Create(bndDoc("new1", 10, ""))
			require.NoError(t, err, "Create after a Delete")
			_, err = c.Create(bndDoc("new5", 10, ""))
			require.ErrorIs(t, err, ttlstore.ErrFull)
			assert.Equal(t, n, c.Len())
			assert.Equal(t, uint64(len(writes)+1), c.Stats().Refused)
			assert.Zero(t, c.Stats().Evicted)
		})
	}
}

// TestBoundNoEvictionAtMaxBytes fills a NoEviction collection to MaxBytes:
// a new document is refused, an overwrite by a heavier document is refused
// and changes nothing, an overwrite by a lighter one goes in and frees the
// difference.
func TestBoundNoEvictionAtMaxBytes(t *testing.T) {
	const k = 6
	normal := func(id string) []byte { return bndDoc(id, 40, "") }
	heavy := func(id string) []byte { return bndDoc(id, 400, "") }
	light := func(id string) []byte { return bndDoc(id, 0, "") }
	w, wh, wl := bndWeight(t, normal("d0")), bndWeight(t, heavy("d0")), bndWeight(t, light("d0"))
	require.Less(t, wl, w)
	require.Less(t, w, wh)

	c, _ := newCollection(t, ttlstore.Options{MaxBytes: k * w})
	for i := range k {
		_, err := c.Create(normal(fmt.Sprint("d", i)))
		require.NoError(t, err)
	}
	require.Equal(t, k*w, c.Stats().Bytes)
	before := bndStateOf(c)

	_, err := c.Create(light("new"))
	require.ErrorIs(t, err, ttlstore.ErrFull)
	assert.Contains(t, err.Error(), fmt.Sprintf("MaxBytes is %d, %d are used and the write needs %d more", k*w, k*w, wl))
	assert.Equal(t, before, bndStateOf(c))

	for _, write := range []func(any) (ttlstore.Document, error){c.Upsert, c.Replace} {
		_, err = write(heavy("d1"))
		require.ErrorIs(t, err, ttlstore.ErrFull, "overwrite by a heavier document")
		assert.Contains(t, err.Error(), fmt.Sprintf("the write needs %d more", wh-w))
		assert.Equal(t, before, bndStateOf(c), "a refused overwrite changed the collection")
	}
	assert.Equal(t, uint64(3), c.Stats().Refused)

	d, err := c.Replace(light("d1"))
	require.NoError(t, err, "overwrite by a lighter document")
	assert.Equal(t, wl, d.Weight())
	assert.Equal(t, (k-1)*w+wl, c.Stats().Bytes)
	// The room freed takes the same document back, but not a heavier one.
	_, err = c.Upsert(normal("d1"))
	require.NoError(t, err)
	_, err = c.Upsert(heavy("d2"))
	require.ErrorIs(t, err, ttlstore.ErrFull)
	require.NoError(t, c.Delete("d3"))
	_, err = c.Create(normal("new"))
	require.NoError(t, err, "Create after a Delete")
	assert.Equal(t, k*w, c.Stats().Bytes)
	assert.Zero(t, c.Stats().Evicted)
}

// TestBoundExpiredGoFirst fills a collection to its bound with documents
// that expire, moves the clock past their expiry without sweeping, and
// writes new documents: under every policy they go in, by sweeping the
// expired ones (reported to OnExpire, counted in Swept), evicting nothing.
func TestBoundExpiredGoFirst(t *testing.T) {
	const n = 8
	w := bndWeight(t, bndDoc("old0", 20, ""))
	bounds := []struct {
		name string
		opts ttlstore.Options
	}{
		{"MaxDocuments", ttlstore.Options{MaxDocuments: n}},
		{"MaxBytes", ttlstore.Options{MaxBytes: n * w}},
	}
	for _, b := range bounds {
		for _, policy := range bndPolicies {
			t.Run(b.name+"/"+policy.String(), func(t *testing.T) {
				var expired []string
				var evicted bndEvictions
				opts := b.opts
				opts.DefaultTTL = ttlstore.TTL(10)
				opts.Eviction = policy
				opts.OnExpire = func(d ttlstore.Document) { expired = append(expired, d.ID()) }
				opts.OnEvict = evicted.add
				c, clk := newCollection(t, opts)
				var want []string
				for i := range n {
					id := fmt.Sprint("old", i)
					want = append(want, id)
					_, err := c.Create(bndDoc(id, 20, ""))
					require.NoError(t, err)
				}
				_, err := c.Create(bndDoc("early", 20, ""))
				if policy == ttlstore.NoEviction {
					require.ErrorIs(t, err, ttlstore.ErrFull, "the bound is reached")
				} else {
					require.NoError(t, err)
					require.NoError(t, c.Delete("early"))
					_, err = c.Create(bndDoc(evicted.ids()[0], 20, "")) // back to the n old ones
					require.NoError(t, err)
				}
				evictedBefore := c.Stats().Evicted

				clk.Add(10 * time.Second)
				require.Equal(t, ttlstore.Stats{Expired: n}, ttlstore.CoreStats(c.Stats()), "expired, not swept")
				for i := range n {
					_, err := c.Create(bndDoc(fmt.Sprint("new", i), 20, ""))
					require.NoError(t, err, "write %d over expired documents", i)
				}
				slices.Sort(expired)
				assert.Equal(t, want, expired, "OnExpire")
				st := c.Stats()
				assert.Equal(t, evictedBefore, st.Evicted, "a live document was evicted while expired ones remained")
				assert.Equal(t, uint64(n), st.Swept)
				assert.Equal(t, n, st.Live)
				assert.Zero(t, st.Expired)
			})
		}
	}
}

// TestBoundExpiredBeforeLive fills a collection with documents of which
// some expire: writes at the bound take the expired ones' room first, and
// only then does a policy evict a live document (or refuse the write).
func TestBoundExpiredBeforeLive(t *testing.T) {
	for _, policy := range bndPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			var expired []string
			var evicted bndEvictions
			c, clk := newCollection(t, ttlstore.Options{
				DefaultTTL:   ttlstore.TTL(ttlstore.Never),
				MaxDocuments: 10,
				Eviction:     policy,
				OnExpire:     func(d ttlstore.Document) { expired = append(expired, d.ID()) },
				OnEvict:      evicted.add,
			})
			// Interleaved, so that the coldest and the oldest are
			// live documents.
			for i := range 5 {
				_, err := c.Create(bndDoc(fmt.Sprint("live", i), 10, `,"ttl":100`))
				require.NoError(t, err)
				_, err = c.Create(bndDoc(fmt.Sprint("exp", i), 10, `,"ttl":5`))
				require.NoError(t, err)
			}
			clk.Add(5 * time.Second)
			for i := range 5 {
				_, err := c.Create(bndDoc(fmt.Sprint("new", i), 10, `,"ttl":100`))
				require.NoError(t, err)
				assert.Zero(t, evicted.count(), "a live document was evicted while an expired one remained (after %d writes)", i+1)
				for j := range 5 {
					assert.True(t, live(t, c, fmt.Sprint("live", j)))
				}
			}
			assert.Len(t, expired, 5)
			_, err := c.Create(bndDoc("one-more", 10, `,"ttl":100`))
			if policy == ttlstore.NoEviction {
				require.ErrorIs(t, err, ttlstore.ErrFull)
				assert.Zero(t, c.Stats().Evicted)
			} else {
				require.NoError(t, err)
				assert.Equal(t, 1, evicted.count())
				assert.Equal(t, uint64(1), c.Stats().Evicted)
			}
			assert.Equal(t, 10, c.Len())
			assert.Equal(t, uint64(5), c.Stats().Swept)
		})
	}
}

// bndModel runs a random single-goroutine workload on c, a collection
// without TTL, and keeps a model of what it must hold: what was written
// last to each id, less what OnEvict reported. After every write it checks
// that the write is readable, that the collection is within its bounds, and
// that the collection holds exactly the model.
type bndModel struct {
	t       *testing.T
	c       *ttlstore.Collection
	docs    map[string]string // id -> _etag of what is stored
	evicted bndEvictions
}

func (m *bndModel) onEvict(d ttlstore.Document) {
	// The evicted document must be the one stored: the model has it.
	if etag, ok := m.docs[d.ID()]; !ok || etag != d.ETag() {
		m.t.Errorf("OnEvict(%s): the model holds %q for it", d, etag)
	}
	delete(m.docs, d.ID())
	m.evicted.add(d)
	// Without locks held: the collection may be called.
	if _, err := m.c.Read(d.ID()); !errors.Is(err, ttlstore.ErrNotFound) {
		m.t.Errorf("OnEvict(%s): Read returned %v", d, err)
	}
	_ = m.c.Len()
	_ = m.c.Stats()
}

func (m *bndModel) check(maxDocs int, maxBytes int64) {
	t := m.t
	t.Helper()
	st := m.c.Stats()
	require.LessOrEqual(t, st.Live+st.Expired, maxDocs, "over MaxDocuments")
	require.LessOrEqual(t, st.Bytes, maxBytes, "over MaxBytes")
	got := make(map[string]string)
	var weight int64
	for d := range m.c.All() {
		got[d.ID()] = d.ETag()
		weight += d.Weight()
	}
	require.Equal(t, m.docs, got, "the collection and the model")
	require.Equal(t, weight, st.Bytes, "Stats.Bytes and the weight of the documents")
	require.Equal(t, uint64(m.evicted.count()), st.Evicted, "OnEvict calls and Stats.Evicted")
	require.Equal(t, m.evicted.weight, st.EvictedBytes, "the weight passed to OnEvict and Stats.EvictedBytes")
}

// TestBoundEvictColdestWithinBound runs random writes, deletes and reads on
// an EvictColdest collection with both bounds: every write succeeds and is
// readable when it returns, the collection is never over either bound, and
// OnEvict is called exactly once for each document that goes without a
// Delete.
func TestBoundEvictColdestWithinBound(t *testing.T) {
	const maxDocs = 20
	maxBytes := 14 * bndWeight(t, bndDoc("k00", 60, ""))
	m := &bndModel{t: t, docs: make(map[string]string)}
	c, _ := newCollection(t, ttlstore.Options{MaxDocuments: maxDocs, MaxBytes: maxBytes, Eviction: ttlstore.EvictColdest, OnEvict: m.onEvict})
	m.c = c
	rng := rand.New(rand.NewPCG(1, 2))
	ops := 3000
	if raceEnabled {
		ops = 1000
	}
	for i := range ops {
		id := fmt.Sprintf("k%02d", rng.IntN(60))
		pad := rng.IntN(120)
		var d ttlstore.Document
		var err error
		write := true
		_, exists := m.docs[id]
		switch op := rng.IntN(8); {
		case op == 0:
			d, err = c.Create(bndDoc(id, pad, ""))
			if exists {
				require.ErrorIs(t, err, ttlstore.ErrConflict)
				continue
			}
		case op == 1 && exists:
			// Replace by a document no heavier: the id's own document
			// must not be the one evicted to make room for it (see
			// TestBoundReplaceHeavierAtBytesBound for heavier ones).
			d, err = c.Replace(bndDoc(id, 0, ""))
		case op == 2 && exists:
			d, err = c.Touch(id)
		case op == 3:
			err = c.Delete(id)
			write = false
			if !exists {
				require.ErrorIs(t, err, ttlstore.ErrNotFound)
				continue
			}
			delete(m.docs, id)
		case op <= 5:
			_, err = c.Read(id)
			write = false
			if !exists {
				require.ErrorIs(t, err, ttlstore.ErrNotFound)
				continue
			}
		default:
			d, err = c.Upsert(bndDoc(id, pad, ""))
		}
		require.NoError(t, err, "op %d on %s", i, id)
		if write {
			m.docs[id] = d.ETag()
			got, err := c.Read(id)
			require.NoError(t, err, "a write is readable when it returns")
			require.Equal(t, d.ETag(), got.ETag())
		}
		m.check(maxDocs, maxBytes)
	}
	require.NoError(t, c.CheckInvariants())
	assert.Positive(t, c.Stats().Evicted, "the workload never reached the bound")
	assert.Zero(t, c.Stats().Refused)
	t.Logf("%d evicted", c.Stats().Evicted)
}

// TestBoundOnEvictWithoutLocks calls the collection from OnEvict, for
// evictions made by writes and by SetLimits: it must not deadlock, and
// sees the document gone.
func TestBoundOnEvictWithoutLocks(t *testing.T) {
	for _, policy := range bndPolicies[1:] {
		t.Run(policy.String(), func(t *testing.T) {
			var c *ttlstore.Collection
			calls := 0
			onEvict := func(d ttlstore.Document) {
				calls++
				_, err := c.Read(d.ID())
				assert.ErrorIs(t, err, ttlstore.ErrNotFound, "an evicted document is readable")
				assert.LessOrEqual(t, c.Len(), 10)
				_ = c.Stats()
				for d := range c.All() {
					_, err := c.Read(d.ID())
					assert.NoError(t, err)
				}
			}
			c, _ = newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(100), MaxDocuments: 10, Eviction: policy, OnEvict: onEvict})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := range 30 {
					_, err := c.Upsert(bndDoc(fmt.Sprint("k", i), 5, ""))
					assert.NoError(t, err)
				}
				assert.NoError(t, c.SetLimits(3, 0))
			}()
			bndWait(t, done, "writes that evict")
			assert.Equal(t, 27, calls)
			assert.Equal(t, 3, c.Len())
		})
	}
}

// TestBoundEvictColdestKeepsHotSet reads 100 hot documents often, then
// writes a scan of cold ones many times the bound: W-TinyLFU keeps the hot
// documents, which LRU or FIFO would all lose.
func TestBoundEvictColdestKeepsHotSet(t *testing.T) {
	const (
		maxDocs  = 1000
		hot      = 100
		hotReads = 20
	)
	scan := 100_000
	if raceEnabled {
		scan = 5_000
	}
	cases := []struct {
		name       string
		readCold   bool // each cold document is read once after its write
		hotDuring  bool // the hot documents are read during the scan too
		wantHotMin int
	}{
		{"cold never read", false, false, 90},
		{"cold read once", true, false, 90},
		{"hot read during the scan", true, true, 95},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCollection(t, ttlstore.Options{MaxDocuments: maxDocs, Eviction: ttlstore.EvictColdest})
			for i := range hot {
				_, err := c.Create(bndDoc(fmt.Sprint("hot", i), 10, ""))
				require.NoError(t, err)
			}
			for range hotReads {
				for i := range hot {
					_, err := c.Read(fmt.Sprint("hot", i))
					require.NoError(t, err)
				}
			}
			require.Equal(t, uint64(hot*hotReads), c.Stats().Hits, "the hot documents were read")
			for i := range scan {
				id := fmt.Sprint("cold", i)
				_, err := c.Upsert(bndDoc(id, 10, ""))
				require.NoError(t, err)
				if tt.readCold {
					_, err := c.Read(id)
					require.NoError(t, err, "a write is readable when it returns")
				}
				if tt.hotDuring && i%10 == 0 {
					_, err := c.Read(fmt.Sprint("hot", i/10%hot))
					_ = err // a miss counts: the hot document was evicted
				}
			}
			kept := 0
			for i := range hot {
				if live(t, c, fmt.Sprint("hot", i)) {
					kept++
				}
			}
			st := c.Stats()
			assert.Equal(t, maxDocs, st.Live)
			assert.Equal(t, uint64(hot+scan-maxDocs), st.Evicted)
			assert.GreaterOrEqual(t, kept, tt.wantHotMin, "hot documents kept after a scan of %d", scan)
			t.Logf("%d of %d hot documents kept", kept, hot)
		})
	}
}

// TestBoundEvictSoonestExpiryOrder checks, on a small deterministic case,
// that EvictSoonestExpiry evicts the document that expires soonest, by _ts
// plus ttl; that documents that cannot expire are never evicted; and that
// when only they are left, the write is refused.
func TestBoundEvictSoonestExpiryOrder(t *testing.T) {
	var evicted bndEvictions
	c, clk := newCollection(t, ttlstore.Options{
		DefaultTTL:   ttlstore.TTL(ttlstore.Never),
		MaxDocuments: 5,
		Eviction:     ttlstore.EvictSoonestExpiry,
		OnEvict:      evicted.add,
	})
	write := func(id, ttl string) {
		t.Helper()
		_, err := c.Create(bndDoc(id, 5, ttl))
		require.NoError(t, err, id)
		clk.Add(time.Second)
	}
	// _ts are 0, 1, 2, ... seconds after the start.
	write("never1", `,"ttl":-1`) // cannot expire
	write("a", `,"ttl":40`)      // expires at 41
	write("b", `,"ttl":10`)      // 12
	write("never2", "")          // DefaultTTL Never, no ttl: cannot expire
	write("c", `,"ttl":20`)      // 24
	require.Zero(t, evicted.count())
	write("d", `,"ttl":100`) // 105: evicts b (12)
	write("e", `,"ttl":3`)   // 9: evicts c (24)
	write("f", `,"ttl":50`)  // 57: evicts e (9)
	write("g", `,"ttl":30`)  // 38: evicts a (41)
	write("h", `,"ttl":-1`)  // evicts g (38)
	write("i", `,"ttl":-1`)  // evicts f (57)
	write("j", `,"ttl":-1`)  // evicts d (105)
	assert.Equal(t, []string{"b", "c", "e", "a", "g", "f", "d"}, evicted.ids())
	assert.Equal(t, []string{"h", "i", "j", "never1", "never2"}, ids(c))

	before := bndStateOf(c)
	for _, ttl := range []string{`,"ttl":1`, `,"ttl":-1`, ""} {
		_, err := c.Create(bndDoc("k", 5, ttl))
		require.ErrorIs(t, err, ttlstore.ErrFull, "only documents that cannot expire are left")
		assert.Contains(t, err.Error(), "MaxDocuments is 5 and 5 documents are stored")
		assert.Contains(t, err.Error(), "the documents that cannot expire leave no room for it")
		assert.Equal(t, before, bndStateOf(c))
	}
	st := c.Stats()
	assert.Equal(t, uint64(7), st.Evicted)
	assert.Equal(t, uint64(3), st.Refused)
	assert.Equal(t, evicted.weight, st.EvictedBytes)
	// The evicted documents were live, and could expire.
	for _, d := range evicted.docs {
		_, ok := d.ExpiresAt()
		assert.True(t, ok, "evicted %s, which cannot expire", d)
	}
}

// TestBoundEvictSoonestExpiryTTLOff: with TTL off nothing can expire, so
// EvictSoonestExpiry refuses at the bound as NoEviction does.
func TestBoundEvictSoonestExpiryTTLOff(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{MaxDocuments: 3, Eviction: ttlstore.EvictSoonestExpiry})
	for i := range 3 {
		_, err := c.Create(bndDoc(fmt.Sprint("d", i), 5, `,"ttl":5`)) // ignored: TTL is off
		require.NoError(t, err)
	}
	before := bndStateOf(c)
	_, err := c.Create(bndDoc("d3", 5, `,"ttl":1`))
	require.ErrorIs(t, err, ttlstore.ErrFull)
	assert.Equal(t, before, bndStateOf(c))
	assert.Zero(t, c.Stats().Evicted)
}

// TestBoundReplaceHeavierAtBytesBound replaces a document by a heavier one
// when the collection is at MaxBytes and the document replaced is the one
// the policy would evict first. The replace must succeed (as an Upsert
// does): the document exists when Replace is called and the write needs
// only the difference in weight.
func TestBoundReplaceHeavierAtBytesBound(t *testing.T) {
	light, heavy := bndDoc("a", 10, `,"ttl":10`), bndDoc("a", 300, `,"ttl":10`)
	w, wh := bndWeight(t, light), bndWeight(t, heavy)
	for _, policy := range bndPolicies[1:] {
		for _, name := range []string{"Replace", "ReplaceIfMatch", "Upsert"} {
			t.Run(policy.String()+"/"+name, func(t *testing.T) {
				var evicted bndEvictions
				c, _ := newCollection(t, ttlstore.Options{
					DefaultTTL: ttlstore.TTL(100),
					MaxBytes:   w + wh,
					Eviction:   policy,
					OnEvict:    evicted.add,
				})
				// "a" expires sooner, and is colder: "b" is read.
				a, err := c.Create(light)
				require.NoError(t, err)
				_, err = c.Create(bndDoc("b", 300, `,"ttl":50`))
				require.NoError(t, err)
				for range 3 {
					_, err = c.Read("b")
					require.NoError(t, err)
				}
				require.Equal(t, w+wh, c.Stats().Bytes, "at MaxBytes")
				var d ttlstore.Document
				switch name {
				case "Replace":
					d, err = c.Replace(heavy)
				case "ReplaceIfMatch":
					d, err = c.ReplaceIfMatch(heavy, a.ETag())
				case "Upsert":
					d, err = c.Upsert(heavy)
				}
				t.Logf("evicted %v", evicted.ids())
				require.NoError(t, err, "%s of a stored document by a heavier one at MaxBytes", name)
				got, err := c.Read("a")
				require.NoError(t, err)
				assert.Equal(t, d.ETag(), got.ETag())
				assert.LessOrEqual(t, c.Stats().Bytes, w+wh)
			})
		}
	}
}

// TestBoundEvictingNeverFullConcurrently has 8 goroutines write new
// documents, all of which can expire, into collections that hold one or
// two: under the evicting policies no write may be refused with ErrFull,
// which they return only when nothing may be evicted (ErrFull's doc), not
// because the documents another writer is adding or evicting at that
// moment are out of the policy's reach.
func TestBoundEvictingNeverFullConcurrently(t *testing.T) {
	const workers = 8
	writes := 2000
	if raceEnabled {
		writes = 250
	}
	w := bndWeight(t, bndDoc("w0-0000", 20, ""))
	for _, policy := range bndPolicies[1:] {
		for _, b := range []struct {
			name  string
			docs  int
			bytes int64
		}{{"MaxDocuments 1", 1, 0}, {"MaxDocuments 2", 2, 0}, {"MaxBytes 2 documents", 0, 2 * w}} {
			t.Run(policy.String()+"/"+b.name, func(t *testing.T) {
				c, _ := newCollection(t, ttlstore.Options{
					DefaultTTL:   ttlstore.TTL(100),
					MaxDocuments: b.docs,
					MaxBytes:     b.bytes,
					Eviction:     policy,
				})
				var full atomic.Int64
				var first atomic.Value
				var wg sync.WaitGroup
				for g := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range writes {
							_, err := c.Upsert(bndDoc(fmt.Sprintf("w%d-%04d", g, i), 20, ""))
							if errors.Is(err, ttlstore.ErrFull) {
								full.Add(1)
								first.CompareAndSwap(nil, err.Error())
								continue
							}
							assert.NoError(t, err)
						}
					}()
				}
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				bndWait(t, done, "the writers")
				assert.Zero(t, full.Load(), "writes refused with ErrFull under %s, the first: %v", policy, first.Load())
				assert.Zero(t, c.Stats().Refused)
			})
		}
	}
}

// TestBoundTooLarge writes a document heavier than MaxBytes by itself: it
// is refused with ErrTooLarge, and nothing is evicted for it.
func TestBoundTooLarge(t *testing.T) {
	small := func(id string) []byte { return bndDoc(id, 10, "") }
	w := bndWeight(t, small("d0"))
	// The bound: four small documents' weight, or the next weight a
	// document can have, so that one can weigh exactly MaxBytes.
	exact := bndDoc("x", bndPadFor(t, "x", 4*w), "")
	maxBytes := bndWeight(t, exact)
	for _, policy := range bndPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			// Everything can expire, so that EvictSoonestExpiry may evict.
			c, _ := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(100), MaxBytes: maxBytes, Eviction: policy})
			for i := range 4 {
				_, err := c.Create(small(fmt.Sprint("d", i)))
				require.NoError(t, err)
			}
			before := bndStateOf(c)
			big := bndDoc("big", int(4*w), "")
			for _, write := range []func(any) (ttlstore.Document, error){c.Create, c.Upsert} {
				_, err := write(big)
				require.ErrorIs(t, err, ttlstore.ErrTooLarge)
				require.NotErrorIs(t, err, ttlstore.ErrFull)
				assert.Contains(t, err.Error(), fmt.Sprintf("more than MaxBytes %d", maxBytes))
			}
			// An overwrite by a document too heavy for the bound.
			_, err := c.Replace(bndDoc("d0", int(4*w), ""))
			require.ErrorIs(t, err, ttlstore.ErrTooLarge)
			assert.Equal(t, before, bndStateOf(c))
			st := c.Stats()
			assert.Zero(t, st.Evicted)
			assert.Zero(t, st.Refused)

			// A document of exactly MaxBytes fits, alone.
			_, err = c.Create(exact)
			if policy == ttlstore.NoEviction {
				require.ErrorIs(t, err, ttlstore.ErrFull)
			} else {
				require.NoError(t, err)
				assert.Equal(t, []string{"x"}, ids(c))
				assert.Equal(t, uint64(4), c.Stats().Evicted)
			}
		})
	}
}

// TestBoundWeight checks Document.Weight and Stats.Bytes: a document
// weighs more than its JSON; Bytes is the weight of everything in memory,
// expired documents not yet swept included; it falls back to 0.
func TestBoundWeight(t *testing.T) {
	assert.Zero(t, ttlstore.Document{}.Weight())
	for _, policy := range bndPolicies {
		t.Run(policy.String(), func(t *testing.T) {
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), Eviction: policy})
			rng := rand.New(rand.NewPCG(3, 4))
			var want int64
			for i := range 200 {
				ttl := ""
				if i%4 == 0 {
					ttl = `,"ttl":5`
				}
				d, err := c.Upsert(bndDoc(fmt.Sprint("d", i), rng.IntN(3000), ttl))
				require.NoError(t, err)
				assert.Greater(t, d.Weight(), int64(len(d.JSON())), "%s", d)
				r, err := c.Read(d.ID())
				require.NoError(t, err)
				assert.Equal(t, d.Weight(), r.Weight())
				want += d.Weight()
				require.Equal(t, want, c.Stats().Bytes)
			}
			// Overwrites, Touch, an escaped id.
			d, err := c.Upsert(bndDoc("d1", 5000, ""))
			require.NoError(t, err)
			want = 0
			for d := range c.All() {
				want += d.Weight()
			}
			require.Equal(t, want, c.Stats().Bytes)
			tt, err := c.Touch("d1")
			require.NoError(t, err)
			assert.Equal(t, d.Weight(), tt.Weight())
			esc, err := c.Create([]byte(`{"id":"e\u00e9\"q","p":"yy"}`))
			require.NoError(t, err)
			assert.Greater(t, esc.Weight(), int64(len(esc.JSON())))
			want += esc.Weight()
			require.Equal(t, want, c.Stats().Bytes)

			// Expired documents weigh until they are swept.
			clk.Add(5 * time.Second)
			st := c.Stats()
			require.Equal(t, 50, st.Expired)
			require.Equal(t, want, st.Bytes)
			c.Sweep()
			want = 0
			for d := range c.All() {
				want += d.Weight()
			}
			require.Equal(t, want, c.Stats().Bytes)

			for d := range c.All() {
				require.NoError(t, c.Delete(d.ID()))
			}
			assert.Zero(t, c.Stats().Bytes)
			assert.Zero(t, c.Len())
		})
	}
}

// TestBoundSetLimits changes the bounds of collections holding more than
// the new ones.
func TestBoundSetLimits(t *testing.T) {
	fillAs := func(t *testing.T, c *ttlstore.Collection, prefix string, n int) {
		t.Helper()
		for i := range n {
			_, err := c.Create(bndDoc(fmt.Sprintf("%s%02d", prefix, i), 10, ""))
			require.NoError(t, err)
		}
	}
	fill := func(t *testing.T, c *ttlstore.Collection, n int) {
		t.Helper()
		fillAs(t, c, "d", n)
	}

	t.Run("EvictColdest shrinks at once", func(t *testing.T) {
		var evicted bndEvictions
		var caller string
		var sameGoroutine atomic.Bool
		sameGoroutine.Store(true)
		c, _ := newCollection(t, ttlstore.Options{Eviction: ttlstore.EvictColdest, OnEvict: func(d ttlstore.Document) {
			if bndGoroutineID() != caller {
				sameGoroutine.Store(false)
			}
			evicted.add(d)
		}})
		fill(t, c, 20)
		caller = bndGoroutineID()
		require.NoError(t, c.SetLimits(5, 0))
		assert.Equal(t, 15, evicted.count(), "OnEvict calls when SetLimits returns")
		assert.True(t, sameGoroutine.Load(), "OnEvict called on another goroutine than SetLimits's")
		st := c.Stats()
		assert.Equal(t, 5, st.Live)
		assert.Equal(t, 5, st.MaxDocuments)
		assert.Equal(t, uint64(15), st.Evicted)
		for _, id := range evicted.ids() {
			assert.False(t, live(t, c, id), id)
		}

		w := bndWeight(t, bndDoc("d00", 10, ""))
		require.NoError(t, c.SetLimits(5, 2*w))
		assert.Equal(t, 2, c.Len())
		assert.Equal(t, 2*w, c.Stats().Bytes)
		assert.Equal(t, int64(2*w), c.Stats().MaxBytes)
		assert.Equal(t, 18, evicted.count())

		// Raising it lets writes in without evicting.
		require.NoError(t, c.SetLimits(0, 0))
		fillAs(t, c, "n", 30)
		assert.Equal(t, 32, c.Len())
		assert.Equal(t, 18, evicted.count())
		st = c.Stats()
		assert.Zero(t, st.MaxDocuments)
		assert.Zero(t, st.MaxBytes)
	})

	t.Run("EvictSoonestExpiry keeps what cannot expire", func(t *testing.T) {
		var evicted bndEvictions
		c, _ := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), Eviction: ttlstore.EvictSoonestExpiry, OnEvict: evicted.add})
		for i := range 6 {
			ttl := `,"ttl":-1`
			if i%2 == 0 {
				ttl = fmt.Sprintf(`,"ttl":%d`, 100-i)
			}
			_, err := c.Create(bndDoc(fmt.Sprint("d", i), 5, ttl))
			require.NoError(t, err)
		}
		require.NoError(t, c.SetLimits(4, 0))
		assert.Equal(t, []string{"d4", "d2"}, evicted.ids())
		require.NoError(t, c.SetLimits(1, 0), "only documents that cannot expire are left: not an error")
		assert.Equal(t, []string{"d4", "d2", "d0"}, evicted.ids())
		assert.Equal(t, []string{"d1", "d3", "d5"}, ids(c))
		_, err := c.Create(bndDoc("x", 5, `,"ttl":5`))
		require.ErrorIs(t, err, ttlstore.ErrFull)
	})

	t.Run("NoEviction removes nothing", func(t *testing.T) {
		var expired []string
		c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), MaxDocuments: 20,
			OnExpire: func(d ttlstore.Document) { expired = append(expired, d.ID()) }})
		fill(t, c, 10)
		before := bndStateOf(c)
		require.NoError(t, c.SetLimits(5, 0))
		assert.Equal(t, before, bndStateOf(c), "SetLimits under NoEviction removed live documents")
		assert.Equal(t, 5, c.Stats().MaxDocuments)
		_, err := c.Create(bndDoc("new", 10, ""))
		require.ErrorIs(t, err, ttlstore.ErrFull)
		_, err = c.Upsert(bndDoc("d00", 10, `,"v":2`))
		require.NoError(t, err, "an overwrite needs no room, even over the bound")
		for i := range 5 {
			require.NoError(t, c.Delete(fmt.Sprintf("d%02d", i)))
			_, err = c.Create(bndDoc("new", 10, ""))
			require.ErrorIs(t, err, ttlstore.ErrFull, "after %d deletes, 10-%d documents stored, bound 5", i+1, i+1)
		}
		require.NoError(t, c.Delete("d05"))
		_, err = c.Create(bndDoc("new", 10, ""))
		require.NoError(t, err, "under the bound again")
		_, err = c.Create(bndDoc("new2", 10, ""))
		require.ErrorIs(t, err, ttlstore.ErrFull)
		require.NoError(t, c.SetLimits(6, 0))
		_, err = c.Create(bndDoc("new2", 10, ""))
		require.NoError(t, err, "after raising the bound")
		assert.Zero(t, c.Stats().Evicted)

		// Expired documents are swept to meet a lower bound.
		for i := range 4 {
			_, err := c.Upsert(bndDoc(fmt.Sprintf("d%02d", 6+i), 10, `,"ttl":5`))
			require.NoError(t, err)
		}
		clk.Add(5 * time.Second)
		require.NoError(t, c.SetLimits(2, 0))
		slices.Sort(expired)
		assert.Equal(t, []string{"d06", "d07", "d08", "d09"}, expired)
		st := c.Stats()
		assert.Equal(t, ttlstore.Stats{Live: 2, Swept: 4}, ttlstore.CoreStats(st))
		assert.Zero(t, st.Evicted)
	})

	t.Run("invalid values change nothing", func(t *testing.T) {
		for _, policy := range bndPolicies {
			c, _ := newCollection(t, ttlstore.Options{MaxDocuments: 10, MaxBytes: 1 << 20, Eviction: policy})
			fill(t, c, 10)
			before := bndStateOf(c)
			for _, tt := range []struct {
				docs  int
				bytes int64
				says  string
			}{
				{-1, 0, "MaxDocuments -1"},
				{-1, 100, "MaxDocuments -1"},
				{3, -1, "MaxBytes -1"},
				{0, -5, "MaxBytes -5"},
			} {
				err := c.SetLimits(tt.docs, tt.bytes)
				require.ErrorIs(t, err, ttlstore.ErrInvalidOptions)
				assert.Contains(t, err.Error(), tt.says)
				assert.Equal(t, before, bndStateOf(c))
				st := c.Stats()
				assert.Equal(t, 10, st.MaxDocuments)
				assert.Equal(t, int64(1<<20), st.MaxBytes)
				assert.Zero(t, st.Evicted)
			}
		}
	})

	t.Run("after Close", func(t *testing.T) {
		c, _ := newCollection(t, ttlstore.Options{MaxDocuments: 10, Eviction: ttlstore.EvictColdest})
		fill(t, c, 10)
		require.NoError(t, c.Close())
		require.ErrorIs(t, c.SetLimits(2, 0), ttlstore.ErrClosed)
		st := c.Stats()
		assert.Equal(t, 10, st.Live)
		assert.Equal(t, 10, st.MaxDocuments)
		assert.Zero(t, st.Evicted)
	})
}

// TestBoundOptionsValidation: New refuses negative bounds and an unknown
// policy.
func TestBoundOptionsValidation(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts ttlstore.Options
		says string
	}{
		{"negative MaxDocuments", ttlstore.Options{MaxDocuments: -1}, "MaxDocuments -1 is negative"},
		{"negative MaxBytes", ttlstore.Options{MaxBytes: -1}, "MaxBytes -1 is negative"},
		{"negative MaxDocuments with eviction", ttlstore.Options{MaxDocuments: -10, Eviction: ttlstore.EvictColdest}, "MaxDocuments -10"},
		{"Eviction 3", ttlstore.Options{Eviction: 3}, "Eviction EvictionPolicy(3) is not an EvictionPolicy"},
		{"Eviction 255", ttlstore.Options{MaxDocuments: 5, Eviction: 255}, "EvictionPolicy(255)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ttlstore.New(tt.opts)
			require.ErrorIs(t, err, ttlstore.ErrInvalidOptions)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), tt.says)
		})
	}
	for _, p := range bndPolicies {
		c, err := ttlstore.New(ttlstore.Options{Eviction: p, SweepInterval: ttlstore.ManualSweep})
		require.NoError(t, err, "%s without a bound", p)
		require.NoError(t, c.Close())
	}
	assert.Equal(t, "NoEviction", ttlstore.NoEviction.String())
	assert.Equal(t, "EvictColdest", ttlstore.EvictColdest.String())
	assert.Equal(t, "EvictSoonestExpiry", ttlstore.EvictSoonestExpiry.String())
}

// TestBoundStatsHitsAndMisses counts the reads of a small scenario, one
// hit or one miss for each call that reads.
func TestBoundStatsHitsAndMisses(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), MaxDocuments: 100, Eviction: ttlstore.EvictColdest})
	tv := ttlstore.NewTyped[session](c)
	ctx := context.Background()
	want := ttlstore.Stats{}
	check := func(what string) {
		t.Helper()
		st := c.Stats()
		require.Equal(t, [2]uint64{want.Hits, want.Misses}, [2]uint64{st.Hits, st.Misses}, "hits, misses after %s", what)
	}
	_, err := c.Create(bndDoc("a", 1, ""))
	require.NoError(t, err)
	_, err = c.Create(bndDoc("short", 1, `,"ttl":5`))
	require.NoError(t, err)
	check("writes")

	_, err = c.Read("a")
	require.NoError(t, err)
	want.Hits++
	check("Read hit")
	_, err = c.Read("nope")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	want.Misses++
	check("Read miss")
	_, err = c.Read("short")
	require.NoError(t, err)
	want.Hits++
	clk.Add(5 * time.Second)
	_, err = c.Read("short")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	want.Misses++
	check("Read of an expired document")
	c.Sweep()
	_, err = c.Read("short")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	want.Misses++
	check("Read of a swept document")

	loads := 0
	load := func(_ context.Context, id string) (any, error) {
		loads++
		return bndDoc(id, 1, ""), nil
	}
	_, err = c.ReadOrLoad(ctx, "l", load)
	require.NoError(t, err)
	want.Misses++
	check("ReadOrLoad miss")
	_, err = c.ReadOrLoad(ctx, "l", load)
	require.NoError(t, err)
	want.Hits++
	check("ReadOrLoad hit")
	require.Equal(t, 1, loads)

	_, err = tv.Read("a")
	require.NoError(t, err)
	want.Hits++
	check("Typed Read hit")
	_, err = tv.Read("a")
	require.NoError(t, err)
	want.Hits++
	check("Typed Read hit, cached")
	_, err = tv.Read("nope")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	want.Misses++
	check("Typed Read miss")
	tload := func(_ context.Context, id string) (session, error) { return session{ID: id, User: "u"}, nil }
	_, err = tv.ReadOrLoad(ctx, "s", tload)
	require.NoError(t, err)
	want.Misses++
	check("Typed ReadOrLoad miss")
	_, err = tv.ReadOrLoad(ctx, "s", tload)
	require.NoError(t, err)
	want.Hits++
	check("Typed ReadOrLoad hit")

	// Writes, All, Query, Len and Touch are not reads.
	_, err = c.Upsert(bndDoc("a", 2, ""))
	require.NoError(t, err)
	_, err = c.Touch("a")
	require.NoError(t, err)
	for range c.All() {
	}
	_ = c.Len()
	check("writes and iteration")
}

// TestBoundStress runs, under the race detector, 8 goroutines doing random
// writes, deletes, reads and touches on a few hundred ids against a small
// bound, with the background sweeper on a moving mock clock and the bounds
// changed now and then, under each policy. In the phases where the bounds
// do not change, every write checks that the weight is within MaxBytes
// (Stats.Bytes is one counter; Live+Expired, counted shard by shard, is
// checked between phases). At the end the counters must agree with what
// the callbacks saw and what is in memory.
func TestBoundStress(t *testing.T) {
	for _, policy := range bndPolicies {
		t.Run(policy.String(), func(t *testing.T) { bndStress(t, policy) })
	}
}

func bndStress(t *testing.T, policy ttlstore.EvictionPolicy) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const (
		workers = 8
		idCount = 300
		phases  = 6
	)
	opsPerPhase := 600
	if raceEnabled {
		opsPerPhase = 200
	}
	maxWeight := bndWeight(t, bndDoc("k000", 200, `,"ttl":10`))
	limits := []struct {
		docs  int
		bytes int64
	}{{50, 30 * maxWeight}, {20, 0}, {0, 8 * maxWeight}, {50, 50 * maxWeight}, {5, 3 * maxWeight}, {80, 20 * maxWeight}}

	clk := &monotonicClock{Mock: newMock()}
	var evicted, evictedBytes, expired atomic.Uint64
	var failed atomic.Bool
	c, err := ttlstore.New(ttlstore.Options{
		DefaultTTL:   ttlstore.TTL(4),
		Clock:        clk,
		SweepBatch:   4,
		MaxDocuments: 50,
		MaxBytes:     30 * maxWeight,
		Eviction:     policy,
		OnEvict: func(d ttlstore.Document) {
			evicted.Add(1)
			evictedBytes.Add(uint64(d.Weight()))
			if policy == ttlstore.NoEviction {
				t.Errorf("NoEviction evicted %s", d)
			}
			if _, ok := d.ExpiresAt(); !ok && policy == ttlstore.EvictSoonestExpiry {
				t.Errorf("EvictSoonestExpiry evicted %s, which cannot expire", d)
			}
		},
		OnExpire: func(ttlstore.Document) { expired.Add(1) },
	})
	require.NoError(t, err)
	defer c.Close()

	usage := func() (int, int64) {
		st := c.Stats()
		return st.Live + st.Expired, st.Bytes
	}
	for p := range phases {
		concurrentLimits := p%2 == 1
		var docsCeil int
		var bytesCeil int64
		if !concurrentLimits {
			lim := limits[p%len(limits)]
			require.NoError(t, c.SetLimits(lim.docs, lim.bytes))
			docs, nBytes := usage()
			if policy == ttlstore.EvictColdest {
				// Evicted down to the bound at once.
				if lim.docs > 0 {
					require.LessOrEqual(t, docs, lim.docs, "phase %d: SetLimits left the collection over MaxDocuments", p)
				}
				if lim.bytes > 0 {
					require.LessOrEqual(t, nBytes, lim.bytes, "phase %d: SetLimits left the collection over MaxBytes", p)
				}
			}
			// Under the other policies the usage may stay above a lowered
			// bound, but no write may raise it.
			docsCeil, bytesCeil = max(docs, lim.docs), max(nBytes, lim.bytes)
			if lim.docs == 0 {
				docsCeil = idCount
			}
			if lim.bytes == 0 {
				bytesCeil = 1 << 62
			}
		}

		var wg sync.WaitGroup
		stop := make(chan struct{})
		var helpers sync.WaitGroup
		helpers.Add(1)
		go func() { // the only goroutine that moves the clock
			defer helpers.Done()
			rng := rand.New(rand.NewPCG(uint64(p), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				clk.Add(time.Duration(rng.Int64N(int64(700*time.Millisecond))) + time.Millisecond)
			}
		}()
		if concurrentLimits {
			helpers.Add(1)
			go func() {
				defer helpers.Done()
				rng := rand.New(rand.NewPCG(uint64(p), 8))
				for {
					select {
					case <-stop:
						return
					default:
					}
					docs := []int{0, 3, 10, 40, 80}[rng.IntN(5)]
					nBytes := []int64{0, 2 * maxWeight, 10 * maxWeight, 40 * maxWeight}[rng.IntN(4)]
					if err := c.SetLimits(docs, nBytes); err != nil {
						t.Errorf("SetLimits(%d, %d): %v", docs, nBytes, err)
					}
					runtime.Gosched()
				}
			}()
		}
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(p), uint64(w)))
				for range opsPerPhase {
					if failed.Load() {
						return
					}
					if err := bndStressStep(c, rng, idCount); err != nil {
						if errors.Is(err, ttlstore.ErrFull) {
							// Allowed under EvictColdest too here:
							// TestBoundEvictingNeverFullConcurrently
							// is the test that it never happens.
							continue
						}
						failed.Store(true)
						t.Errorf("phase %d, policy %s: %v", p, policy, err)
						return
					}
					if !concurrentLimits {
						if st := c.Stats(); st.Bytes > bytesCeil {
							failed.Store(true)
							t.Errorf("phase %d: %d bytes, over the bound %d", p, st.Bytes, bytesCeil)
							return
						}
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(stop); helpers.Wait(); close(done) }()
		bndWait(t, done, "the stress goroutines")
		require.False(t, failed.Load())
		require.NoError(t, c.CheckInvariants())
		if !concurrentLimits {
			docs, nBytes := usage()
			require.LessOrEqual(t, docs, docsCeil, "phase %d: over MaxDocuments", p)
			require.LessOrEqual(t, nBytes, bytesCeil, "phase %d: over MaxBytes", p)
		}
	}

	require.NoError(t, c.Close()) // waits for the background sweeper
	require.NoError(t, c.CheckInvariants())
	c.Sweep() // works after Close
	st := c.Stats()
	require.Zero(t, st.Expired)
	var weight int64
	n := 0
	for d := range c.All() {
		weight += d.Weight()
		n++
	}
	assert.Equal(t, st.Live, n)
	assert.Equal(t, weight, st.Bytes, "Stats.Bytes and the weight of what is in memory")
	assert.Equal(t, evicted.Load(), st.Evicted, "OnEvict calls and Stats.Evicted")
	assert.Equal(t, evictedBytes.Load(), st.EvictedBytes, "the weight passed to OnEvict and Stats.EvictedBytes")
	assert.Equal(t, expired.Load(), st.Swept, "OnExpire calls and Stats.Swept")
	if policy != ttlstore.EvictColdest {
		assert.Positive(t, st.Refused, "the workload never reached the bound")
	}
	if policy != ttlstore.NoEviction {
		assert.Positive(t, st.Evicted, "the workload never evicted")
	}
	t.Logf("%s: %d evicted, %d refused, %d swept, %d hits, %d misses", policy, st.Evicted, st.Refused, st.Swept, st.Hits, st.Misses)
}

// bndStressStep runs one random operation and returns an error it was not
// allowed to return.
func bndStressStep(c *ttlstore.Collection, rng *rand.Rand, ids int) error {
	id := fmt.Sprintf("k%03d", rng.IntN(ids))
	ttl := []string{"", "", `,"ttl":-1`, `,"ttl":1`, `,"ttl":3`, `,"ttl":10`}[rng.IntN(6)]
	doc := bndDoc(id, rng.IntN(200), ttl)
	var err error
	var allowed error
	switch rng.IntN(8) {
	case 0:
		_, err = c.Create(doc)
		allowed = ttlstore.ErrConflict
	case 1, 2:
		_, err = c.Upsert(doc)
	case 3:
		_, err = c.Replace(doc)
		allowed = ttlstore.ErrNotFound
	case 4:
		err = c.Delete(id)
		allowed = ttlstore.ErrNotFound
	case 5:
		_, err = c.Touch(id)
		allowed = ttlstore.ErrNotFound
	default:
		_, err = c.Read(id)
		allowed = ttlstore.ErrNotFound
	}
	if err == nil || allowed != nil && errors.Is(err, allowed) {
		return nil
	}
	return fmt.Errorf("%s: %w", id, err)
}
