package ttlstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// The tests in this file follow the rules of shared/spec/ttl-semantics.md,
// R1 to R16, through the public API only.

// R1: every cell of the matrix, observed through a Collection: the document
// is visible one second before the expiry the cell predicts and gone at it,
// and never-expiring documents survive 100 years.
func TestR1MatrixThroughCollection(t *testing.T) {
	const n, m = 600, 30
	defaults := map[string]*int32{"off": nil, "-1": ttlstore.TTL(ttlstore.Never), "n": ttlstore.TTL(n)}
	docs := map[string]string{
		"absent": `{"id":"d"}`,
		"-1":     `{"id":"d","ttl":-1}`,
		"m":      `{"id":"d","ttl":30}`,
	}
	// want[doc][default]: seconds to expiry, 0 for never.
	want := map[string]map[string]int{
		"absent": {"off": 0, "-1": 0, "n": n},
		"-1":     {"off": 0, "-1": 0, "n": 0},
		"m":      {"off": 0, "-1": m, "n": m},
	}
	for docName, doc := range docs {
		for defName, def := range defaults {
			t.Run("ttl "+docName+", default "+defName, func(t *testing.T) {
				c, clk := newCollection(t, ttlstore.Options{DefaultTTL: def})
				d := upsert(t, c, doc)
				secs := want[docName][defName]
				exp, ok := d.ExpiresAt()
				if secs == 0 {
					assert.False(t, ok, "ExpiresAt")
					clk.Add(100 * 365 * 24 * time.Hour)
					assert.True(t, live(t, c, "d"), "a never-expiring document expired")
					assert.Equal(t, 0, c.Stats().Expired)
					return
				}
				require.True(t, ok)
				assert.Equal(t, start.Add(time.Duration(secs)*time.Second), exp)
				clk.Add(time.Duration(secs)*time.Second - time.Nanosecond)
				assert.True(t, live(t, c, "d"), "gone before its expiry")
				clk.Add(time.Nanosecond)
				assert.False(t, live(t, c, "d"), "visible at its expiry")
			})
		}
	}
}

// R2: _ts = 100, ttl = 10: visible at 109.999 s, gone at 110 s.
func TestR2BoundarySecond(t *testing.T) {
	clk := newMock()
	clk.Set(time.Unix(100, 400_000_000)) // _ts is the whole second: 100
	c, _ := newCollection(t, ttlstore.Options{Clock: clk, DefaultTTL: ttlstore.TTL(ttlstore.Never)})
	d := upsert(t, c, `{"id":"x","ttl":10}`)
	assert.Equal(t, time.Unix(100, 0).UTC(), d.TS())
	clk.Set(time.Unix(109, 999_000_000))
	assert.True(t, live(t, c, "x"), "at 109.999 s")
	clk.Set(time.Unix(110, 0))
	assert.False(t, live(t, c, "x"), "at 110 s")
}

// R3: writes set _ts and a new _etag, ignore the caller's, and restart the
// countdown.
func TestR3WritesStampAndRestartCountdown(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10)})
	d1 := upsert(t, c, `{"id":"a","_ts":1,"_etag":"forged","v":1}`)
	m := members(t, d1)
	assert.JSONEq(t, fmt.Sprint(start.Unix()), string(m["_ts"]))
	assert.NotEqual(t, `"forged"`, string(m["_etag"]))
	assert.Equal(t, `"`+d1.ETag()+`"`, string(m["_etag"]))
	assert.Equal(t, start.UTC(), d1.TS())

	writes := map[string]func() (ttlstore.Document, error){
		"upsert":  func() (ttlstore.Document, error) { return c.Upsert([]byte(`{"id":"a","v":2}`)) },
		"replace": func() (ttlstore.Document, error) { return c.Replace([]byte(`{"id":"a","v":3}`)) },
		"replace-ifmatch": func() (ttlstore.Document, error) {
			d, _ := c.Read("a")
			return c.ReplaceIfMatch([]byte(`{"id":"a","v":4}`), d.ETag())
		},
		"touch": func() (ttlstore.Document, error) { return c.Touch("a") },
	}
	prev := d1
	for _, name := range []string{"upsert", "replace", "replace-ifmatch", "touch"} {
		t.Run(name, func(t *testing.T) {
			clk.Add(8 * time.Second) // 8 s into a 10 s life
			d, err := writes[name]()
			require.NoError(t, err)
			assert.NotEqual(t, prev.ETag(), d.ETag(), "new _etag")
			assert.Equal(t, clk.Now().UTC(), d.TS(), "new _ts")
			clk.Add(8 * time.Second) // 16 s after the previous write: alive only if restarted
			assert.True(t, live(t, c, "a"), "countdown did not restart")
			clk.Add(-8 * time.Second)
			prev = d
		})
	}
	// A create after expiry also starts afresh.
	clk.Add(10 * time.Second)
	require.False(t, live(t, c, "a"))
	d, err := c.Create([]byte(`{"id":"a","_ts":5}`))
	require.NoError(t, err)
	assert.Equal(t, clk.Now().Unix(), d.TS().Unix())
}

// R4: the stored document keeps its ttl exactly as written, gets none added,
// and only the lowercase top-level "ttl" counts.
func TestR4TTLKeptAsWrittenAndOnlyTopLevelCounts(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		wantTTL string // "" when the stored document must have no "ttl"
		expires bool   // under DefaultTTL -1 after a year
	}{
		{"ttl kept", `{"id":"x","ttl":30}`, "30", true},
		{"ttl -1 kept", `{"id":"x","ttl":-1}`, "-1", false},
		{"no ttl, none added", `{"id":"x"}`, "", false},
		{"uppercase TTL means nothing", `{"id":"x","TTL":5}`, "", false},
		{"TimeToLive means nothing", `{"id":"x","TimeToLive":5}`, "", false},
		{"nested ttl means nothing", `{"id":"x","meta":{"ttl":5}}`, "", false},
		{"ttl inside an array means nothing", `{"id":"x","a":[{"ttl":5}]}`, "", false},
		{"escaped key is the ttl", `{"id":"x","t\u0074l":30}`, "30", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never)})
			d := upsert(t, c, tt.doc)
			m := members(t, d)
			raw, has := m["ttl"]
			if tt.wantTTL == "" {
				assert.False(t, has, "a ttl was added: %s", d.JSON())
				_, ok := d.TTL()
				assert.False(t, ok)
			} else {
				assert.Equal(t, tt.wantTTL, string(raw))
				got, ok := d.TTL()
				assert.True(t, ok)
				assert.Equal(t, tt.wantTTL, fmt.Sprint(got))
			}
			// Everything but _ts/_etag survives byte for byte.
			var in map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(tt.doc), &in))
			delete(m, "_ts")
			delete(m, "_etag")
			assert.Equal(t, in, m)
			clk.Add(365 * 24 * time.Hour)
			assert.Equal(t, !tt.expires, live(t, c, "x"))
		})
	}
}

// R5: a write replaces the whole document.
func TestR5WriteReplacesWholeDocument(t *testing.T) {
	t.Run("dropping ttl inherits the default from the new _ts", func(t *testing.T) {
		c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(100)})
		upsert(t, c, `{"id":"x","ttl":10,"v":1}`)
		clk.Add(5 * time.Second)
		d, err := c.Replace([]byte(`{"id":"x","v":2}`))
		require.NoError(t, err)
		exp, ok := d.ExpiresAt()
		require.True(t, ok)
		assert.Equal(t, clk.Now().Add(100*time.Second).UTC(), exp)
		assert.NotContains(t, members(t, d), "ttl")
		clk.Add(99 * time.Second)
		assert.True(t, live(t, c, "x"))
		clk.Add(time.Second)
		assert.False(t, live(t, c, "x"))
	})
	t.Run("ttl -1 stops expiry", func(t *testing.T) {
		c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(100)})
		upsert(t, c, `{"id":"x"}`)
		clk.Add(50 * time.Second)
		upsert(t, c, `{"id":"x","ttl":-1}`)
		clk.Add(1000 * 24 * time.Hour)
		assert.True(t, live(t, c, "x"))
	})
	t.Run("other members are dropped", func(t *testing.T) {
		c, _ := newCollection(t, ttlstore.Options{})
		upsert(t, c, `{"id":"x","a":1,"b":2}`)
		d := upsert(t, c, `{"id":"x","c":3}`)
		m := members(t, d)
		assert.NotContains(t, m, "a")
		assert.NotContains(t, m, "b")
		assert.Equal(t, "3", string(m["c"]))
	})
}

// R6: invalid ttl values are rejected under every DefaultTTL, name the value,
// and change nothing.
func TestR6InvalidTTLRejected(t *testing.T) {
	bad := []string{"0", "null", "-2", "2147483648", "1.5", `"10"`, "true", "false", "{}", "[]", `{"s":1}`, "[1]", "10.0", "1e1", "-0", "-2147483648", "99999999999999999999"}
	for defName, def := range map[string]*int32{"off": nil, "-1": ttlstore.TTL(-1), "n": ttlstore.TTL(60)} {
		for _, v := range bad {
			t.Run("default "+defName+" ttl "+v, func(t *testing.T) {
				c, _ := newCollection(t, ttlstore.Options{DefaultTTL: def})
				before := upsert(t, c, `{"id":"x","v":"before"}`)
				for op, write := range writers(c) {
					_, err := write([]byte(`{"id":"x","v":"after","ttl":` + v + `}`))
					require.Error(t, err, op)
					assert.ErrorIs(t, err, ttlstore.ErrInvalidTTL, op)
					assert.Contains(t, err.Error(), v, "%s: the error names the value", op)
				}
				after, err := c.Read("x")
				require.NoError(t, err)
				assert.Equal(t, before.JSON(), after.JSON(), "a rejected write changed the document")
				assert.Equal(t, 1, c.Len())
			})
		}
	}
}

// writers returns the three whole-document writes, for tests that apply the
// same check to each.
func writers(c *ttlstore.Collection) map[string]func([]byte) (ttlstore.Document, error) {
	return map[string]func([]byte) (ttlstore.Document, error){
		"create":  func(b []byte) (ttlstore.Document, error) { return c.Create(b) },
		"upsert":  func(b []byte) (ttlstore.Document, error) { return c.Upsert(b) },
		"replace": func(b []byte) (ttlstore.Document, error) { return c.Replace(b) },
	}
}

// R7: DefaultTTL is validated at construction and when changed.
func TestR7DefaultTTLValidated(t *testing.T) {
	for _, v := range []int32{0, -2, -100, -2147483648} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			_, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(v), SweepInterval: ttlstore.ManualSweep})
			assert.ErrorIs(t, err, ttlstore.ErrInvalidTTL)
			assert.Contains(t, err.Error(), fmt.Sprint(v))

			c, _ := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60)})
			err = c.SetDefaultTTL(ttlstore.TTL(v))
			assert.ErrorIs(t, err, ttlstore.ErrInvalidTTL)
			assert.Equal(t, int32(60), *c.DefaultTTL(), "a rejected change changed the DefaultTTL")
		})
	}
	for _, v := range []*int32{nil, ttlstore.TTL(-1), ttlstore.TTL(1), ttlstore.TTL(ttlstore.MaxTTL)} {
		c, _ := newCollection(t, ttlstore.Options{DefaultTTL: v})
		assert.Equal(t, v, c.DefaultTTL())
		require.NoError(t, c.SetDefaultTTL(v))
	}
}

// R8: ids and sizes.
func TestR8DocumentValidation(t *testing.T) {
	long := strings.Repeat("a", 1023)
	tests := []struct {
		name string
		doc  string
		want error // nil: accepted
	}{
		{"longest id", `{"id":"` + long + `"}`, nil},
		{"id too long", `{"id":"` + long + `b"}`, ttlstore.ErrInvalidDocument},
		{"multi-byte id at the limit", `{"id":"` + strings.Repeat("é", 511) + `a"}`, nil},
		{"multi-byte id over the limit", `{"id":"` + strings.Repeat("é", 512) + `"}`, ttlstore.ErrInvalidDocument},
		{"missing id", `{"v":1}`, ttlstore.ErrInvalidDocument},
		{"empty id", `{"id":""}`, ttlstore.ErrInvalidDocument},
		{"numeric id", `{"id":1}`, ttlstore.ErrInvalidDocument},
		{"null id", `{"id":null}`, ttlstore.ErrInvalidDocument},
		{"slash in id", `{"id":"a/b"}`, ttlstore.ErrInvalidDocument},
		{"backslash in id", `{"id":"a\\b"}`, ttlstore.ErrInvalidDocument},
		{"escaped slash in id", `{"id":"a\/b"}`, ttlstore.ErrInvalidDocument},
		{"duplicate id", `{"id":"a","id":"b"}`, ttlstore.ErrInvalidDocument},
		{"array", `[{"id":"a"}]`, ttlstore.ErrInvalidDocument},
		{"invalid JSON", `{"id":"a",}`, ttlstore.ErrInvalidDocument},
		{"invalid UTF-8", "{\"id\":\"a\xff\"}", ttlstore.ErrInvalidDocument},
		{"escaped id", `{"id":"caf\u00e9"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCollection(t, ttlstore.Options{})
			_, err := c.Create([]byte(tt.doc))
			if tt.want == nil {
				require.NoError(t, err)
				assert.Equal(t, 1, c.Len())
				return
			}
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, 0, c.Len())
		})
	}
	t.Run("size limit", func(t *testing.T) {
		c, _ := newCollection(t, ttlstore.Options{MaxDocumentSize: 100})
		pad := func(n int) []byte { // a document of exactly n bytes
			return []byte(`{"id":"a","p":"` + strings.Repeat("x", n-len(`{"id":"a","p":""}`)) + `"}`)
		}
		_, err := c.Create(pad(100))
		require.NoError(t, err)
		_, err = c.Upsert(pad(101))
		assert.ErrorIs(t, err, ttlstore.ErrTooLarge)
		assert.NotErrorIs(t, err, ttlstore.ErrInvalidDocument, "distinct errors")
	})
	t.Run("default limit is 2 MiB", func(t *testing.T) {
		c, _ := newCollection(t, ttlstore.Options{})
		doc := []byte(`{"id":"a","p":"` + strings.Repeat("x", 2<<20) + `"}`)
		_, err := c.Create(doc)
		assert.ErrorIs(t, err, ttlstore.ErrTooLarge)
	})
}

// R9: from the instant a document expires no operation sees it, with or
// without a sweep, and after Close.
func TestR9ExpiredIsInvisibleToEveryOperation(t *testing.T) {
	for _, swept := range []bool{false, true} {
		t.Run(fmt.Sprintf("swept=%v", swept), func(t *testing.T) {
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10)})
			old := upsert(t, c, `{"id":"x","v":"old"}`)
			upsert(t, c, `{"id":"keep","ttl":-1}`)
			clk.Add(10 * time.Second)
			if swept {
				require.Equal(t, 1, c.Sweep())
			} else {
				require.Equal(t, 1, c.Stats().Expired)
			}
			_, err := c.Read("x")
			assert.ErrorIs(t, err, ttlstore.ErrNotFound)
			_, err = c.Replace([]byte(`{"id":"x"}`))
			assert.ErrorIs(t, err, ttlstore.ErrNotFound)
			_, err = c.ReplaceIfMatch([]byte(`{"id":"x"}`), old.ETag())
			assert.ErrorIs(t, err, ttlstore.ErrNotFound, "If-Match with the old _etag")
			_, err = c.Touch("x")
			assert.ErrorIs(t, err, ttlstore.ErrNotFound)
			assert.ErrorIs(t, c.Delete("x"), ttlstore.ErrNotFound)
			assert.ErrorIs(t, c.DeleteIfMatch("x", old.ETag()), ttlstore.ErrNotFound)
			assert.Equal(t, 1, c.Len())
			assert.Equal(t, []string{"keep"}, ids(c))
			for range c.Query(func(d ttlstore.Document) bool { return d.ID() == "x" }) {
				t.Error("Query yielded the expired document")
			}
			require.NoError(t, c.CheckInvariants())

			d, err := c.Create([]byte(`{"id":"x","v":"new"}`))
			require.NoError(t, err, "create over an expired document conflicts")
			assert.NotEqual(t, old.ETag(), d.ETag())
			assert.Equal(t, `"new"`, string(members(t, d)["v"]))
			clk.Add(10 * time.Second)
			d, err = c.Upsert([]byte(`{"id":"x","v":"newer"}`))
			require.NoError(t, err)
			assert.Equal(t, clk.Now().UTC(), d.TS(), "upsert over an expired document inserts anew")
		})
	}
	t.Run("after Close", func(t *testing.T) {
		c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10)})
		upsert(t, c, `{"id":"x"}`)
		upsert(t, c, `{"id":"y","ttl":100}`)
		require.NoError(t, c.Close())
		assert.Equal(t, 2, c.Len())
		clk.Add(10 * time.Second)
		assert.Equal(t, 1, c.Len())
		assert.Equal(t, []string{"y"}, ids(c))
		_, err := c.Read("y")
		assert.ErrorIs(t, err, ttlstore.ErrClosed)
	})
}

// R10: the sweeper removes only expired documents, in bounded batches, and
// never-expiring documents are not indexed (the invariant check verifies the
// index after every test).
func TestR10SweepRemovesOnlyExpired(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10), SweepBatch: 2})
	for i := range 20 {
		upsert(t, c, fmt.Sprintf(`{"id":"short%d"}`, i))
		upsert(t, c, fmt.Sprintf(`{"id":"long%d","ttl":100}`, i))
		upsert(t, c, fmt.Sprintf(`{"id":"never%d","ttl":-1}`, i))
	}
	assert.Equal(t, 0, c.Sweep(), "nothing has expired yet")
	clk.Add(10 * time.Second)
	assert.Equal(t, ttlstore.Stats{Live: 40, Expired: 20}, ruleStats(c))
	assert.Equal(t, 20, c.Sweep())
	assert.Equal(t, ttlstore.Stats{Live: 40, Expired: 0, Swept: 20}, ruleStats(c))
	require.NoError(t, c.CheckInvariants())
	assert.Equal(t, 0, c.Sweep())
	clk.Add(90 * time.Second)
	assert.Equal(t, 20, c.Sweep())
	assert.Equal(t, ttlstore.Stats{Live: 20, Swept: 40}, ruleStats(c))
}

// R11: OnExpire is called for each swept document, after the lock is
// released (the callback itself reads and writes the collection, which would
// deadlock otherwise), and only for expiry, not for explicit deletes.
func TestR11OnExpireAfterUnlock(t *testing.T) {
	var c *ttlstore.Collection
	var got []string
	c, clk := newCollection(t, ttlstore.Options{
		DefaultTTL: ttlstore.TTL(10),
		OnExpire: func(d ttlstore.Document) {
			got = append(got, d.ID())
			_, err := c.Read(d.ID())
			assert.ErrorIs(t, err, ttlstore.ErrNotFound)
			_, err = c.Upsert([]byte(`{"id":"log-` + d.ID() + `","ttl":-1}`))
			assert.NoError(t, err)
		},
	})
	upsert(t, c, `{"id":"a"}`)
	upsert(t, c, `{"id":"b"}`)
	upsert(t, c, `{"id":"c"}`)
	require.NoError(t, c.Delete("c"))
	clk.Add(10 * time.Second)
	assert.Equal(t, 2, c.Sweep())
	slicesSort(got)
	assert.Equal(t, []string{"a", "b"}, got, "deleted documents are not reported")
	assert.Equal(t, []string{"log-a", "log-b"}, ids(c))
}

// R12: SetDefaultTTL is atomic: while it flips between off and 1000 s,
// iterations and Stats see every document under one setting or the other.
func TestR12SetDefaultTTLIsAtomic(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	const n = 500
	for i := range n {
		upsert(t, c, fmt.Sprintf(`{"id":"d%d"}`, i))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			p := ttlstore.TTL(1000)
			if i%2 == 1 {
				p = nil
			}
			assert.NoError(t, c.SetDefaultTTL(p))
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		withExpiry := 0
		for d := range c.All() {
			if _, ok := d.ExpiresAt(); ok {
				withExpiry++
			}
		}
		if withExpiry != 0 && withExpiry != n {
			t.Fatalf("an iteration saw %d of %d documents with an expiry: a mix of settings", withExpiry, n)
		}
	}
	require.NoError(t, c.CheckInvariants())
}

// R13: expiry is final: a document expired under the old DefaultTTL stays
// gone after a change that would have kept it, and is reported.
func TestR13ExpiryIsFinal(t *testing.T) {
	for name, next := range map[string]*int32{"raise": ttlstore.TTL(1000), "never": ttlstore.TTL(-1), "off": nil} {
		t.Run(name, func(t *testing.T) {
			var reported []string
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10), OnExpire: func(d ttlstore.Document) { reported = append(reported, d.ID()) }})
			upsert(t, c, `{"id":"gone"}`)
			clk.Add(5 * time.Second)
			upsert(t, c, `{"id":"kept"}`)
			clk.Add(5 * time.Second) // gone expires now; kept has 5 s left
			require.False(t, live(t, c, "gone"))
			require.NoError(t, c.SetDefaultTTL(next))
			assert.False(t, live(t, c, "gone"), "an expired document came back")
			assert.True(t, live(t, c, "kept"))
			assert.Equal(t, []string{"gone"}, reported)
			assert.Equal(t, ttlstore.Stats{Live: 1, Swept: 1}, ruleStats(c))
		})
	}
}

// R14: TTL off means nothing expires, even with its own ttl; turning it on
// again applies stored ttls from _ts, expiring old documents at once.
func TestR14TurningTTLOffAndOn(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(-1)})
	upsert(t, c, `{"id":"own30","ttl":30}`)
	upsert(t, c, `{"id":"own1000","ttl":1000}`)
	upsert(t, c, `{"id":"none"}`)
	require.NoError(t, c.SetDefaultTTL(nil))
	assert.Equal(t, ttlstore.Stats{Live: 3}, ruleStats(c))
	clk.Add(100 * time.Second)
	assert.True(t, live(t, c, "own30"), "a ttl counted while TTL was off")
	assert.Equal(t, 0, c.Sweep())
	d, err := c.Read("own30")
	require.NoError(t, err)
	_, ok := d.ExpiresAt()
	assert.False(t, ok)
	ttl, ok := d.TTL()
	assert.True(t, ok)
	assert.Equal(t, int32(30), ttl, "the stored ttl is kept while TTL is off")

	require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(-1)))
	assert.False(t, live(t, c, "own30"), "older than its ttl: expires at once")
	assert.True(t, live(t, c, "own1000"))
	d, err = c.Read("own1000")
	require.NoError(t, err)
	exp, ok := d.ExpiresAt()
	require.True(t, ok)
	assert.Equal(t, start.Add(1000*time.Second).UTC(), exp, "counted from _ts")
	assert.True(t, live(t, c, "none"))
	assert.Equal(t, ttlstore.Stats{Live: 2, Expired: 1}, ruleStats(c))
}

// R15: lowering DefaultTTL hides documents past it at once, with no write;
// raising it extends documents not yet expired.
func TestR15LowerAndRaiseDefaultTTL(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(100)})
	upsert(t, c, `{"id":"old"}`)
	clk.Add(50 * time.Second)
	upsert(t, c, `{"id":"young"}`)
	clk.Add(10 * time.Second) // old is 60 s old, young 10 s

	require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(30)))
	assert.False(t, live(t, c, "old"), "lowering did not hide a document past the new TTL")
	assert.True(t, live(t, c, "young"))

	require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(1000)))
	clk.Add(500 * time.Second)
	assert.True(t, live(t, c, "young"), "raising did not extend")
	assert.False(t, live(t, c, "old"), "a lowered-away document came back")
	clk.Add(490 * time.Second)
	assert.False(t, live(t, c, "young"))
}

// R16: the largest ttl works and its arithmetic does not overflow, also at
// the far end of what a clock can show.
func TestR16LargestTTL(t *testing.T) {
	for _, at := range []time.Time{start, time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), time.Unix(1<<62, 0)} {
		t.Run(at.String(), func(t *testing.T) {
			clk := newMock()
			clk.Set(at)
			c, _ := newCollection(t, ttlstore.Options{Clock: clk, DefaultTTL: ttlstore.TTL(ttlstore.MaxTTL)})
			d := upsert(t, c, `{"id":"x","ttl":2147483647}`)
			exp, ok := d.ExpiresAt()
			require.True(t, ok)
			assert.Equal(t, at.Unix()+2147483647, exp.Unix())
			clk.Add(2147483646 * time.Second)
			assert.True(t, live(t, c, "x"))
			clk.Add(time.Second)
			assert.False(t, live(t, c, "x"))
		})
	}
	c, _ := newCollection(t, ttlstore.Options{})
	_, err := c.Upsert([]byte(`{"id":"x","ttl":2147483648}`))
	assert.True(t, errors.Is(err, ttlstore.ErrInvalidTTL))
}

// ruleStats is c's Stats with only the counts of its contents (Live,
// Expired, Deleted, Swept), which the rules speak of: the same in every mode
// (TestContractsInEveryMode), where a durable collection also counts its syncs.
func ruleStats(c *ttlstore.Collection) ttlstore.Stats {
	st := c.Stats()
	return ttlstore.Stats{Live: st.Live, Expired: st.Expired, Deleted: st.Deleted, Swept: st.Swept}
}
