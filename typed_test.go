package ttlstore_test

// Black-box tests of Typed views: every call returns what is stored,
// decoded; reads agree with Collection.Read; returned values are the
// caller's; the cache follows every removal; and a view works beside the
// Collection, concurrently, durably and against the model.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/ttlstore/ttlstore"
)

// session is a flat document type: a copy of it shares nothing writable.
type session struct {
	ID   string `json:"id"`
	TTL  int32  `json:"ttl,omitempty"`
	User string `json:"user"`
	Hits int    `json:"hits"`
	TS   int64  `json:"_ts,omitempty"`
	ETag string `json:"_etag,omitempty"`
}

// profile is a document type with slices, maps, pointers and interfaces.
type profile struct {
	ID    string              `json:"id"`
	TTL   int32               `json:"ttl,omitempty"`
	Tags  []string            `json:"tags"`
	Attrs map[string][]string `json:"attrs"`
	Best  *score              `json:"best"`
	Extra any                 `json:"extra"`
	Raw   json.RawMessage     `json:"raw"`
	Seen  time.Time           `json:"seen"`
	// Maps and a nested struct that a copy clones without reflection.
	Labels map[string]string `json:"labels"`
	Counts map[string]int    `json:"counts"`
	Home   struct {
		Lines []string           `json:"lines"`
		Geo   map[string]float64 `json:"geo"`
	} `json:"home"`
}

type score struct {
	Points []int  `json:"points"`
	Label  string `json:"label"`
}

// checkCache fails the test unless the view's cache agrees with its
// collection (see CheckCache).
func checkCache[T any](t testing.TB, tv *ttlstore.Typed[T]) {
	t.Helper()
	require.NoError(t, tv.CheckCache())
}

// stored returns the JSON stored under id, failing if there is none.
func stored(t testing.TB, c *ttlstore.Collection, id string) string {
	t.Helper()
	d, err := c.Read(id)
	require.NoError(t, err)
	return d.String()
}

// decoded returns the document stored under id decoded afresh into a T.
func decoded[T any](t testing.TB, c *ttlstore.Collection, id string) T {
	t.Helper()
	d, err := c.Read(id)
	require.NoError(t, err)
	var v T
	require.NoError(t, d.Decode(&v))
	return v
}

// TestTypedReadWrite checks that every typed call returns what is stored,
// decoded, with _ts and _etag, across the writes of both APIs.
func TestTypedReadWrite(t *testing.T) {
	type step struct {
		name string
		// do makes one call. The clock moves a second before each, so
		// that each write gets a new _ts.
		do  func(c *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error)
		err error // what the call must return
		// want is the value it must return, without _ts and _etag, when
		// err is nil; zero when the step returns no value.
		want session
	}
	ada := session{ID: "s1", User: "ada", Hits: 1}
	readS1 := func(_ *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error) { return tv.Read("s1") }
	steps := []step{
		{"read missing", readS1, ttlstore.ErrNotFound, session{}},
		{"create", func(_ *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error) { return tv.Create(ada) }, nil, ada},
		{"read after create", readS1, nil, ada},
		{"create again", func(_ *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error) {
			return tv.Create(session{ID: "s1", User: "eve"})
		}, ttlstore.ErrConflict, session{}},
		{"upsert", func(_ *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error) {
			return tv.Upsert(session{ID: "s1", User: "ada", Hits: 2, ETag: "ignored", TS: 5})
		}, nil, session{ID: "s1", User: "ada", Hits: 2}},
		{"read after upsert", readS1, nil, session{ID: "s1", User: "ada", Hits: 2}},
		{"untyped upsert", func(c *ttlstore.Collection, _ *ttlstore.Typed[session]) (session, error) {
			_, err := c.Upsert([]byte(`{"id":"s1","user":"bob","hits":3,"ttl":60}`))
			return session{}, err
		}, nil, session{}},
		{"read after untyped upsert", readS1, nil, session{ID: "s1", User: "bob", Hits: 3, TTL: 60}},
		{"replace", func(_ *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error) {
			return tv.Replace(session{ID: "s1", User: "bob", Hits: 4})
		}, nil, session{ID: "s1", User: "bob", Hits: 4}},
		{"read after replace", readS1, nil, session{ID: "s1", User: "bob", Hits: 4}},
		{"replace missing", func(_ *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error) {
			return tv.Replace(session{ID: "s2"})
		}, ttlstore.ErrNotFound, session{}},
		{"replace if match, stale", func(_ *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error) {
			return tv.ReplaceIfMatch(session{ID: "s1", User: "eve"}, "0000000000000000")
		}, ttlstore.ErrPreconditionFailed, session{}},
		{"replace if match", func(_ *ttlstore.Collection, tv *ttlstore.Typed[session]) (session, error) {
			cur, err := tv.Read("s1")
			if err != nil {
				return cur, err
			}
			cur.Hits++
			return tv.ReplaceIfMatch(cur, cur.ETag)
		}, nil, session{ID: "s1", User: "bob", Hits: 5}},
		{"read after replace if match", readS1, nil, session{ID: "s1", User: "bob", Hits: 5}},
		{"touch", func(c *ttlstore.Collection, _ *ttlstore.Typed[session]) (session, error) {
			_, err := c.Touch("s1")
			return session{}, err
		}, nil, session{}},
		{"read after touch", readS1, nil, session{ID: "s1", User: "bob", Hits: 5}},
		{"delete", func(c *ttlstore.Collection, _ *ttlstore.Typed[session]) (session, error) {
			return session{}, c.Delete("s1")
		}, nil, session{}},
		{"read after delete", readS1, ttlstore.ErrNotFound, session{}},
	}
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never)})
	tv := ttlstore.NewTyped[session](c)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			clk.Add(time.Second)
			got, err := st.do(c, tv)
			if st.err != nil {
				require.ErrorIs(t, err, st.err)
				require.Zero(t, got)
				return
			}
			require.NoError(t, err)
			if st.want == (session{}) {
				require.Zero(t, got)
				return
			}
			d, err := c.Read(got.ID)
			require.NoError(t, err)
			require.Equal(t, decoded[session](t, c, got.ID), got, "the stored document, decoded")
			require.Equal(t, d.TS().Unix(), got.TS)
			require.Equal(t, d.ETag(), got.ETag)
			got.TS, got.ETag = 0, ""
			require.Equal(t, st.want, got)
		})
		checkCache(t, tv)
	}
}

// TestTypedReadAgrees checks that a typed read finds exactly what
// Collection.Read finds, with the same errors and the same counts in Stats,
// in every state a document can be in (Typed.Read looks for the document
// itself, under the lock, and ends a miss as Collection.Read does).
func TestTypedReadAgrees(t *testing.T) {
	cases := []struct {
		name  string
		setup func(c *ttlstore.Collection, clk interface{ Add(time.Duration) })
	}{
		{"never stored", func(*ttlstore.Collection, interface{ Add(time.Duration) }) {}},
		{"live", func(c *ttlstore.Collection, _ interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"a","user":"ada"}`)
		}},
		{"one second before expiry", func(c *ttlstore.Collection, clk interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"a","ttl":5}`)
			clk.Add(5*time.Second - time.Nanosecond)
		}},
		{"expired, not swept", func(c *ttlstore.Collection, clk interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"a","ttl":5}`)
			clk.Add(5 * time.Second)
		}},
		{"expired by DefaultTTL", func(c *ttlstore.Collection, clk interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"a"}`)
			clk.Add(10 * time.Second)
			require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(5)))
		}},
		{"swept", func(c *ttlstore.Collection, clk interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"a","ttl":5}`)
			clk.Add(5 * time.Second)
			c.Sweep()
		}},
		{"deleted", func(c *ttlstore.Collection, _ interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"a"}`)
			require.NoError(t, c.Delete("a"))
		}},
		{"escaped id", func(c *ttlstore.Collection, _ interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"\u0061"}`)
		}},
		{"closed", func(c *ttlstore.Collection, _ interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"a"}`)
			require.NoError(t, c.Close())
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never)})
			tv := ttlstore.NewTyped[session](c)
			tc.setup(c, clk)
			for range 2 { // a miss, then a hit
				before := c.Stats()
				d, err := c.Read("a")
				between := c.Stats()
				v, terr := tv.Read("a")
				after := c.Stats()
				require.Equal(t, between.Hits-before.Hits, after.Hits-between.Hits, "hits: counted as Read counts them")
				require.Equal(t, between.Misses-before.Misses, after.Misses-between.Misses, "misses: counted as Read counts them")
				if err != nil {
					require.EqualError(t, terr, err.Error())
					require.Equal(t, errors.Is(err, ttlstore.ErrNotFound), errors.Is(terr, ttlstore.ErrNotFound))
					require.Equal(t, errors.Is(err, ttlstore.ErrClosed), errors.Is(terr, ttlstore.ErrClosed))
					require.Zero(t, v)
					continue
				}
				require.NoError(t, terr)
				var want session
				require.NoError(t, d.Decode(&want))
				require.Equal(t, want, v)
			}
		})
	}
}

// TestTypedHitAllocs checks what a hit allocates, as Typed.Read's doc says:
// nothing for a T without references; for one with a []string, its copy;
// for one with a map of strings, the map and its slots.
func TestTypedHitAllocs(t *testing.T) {
	type tagged struct {
		ID   string   `json:"id"`
		Tags []string `json:"tags"`
	}
	type addressed struct {
		ID   string            `json:"id"`
		Addr map[string]string `json:"addr"`
	}
	c, _ := newCollection(t, ttlstore.Options{})
	upsert(t, c, `{"id":"a","user":"ada","tags":["x","y"],"addr":{"street":"s","city":"c","zip":"z"}}`)
	flat := ttlstore.NewTyped[session](c)
	tags := ttlstore.NewTyped[tagged](c)
	addr := ttlstore.NewTyped[addressed](c)
	cases := []struct {
		name string
		read func() error
		want float64
	}{
		{"flat", func() error { _, err := flat.Read("a"); return err }, 0},
		{"with a []string", func() error { _, err := tags.Read("a"); return err }, 1},
		{"with a map[string]string", func() error { _, err := addr.Read("a"); return err }, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.read()) // the miss, which decodes
			allocs := testing.AllocsPerRun(1000, func() {
				if err := tc.read(); err != nil {
					panic(err)
				}
			})
			require.Equal(t, tc.want, allocs)
		})
	}
}

// TestTypedCopies checks that nothing a caller does to a returned value,
// through its slices, maps, pointers and interfaces, changes what is stored
// or what a later read returns, whichever call returned it.
func TestTypedCopies(t *testing.T) {
	const doc = `{"id":"p1","tags":["a","b"],"attrs":{"k":["v1","v2"]},"best":{"points":[1,2,3],"label":"top"},` +
		`"extra":{"list":[1,{"deep":["x"]}],"m":{"n":1}},"raw":{"r":[1,2]},"seen":"2026-11-20T09:00:00+02:00",` +
		`"labels":{"a":"x","b":"y"},"counts":{"c":1},"home":{"lines":["l1","l2"],"geo":{"lat":1.5,"lon":2.5}}}`
	mutations := []struct {
		name string
		do   func(p *profile)
	}{
		{"slice element", func(p *profile) { p.Tags[0] = "changed" }},
		{"append within capacity", func(p *profile) { p.Tags = append(p.Tags[:1], "changed") }},
		{"map entry", func(p *profile) { p.Attrs["k"] = nil; p.Attrs["new"] = []string{"x"} }},
		{"slice in a map", func(p *profile) { p.Attrs["k"][1] = "changed" }},
		{"pointer target", func(p *profile) { p.Best.Label = "changed" }},
		{"slice behind a pointer", func(p *profile) { p.Best.Points[2] = 99 }},
		{"map in an interface", func(p *profile) { p.Extra.(map[string]any)["m"].(map[string]any)["n"] = 2.0 }},
		{"slice in an interface", func(p *profile) {
			p.Extra.(map[string]any)["list"].([]any)[1].(map[string]any)["deep"].([]any)[0] = "changed"
		}},
		{"raw JSON bytes", func(p *profile) { p.Raw[2] = 'X' }},
		{"string map entry", func(p *profile) { p.Labels["a"] = "changed"; delete(p.Labels, "b") }},
		{"number map entry", func(p *profile) { p.Counts["c"] = 2; p.Counts["new"] = 3 }},
		{"slice in a nested struct", func(p *profile) { p.Home.Lines[1] = "changed" }},
		{"map in a nested struct", func(p *profile) { p.Home.Geo["lat"] = 0 }},
		{"whole fields", func(p *profile) { *p = profile{ID: "p1"} }},
	}
	sources := []struct {
		name string
		get  func(t *testing.T, c *ttlstore.Collection, tv *ttlstore.Typed[profile]) profile
	}{
		{"read, miss", func(t *testing.T, c *ttlstore.Collection, tv *ttlstore.Typed[profile]) profile {
			upsert(t, c, doc) // a new version: not cached
			v, err := tv.Read("p1")
			require.NoError(t, err)
			return v
		}},
		{"read, hit", func(t *testing.T, _ *ttlstore.Collection, tv *ttlstore.Typed[profile]) profile {
			_, err := tv.Read("p1")
			require.NoError(t, err)
			v, err := tv.Read("p1")
			require.NoError(t, err)
			return v
		}},
		{"upsert", func(t *testing.T, c *ttlstore.Collection, tv *ttlstore.Typed[profile]) profile {
			v := decoded[profile](t, c, "p1")
			v, err := tv.Upsert(v)
			require.NoError(t, err)
			return v
		}},
		{"all", func(t *testing.T, _ *ttlstore.Collection, tv *ttlstore.Typed[profile]) profile {
			for v, err := range tv.All() {
				require.NoError(t, err)
				return v
			}
			t.Fatal("All yielded nothing")
			return profile{}
		}},
		{"query", func(t *testing.T, _ *ttlstore.Collection, tv *ttlstore.Typed[profile]) profile {
			var seen profile
			for v, err := range tv.Query(func(p profile) bool { seen = p; return true }) {
				require.NoError(t, err)
				// match got the value the loop gets: a change in match shows
				p := &seen
				p.Tags[0] = "in match"
				require.Equal(t, "in match", v.Tags[0])
				p.Tags[0] = "a"
				return v
			}
			t.Fatal("Query yielded nothing")
			return profile{}
		}},
		{"read or load, hit", func(t *testing.T, _ *ttlstore.Collection, tv *ttlstore.Typed[profile]) profile {
			v, err := tv.ReadOrLoad(context.Background(), "p1", func(context.Context, string) (profile, error) {
				t.Fatal("load called on a hit")
				return profile{}, nil
			})
			require.NoError(t, err)
			return v
		}},
	}
	for _, src := range sources {
		for _, m := range mutations {
			t.Run(src.name+"/"+m.name, func(t *testing.T) {
				c, _ := newCollection(t, ttlstore.Options{})
				tv := ttlstore.NewTyped[profile](c)
				upsert(t, c, doc)
				v := src.get(t, c, tv)
				before := stored(t, c, "p1")
				want := decoded[profile](t, c, "p1")
				require.Equal(t, want, v)

				m.do(&v)
				require.Equal(t, before, stored(t, c, "p1"), "stored JSON")
				again, err := tv.Read("p1")
				require.NoError(t, err)
				require.Equal(t, want, again, "a second read")
				checkCache(t, tv)
			})
		}
	}
}

// TestTypedExpiry checks that an expired document is not found by a typed
// read from the second it expires, cached or not, and that its value leaves
// the cache when the sweeper removes it.
func TestTypedExpiry(t *testing.T) {
	cases := []struct {
		name   string
		cached bool // read once before it expires
	}{
		{"cached", true},
		{"not cached", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10)})
			tv := ttlstore.NewTyped[session](c)
			upsert(t, c, `{"id":"a","user":"ada"}`)
			if tc.cached {
				_, err := tv.Read("a")
				require.NoError(t, err)
				require.Equal(t, 1, tv.CacheLen())
			}
			clk.Add(10*time.Second - time.Millisecond)
			v, err := tv.Read("a")
			require.NoError(t, err)
			require.Equal(t, "ada", v.User)

			clk.Add(time.Millisecond)
			_, err = tv.Read("a")
			require.ErrorIs(t, err, ttlstore.ErrNotFound)
			require.Equal(t, 1, tv.CacheLen(), "until the sweeper removes it")
			require.NoError(t, tv.CheckCache())

			require.Equal(t, 1, c.Sweep())
			require.Zero(t, tv.CacheLen())
			require.Zero(t, tv.CacheBytes())
			checkCache(t, tv)
		})
	}
}

// TestTypedDrops checks, for every way a document's version leaves the
// collection, that its cached value leaves the view's cache, and only its.
func TestTypedDrops(t *testing.T) {
	cases := []struct {
		name string
		// def is the collection's DefaultTTL; "a" and "b" are stored
		// with ttl 10 and read through the view before act runs.
		def *int32
		act func(t *testing.T, c *ttlstore.Collection, tv *ttlstore.Typed[session], clk interface{ Add(time.Duration) })
		// want is what the cache holds after act; readA what a typed
		// read of "a" then returns.
		want  int
		readA error
	}{
		{"delete", ttlstore.TTL(ttlstore.Never), func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], _ interface{ Add(time.Duration) }) {
			require.NoError(t, c.Delete("a"))
		}, 1, ttlstore.ErrNotFound},
		{"delete if match", ttlstore.TTL(ttlstore.Never), func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], _ interface{ Add(time.Duration) }) {
			d, _ := c.Read("a")
			require.NoError(t, c.DeleteIfMatch("a", d.ETag()))
		}, 1, ttlstore.ErrNotFound},
		{"untyped upsert", ttlstore.TTL(ttlstore.Never), func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], _ interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"a","user":"new"}`)
		}, 1, nil},
		{"typed upsert", ttlstore.TTL(ttlstore.Never), func(t *testing.T, _ *ttlstore.Collection, tv *ttlstore.Typed[session], _ interface{ Add(time.Duration) }) {
			_, err := tv.Upsert(session{ID: "a", User: "new"})
			require.NoError(t, err)
		}, 2, nil},
		{"touch", ttlstore.TTL(ttlstore.Never), func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], _ interface{ Add(time.Duration) }) {
			_, err := c.Touch("a")
			require.NoError(t, err)
		}, 1, nil},
		{"sweep", ttlstore.TTL(ttlstore.Never), func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], clk interface{ Add(time.Duration) }) {
			upsert(t, c, `{"id":"b","ttl":20}`) // b lives on, not cached
			clk.Add(10 * time.Second)
			require.Equal(t, 1, c.Sweep())
		}, 0, ttlstore.ErrNotFound},
		{"create over the expired", ttlstore.TTL(ttlstore.Never), func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], clk interface{ Add(time.Duration) }) {
			clk.Add(10 * time.Second)
			_, err := c.Create([]byte(`{"id":"a","user":"new"}`))
			require.NoError(t, err)
		}, 1, nil},
		{"set DefaultTTL purge", ttlstore.TTL(ttlstore.Never), func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], clk interface{ Add(time.Duration) }) {
			clk.Add(10 * time.Second)
			require.NoError(t, c.SetDefaultTTL(nil)) // off: nothing expires, but what had expired is purged
		}, 0, ttlstore.ErrNotFound},
		{"set DefaultTTL keeps", nil, func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], clk interface{ Add(time.Duration) }) {
			clk.Add(5 * time.Second)
			require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(100)))
		}, 2, nil},
		{"failed writes", ttlstore.TTL(ttlstore.Never), func(t *testing.T, c *ttlstore.Collection, _ *ttlstore.Typed[session], _ interface{ Add(time.Duration) }) {
			_, err := c.Create([]byte(`{"id":"a"}`))
			require.ErrorIs(t, err, ttlstore.ErrConflict)
			_, err = c.ReplaceIfMatch([]byte(`{"id":"a"}`), "x")
			require.ErrorIs(t, err, ttlstore.ErrPreconditionFailed)
			require.ErrorIs(t, c.DeleteIfMatch("a", "x"), ttlstore.ErrPreconditionFailed)
			_, err = c.Upsert([]byte(`{"id":"a","ttl":0}`))
			require.ErrorIs(t, err, ttlstore.ErrInvalidTTL)
		}, 2, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: tc.def})
			tv := ttlstore.NewTyped[session](c)
			for _, id := range []string{"a", "b"} {
				upsert(t, c, `{"id":"`+id+`","user":"old","ttl":10}`)
				_, err := tv.Read(id)
				require.NoError(t, err)
			}
			require.Equal(t, 2, tv.CacheLen())
			before := tv.CacheBytes()
			require.Positive(t, before)

			tc.act(t, c, tv, clk)
			require.Equal(t, tc.want, tv.CacheLen())
			switch tc.want {
			case 0:
				require.Zero(t, tv.CacheBytes())
			case 1:
				require.Positive(t, tv.CacheBytes())
				require.Less(t, tv.CacheBytes(), before)
			}
			checkCache(t, tv) // CacheBytes adds up

			v, err := tv.Read("a")
			if tc.readA != nil {
				require.ErrorIs(t, err, tc.readA)
				return
			}
			require.NoError(t, err)
			require.Equal(t, decoded[session](t, c, "a"), v)
			checkCache(t, tv)
		})
	}
}

// TestTypedViews checks that NewTyped gives one view per type, and that
// views of different types on one collection each see every write.
func TestTypedViews(t *testing.T) {
	type userOnly struct {
		ID   string `json:"id"`
		User string `json:"user"`
	}
	c, _ := newCollection(t, ttlstore.Options{})
	sessions := ttlstore.NewTyped[session](c)
	require.Same(t, sessions, ttlstore.NewTyped[session](c))
	users := ttlstore.NewTyped[userOnly](c)
	ptrs := ttlstore.NewTyped[*session](c)
	anys := ttlstore.NewTyped[map[string]any](c)

	_, err := sessions.Upsert(session{ID: "a", User: "ada", Hits: 3})
	require.NoError(t, err)
	u, err := users.Read("a")
	require.NoError(t, err)
	require.Equal(t, userOnly{ID: "a", User: "ada"}, u)
	p, err := ptrs.Read("a")
	require.NoError(t, err)
	require.Equal(t, 3, p.Hits)
	p.Hits = 4 // the caller's: not the cache's
	p, err = ptrs.Read("a")
	require.NoError(t, err)
	require.Equal(t, 3, p.Hits)
	m, err := anys.Read("a")
	require.NoError(t, err)
	require.Equal(t, "ada", m["user"])
	m["user"] = "eve"
	m, _ = anys.Read("a")
	require.Equal(t, "ada", m["user"])

	_, err = users.Upsert(userOnly{ID: "a", User: "bob"}) // hits are gone: a write replaces the whole document
	require.NoError(t, err)
	s, err := sessions.Read("a")
	require.NoError(t, err)
	require.Equal(t, "bob", s.User)
	require.Zero(t, s.Hits)

	require.NoError(t, c.Delete("a"))
	require.Zero(t, sessions.CacheLen())
	require.Zero(t, users.CacheLen())
	require.Zero(t, ptrs.CacheLen())
	require.Zero(t, anys.CacheLen())
	_, err = users.Read("a")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
}

// TestTypedInvalid checks the errors of values that cannot be stored and of
// stored documents that do not decode.
func TestTypedInvalid(t *testing.T) {
	type noID struct {
		Name string `json:"name"`
	}
	type wrongID struct {
		ID int `json:"id"`
	}
	t.Run("writes", func(t *testing.T) {
		cases := []struct {
			name string
			do   func(c *ttlstore.Collection) error
			err  error
			msg  string
		}{
			{"no id field", func(c *ttlstore.Collection) error {
				_, err := ttlstore.NewTyped[noID](c).Upsert(noID{Name: "x"})
				return err
			}, ttlstore.ErrInvalidDocument, `ttlstore: upsert: missing id: invalid document`},
			{"id not a string", func(c *ttlstore.Collection) error {
				_, err := ttlstore.NewTyped[wrongID](c).Create(wrongID{ID: 7})
				return err
			}, ttlstore.ErrInvalidDocument, `ttlstore: create: id 7 is a JSON number, not a string: invalid document`},
			{"empty id", func(c *ttlstore.Collection) error {
				_, err := ttlstore.NewTyped[session](c).Upsert(session{})
				return err
			}, ttlstore.ErrInvalidDocument, `ttlstore: upsert: id is empty: invalid document`},
			{"bad ttl", func(c *ttlstore.Collection) error {
				_, err := ttlstore.NewTyped[session](c).Upsert(session{ID: "a", TTL: -2})
				return err
			}, ttlstore.ErrInvalidTTL, ""},
			{"nil pointer", func(c *ttlstore.Collection) error {
				_, err := ttlstore.NewTyped[*session](c).Upsert(nil)
				return err
			}, ttlstore.ErrInvalidDocument, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c, _ := newCollection(t, ttlstore.Options{})
				err := tc.do(c)
				require.ErrorIs(t, err, tc.err)
				if tc.msg != "" {
					require.EqualError(t, err, tc.msg)
				}
				require.Zero(t, c.Len(), "a rejected write changes nothing")
			})
		}
	})
	t.Run("decode", func(t *testing.T) {
		c, _ := newCollection(t, ttlstore.Options{})
		tv := ttlstore.NewTyped[session](c)
		upsert(t, c, `{"id":"bad","user":"x","hits":"many"}`)
		upsert(t, c, `{"id":"good","user":"y","hits":1}`)

		_, err := tv.Read("bad")
		require.ErrorIs(t, err, ttlstore.ErrDecode)
		var te *json.UnmarshalTypeError
		require.ErrorAs(t, err, &te)
		require.Contains(t, err.Error(), `ttlstore: read "bad" as ttlstore_test.session: json: cannot unmarshal string into Go struct field session.hits of type int`)
		require.Zero(t, tv.CacheLen(), "a failed decode caches nothing")

		var good []session
		var errs []error
		for v, err := range tv.All() {
			if err != nil {
				errs = append(errs, err)
				require.Zero(t, v)
				continue
			}
			good = append(good, v)
		}
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], ttlstore.ErrDecode)
		require.Contains(t, errs[0].Error(), `ttlstore: query "bad" as ttlstore_test.session:`)
		require.Len(t, good, 1)
		require.Equal(t, "y", good[0].User)
		require.Equal(t, 1, tv.CacheLen())
		checkCache(t, tv)
	})
}

// TestTypedQuery checks that Query yields the matching live documents, and
// stops when the loop breaks.
func TestTypedQuery(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never)})
	tv := ttlstore.NewTyped[session](c)
	for i := range 10 {
		_, err := tv.Upsert(session{ID: "s" + strconv.Itoa(i), Hits: i, TTL: int32(5 + i%2*100)})
		require.NoError(t, err)
	}
	clk.Add(5 * time.Second) // the even ones expire
	var hits []int
	for v, err := range tv.Query(func(s session) bool { return s.Hits >= 4 }) {
		require.NoError(t, err)
		hits = append(hits, v.Hits)
	}
	slices.Sort(hits)
	require.Equal(t, []int{5, 7, 9}, hits)

	n := 0
	for range tv.All() {
		n++
		break
	}
	require.Equal(t, 1, n)
}

// TestTypedReadOrLoad checks the typed read-through: a miss loads once and
// caches what was stored; a hit loads nothing.
func TestTypedReadOrLoad(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60)})
	tv := ttlstore.NewTyped[profile](c)
	var loads atomic.Int32
	load := func(_ context.Context, id string) (profile, error) {
		loads.Add(1)
		if id == "fails" {
			return profile{}, errors.New("source down")
		}
		return profile{ID: id, Tags: []string{"loaded"}}, nil
	}
	ctx := context.Background()

	v, err := tv.ReadOrLoad(ctx, "p1", load)
	require.NoError(t, err)
	require.Equal(t, []string{"loaded"}, v.Tags)
	require.EqualValues(t, 1, loads.Load())
	require.Equal(t, 1, tv.CacheLen(), "what was stored is cached")
	require.Equal(t, decoded[profile](t, c, "p1"), v)

	v.Tags[0] = "mine"
	v, err = tv.ReadOrLoad(ctx, "p1", load)
	require.NoError(t, err)
	require.Equal(t, []string{"loaded"}, v.Tags)
	require.EqualValues(t, 1, loads.Load(), "a hit")

	clk.Add(time.Minute)
	v, err = tv.ReadOrLoad(ctx, "p1", load)
	require.NoError(t, err)
	require.Equal(t, []string{"loaded"}, v.Tags)
	require.EqualValues(t, 2, loads.Load(), "expired: loaded again")

	_, err = tv.ReadOrLoad(ctx, "fails", load)
	require.ErrorContains(t, err, "source down")
	_, err = tv.ReadOrLoad(ctx, "wrong", func(context.Context, string) (profile, error) {
		return profile{ID: "other"}, nil
	})
	require.ErrorIs(t, err, ttlstore.ErrInvalidDocument)

	require.Zero(t, c.Sweep(), "the reload replaced the expired p1")
	require.Equal(t, 1, tv.CacheLen())
	checkCache(t, tv)
}

// TestTypedClosed checks a view of a closed collection: single-document
// calls return ErrClosed; iteration goes on over what was stored.
func TestTypedClosed(t *testing.T) {
	c, err := ttlstore.New(ttlstore.Options{Clock: newMock(), SweepInterval: ttlstore.ManualSweep})
	require.NoError(t, err)
	tv := ttlstore.NewTyped[session](c)
	_, err = tv.Upsert(session{ID: "a", User: "ada"})
	require.NoError(t, err)
	require.NoError(t, c.Close())

	_, err = tv.Read("a")
	require.ErrorIs(t, err, ttlstore.ErrClosed)
	_, err = tv.Upsert(session{ID: "b"})
	require.ErrorIs(t, err, ttlstore.ErrClosed)
	_, err = tv.ReadOrLoad(context.Background(), "b", func(context.Context, string) (session, error) {
		t.Fatal("load called after Close")
		return session{}, nil
	})
	require.ErrorIs(t, err, ttlstore.ErrClosed)
	n := 0
	for v, err := range ttlstore.NewTyped[session](c).All() {
		require.NoError(t, err)
		require.Equal(t, "ada", v.User)
		n++
	}
	require.Equal(t, 1, n)
}

// TestTypedDurable checks that a view works the same on a durable
// collection, across a reopen.
func TestTypedDurable(t *testing.T) {
	dir := t.TempDir()
	clk := newMock()
	opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), Clock: clk, SweepInterval: ttlstore.ManualSweep}
	c, err := ttlstore.Open(dir, opts)
	require.NoError(t, err)
	tv := ttlstore.NewTyped[profile](c)
	want, err := tv.Create(profile{ID: "p1", Tags: []string{"a"}, Best: &score{Points: []int{1}}})
	require.NoError(t, err)
	_, err = tv.Upsert(profile{ID: "p2", TTL: 10})
	require.NoError(t, err)
	require.Equal(t, 2, tv.CacheLen())
	require.NoError(t, c.Close())

	c, err = ttlstore.Open(dir, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	tv = ttlstore.NewTyped[profile](c)
	got, err := tv.Read("p1")
	require.NoError(t, err)
	require.Equal(t, want, got)
	got.Best.Points[0] = 7
	got, _ = tv.Read("p1")
	require.Equal(t, []int{1}, got.Best.Points)

	clk.Add(10 * time.Second)
	_, err = tv.Read("p2")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	require.NoError(t, c.Compact())
	require.NoError(t, c.Delete("p1"))
	require.Zero(t, tv.CacheLen())
	checkCache(t, tv)
}

// TestTypedModel runs random sequences of typed and untyped operations on
// a collection with two views, a flat one and one with references, and
// after every operation requires that a typed read of every id finds what
// Collection.Read finds, decoded afresh (or the same error); that each
// view's cache holds only stored versions, with counters that agree; and
// that a value a caller changed has changed nothing. The collection's own
// behaviour is TestModel's subject; this one checks that the views follow
// it through every kind of write, removal and expiry.
func TestTypedModel(t *testing.T) {
	if ttlstore.RaceRepeat(t) {
		t.Skip("one goroutine: a repeat under -race finds nothing the first run did not (see RaceRepeat)")
	}
	ids := []string{"a", "b", "c"}
	rapid.Check(t, func(rt *rapid.T) {
		def := rapid.SampledFrom([]*int32{nil, ttlstore.TTL(ttlstore.Never), ttlstore.TTL(3)}).Draw(rt, "DefaultTTL")
		c, clk := newCollection(t, ttlstore.Options{DefaultTTL: def})
		flat := ttlstore.NewTyped[session](c)
		deep := ttlstore.NewTyped[profile](c)
		n := 0
		doc := func(rt *rapid.T) profile {
			n++
			ttl := rapid.SampledFrom([]int32{0, -1, 2, 5}).Draw(rt, "ttl")
			return profile{ID: rapid.SampledFrom(ids).Draw(rt, "id"), TTL: ttl,
				Tags: []string{strconv.Itoa(n)}, Attrs: map[string][]string{"n": {strconv.Itoa(n)}}}
		}
		ignore := func(err error) {
			if err != nil && !errors.Is(err, ttlstore.ErrNotFound) && !errors.Is(err, ttlstore.ErrConflict) && !errors.Is(err, ttlstore.ErrPreconditionFailed) {
				rt.Fatal(err)
			}
		}
		spoil := func(p profile) { // a caller changing what it got
			if len(p.Tags) > 0 {
				p.Tags[0] = "spoilt"
			}
			if p.Attrs != nil {
				p.Attrs["n"][0] = "spoilt"
			}
		}
		actions := map[string]func(*rapid.T){
			"typed upsert":  func(rt *rapid.T) { p, err := deep.Upsert(doc(rt)); ignore(err); spoil(p) },
			"typed create":  func(rt *rapid.T) { p, err := deep.Create(doc(rt)); ignore(err); spoil(p) },
			"typed replace": func(rt *rapid.T) { p, err := deep.Replace(doc(rt)); ignore(err); spoil(p) },
			"flat upsert": func(rt *rapid.T) {
				_, err := flat.Upsert(session{ID: rapid.SampledFrom(ids).Draw(rt, "id"), User: "u"})
				ignore(err)
			},
			"untyped upsert": func(rt *rapid.T) {
				b, _ := json.Marshal(doc(rt))
				_, err := c.Upsert(b)
				ignore(err)
			},
			"delete": func(rt *rapid.T) { ignore(c.Delete(rapid.SampledFrom(ids).Draw(rt, "id"))) },
			"touch":  func(rt *rapid.T) { _, err := c.Touch(rapid.SampledFrom(ids).Draw(rt, "id")); ignore(err) },
			"read": func(rt *rapid.T) {
				p, err := deep.Read(rapid.SampledFrom(ids).Draw(rt, "id"))
				ignore(err)
				spoil(p)
			},
			"all": func(rt *rapid.T) {
				for p, err := range deep.All() {
					ignore(err)
					spoil(p)
				}
			},
			"advance": func(rt *rapid.T) {
				clk.Add(time.Duration(rapid.IntRange(1, 4000).Draw(rt, "ms")) * time.Millisecond)
			},
			"sweep": func(*rapid.T) { c.Sweep() },
			"set DefaultTTL": func(rt *rapid.T) {
				v := rapid.SampledFrom([]*int32{nil, ttlstore.TTL(ttlstore.Never), ttlstore.TTL(2), ttlstore.TTL(4)}).Draw(rt, "to")
				require.NoError(rt, c.SetDefaultTTL(v))
			},
			"": func(rt *rapid.T) { // the check, after every action
				for _, id := range ids {
					d, err := c.Read(id)
					p, perr := deep.Read(id)
					s, serr := flat.Read(id)
					if err != nil {
						require.EqualError(rt, perr, err.Error())
						require.EqualError(rt, serr, err.Error())
						continue
					}
					var wantP profile
					var wantS session
					require.NoError(rt, d.Decode(&wantP))
					require.NoError(rt, d.Decode(&wantS))
					require.NoError(rt, perr)
					require.NoError(rt, serr)
					require.Equal(rt, wantP, p)
					require.Equal(rt, wantS, s)
					spoil(p)
				}
				require.NoError(rt, flat.CheckCache())
				require.NoError(rt, deep.CheckCache())
				st := c.Stats()
				require.LessOrEqual(rt, deep.CacheLen(), st.Live+st.Expired)
			},
		}
		rt.Repeat(actions)
	})
}

// TestTypedConcurrent runs typed readers, which change every value they
// get, alongside typed and untyped writers, deletes, touches, sweeps and
// DefaultTTL changes on a few ids; under -race it finds any memory a
// returned value shares with the cache or another reader. Each stored
// version's fields agree with each other, so a read that mixed two
// versions would show. Once they stop, the cache must hold only stored
// versions, and nothing once everything is deleted.
func TestTypedConcurrent(t *testing.T) {
	const (
		ids     = 16
		readers = 3
	)
	ops := 1000
	if ttlstore.RaceRepeat(t) {
		ops = 300 // the repeats of -count under -race
	}
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(3)})
	flat := ttlstore.NewTyped[session](c)
	deep := ttlstore.NewTyped[profile](c)
	id := func(i int) string { return "d" + strconv.Itoa(i%ids) }
	version := func(i, n int) profile {
		s := strconv.Itoa(n)
		return profile{ID: id(i), Tags: []string{s, s}, Attrs: map[string][]string{"n": {s}}, Best: &score{Label: s, Points: []int{n}}}
	}
	check := func(p profile) {
		s := p.Tags[0]
		if p.Tags[1] != s || p.Attrs["n"][0] != s || p.Best.Label != s || strconv.Itoa(p.Best.Points[0]) != s {
			panic(fmt.Sprintf("a read mixed versions: %+v", p))
		}
		p.Tags[0], p.Attrs["n"][0], p.Best.Points[0] = "x", "x", -1 // the reader's own
		p.Tags = append(p.Tags, "x")
		p.Attrs["x"] = nil
	}

	var wg sync.WaitGroup
	var stop atomic.Bool
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := r; !stop.Load(); i++ {
				if p, err := deep.Read(id(i)); err == nil {
					check(p)
				} else if !errors.Is(err, ttlstore.ErrNotFound) {
					panic(err)
				}
				if s, err := flat.Read(id(i)); err == nil && s.ID != id(i) {
					panic("wrong document")
				}
				if i%50 == 0 {
					for p, err := range deep.All() {
						if err == nil {
							check(p)
						}
					}
				}
			}
		}()
	}
	var writers sync.WaitGroup
	for w := range 3 {
		writers.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer writers.Done()
			for i := range ops {
				n := w*ops + i
				var err error
				switch i % 8 {
				case 0, 1, 2:
					var p profile
					p, err = deep.Upsert(version(i, n))
					if err == nil {
						check(p)
					}
				case 3:
					var b []byte
					b, err = json.Marshal(version(i, n))
					if err == nil {
						_, err = c.Upsert(b)
					}
				case 4:
					err = c.Delete(id(i))
				case 5:
					_, err = c.Touch(id(i))
				case 6:
					_, err = deep.ReadOrLoad(context.Background(), id(i), func(_ context.Context, s string) (profile, error) {
						v := version(i, n)
						v.ID = s
						return v, nil
					})
				case 7:
					switch w {
					case 0:
						clk.Add(time.Second)
					case 1:
						c.Sweep()
					default:
						err = c.SetDefaultTTL(ttlstore.TTL(int32(2 + i%3)))
					}
				}
				if err != nil && !errors.Is(err, ttlstore.ErrNotFound) {
					panic(err)
				}
			}
		}()
	}
	writers.Wait()
	stop.Store(true)
	wg.Wait()

	checkCache(t, flat)
	checkCache(t, deep)
	for i := range ids {
		if p, err := deep.Read(id(i)); err == nil {
			require.Equal(t, decoded[profile](t, c, id(i)), p)
		}
	}
	clk.Add(time.Hour)
	c.Sweep()
	require.Zero(t, flat.CacheLen())
	require.Zero(t, deep.CacheLen())
	require.Zero(t, flat.CacheBytes())
	require.Zero(t, deep.CacheBytes())
}

func ExampleTyped() {
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), Clock: exampleClock()})
	defer c.Close()

	type Session struct {
		ID    string   `json:"id"`
		TTL   int32    `json:"ttl,omitempty"`
		User  string   `json:"user"`
		Roles []string `json:"roles"`
		ETag  string   `json:"_etag,omitempty"` // filled in from the stored document
	}
	sessions := ttlstore.NewTyped[Session](c)

	s, _ := sessions.Create(Session{ID: "s1", User: "ada", Roles: []string{"admin"}})
	fmt.Println(s.User, s.Roles, len(s.ETag))

	s.Roles[0] = "guest"       // the caller's copy: nothing stored changes
	s, _ = sessions.Read("s1") // a hit: no JSON decoded
	fmt.Println(s.Roles, sessions.CacheLen())

	_ = c.Delete("s1") // the collection's own calls keep the view up to date
	_, err := sessions.Read("s1")
	fmt.Println(errors.Is(err, ttlstore.ErrNotFound), sessions.CacheLen())
	// Output:
	// ada [admin] 16
	// [admin] 1
	// true 0
}
