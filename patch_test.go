package ttlstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

func ops(t *testing.T, wire string) []ttlstore.PatchOp {
	t.Helper()
	o, err := ttlstore.ParsePatch([]byte(wire))
	require.NoError(t, err)
	return o
}

func TestPatchIsOneWrite(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60)})
	old := upsert(t, c, `{"id":"a","n":1,"tags":["x"],"gone":true,"big":9007199254740993}`)
	clk.Add(30 * time.Second)
	d, err := c.Patch("a", ops(t, `[{"op":"incr","path":"/n","value":2},{"op":"add","path":"/tags/-","value":"y"},
		{"op":"remove","path":"/gone"},{"op":"set","path":"/new","value":{"k":null}},{"op":"incr","path":"/big","value":1}]`))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf(`{"id":"a","n":3,"tags":["x","y"],"big":9007199254740994,"new":{"k":null},"_ts":%d,"_etag":%q}`, clk.Now().Unix(), d.ETag()), d.String())
	assert.NotEqual(t, old.ETag(), d.ETag())
	exp, ok := d.ExpiresAt()
	require.True(t, ok)
	assert.Equal(t, clk.Now().Add(60*time.Second), exp, "the countdown restarts")
	got, err := c.Read("a")
	require.NoError(t, err)
	assert.Equal(t, d.String(), got.String())
	assert.Contains(t, old.String(), `"n":1`, "a returned Document changed")
}

// Patching /ttl re-resolves the expiry as a Replace of the whole document
// would (R5), and a ttl Replace refuses is refused.
func TestPatchTTL(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60)})
	upsert(t, c, `{"id":"a","ttl":-1}`)
	d, err := c.Patch("a", ops(t, `[{"op":"set","path":"/ttl","value":10}]`))
	require.NoError(t, err)
	exp, ok := d.ExpiresAt()
	require.True(t, ok)
	assert.Equal(t, clk.Now().Add(10*time.Second), exp)

	d, err = c.Patch("a", ops(t, `[{"op":"remove","path":"/ttl"}]`))
	require.NoError(t, err)
	exp, _ = d.ExpiresAt()
	assert.Equal(t, clk.Now().Add(60*time.Second), exp, "no ttl: the DefaultTTL")

	for _, bad := range []string{`0`, `1.5`, `"10"`, `null`, `-2`} {
		_, err = c.Patch("a", ops(t, `[{"op":"set","path":"/ttl","value":`+bad+`}]`))
		require.ErrorIs(t, err, ttlstore.ErrInvalidTTL, bad)
	}
	got, err := c.Read("a")
	require.NoError(t, err)
	assert.Equal(t, d.String(), got.String(), "a refused patch changed the document")

	// Expired: not found, whatever the patch.
	clk.Add(60 * time.Second)
	_, err = c.Patch("a", ops(t, `[{"op":"set","path":"/ttl","value":-1}]`))
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
}

func TestPatchRefusals(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{MaxDocumentSize: 200})
	before := upsert(t, c, `{"id":"a","n":1,"s":"x","arr":[1]}`)
	cases := []struct {
		name, wire string
		want       error
		says       string
	}{
		{"id", `[{"op":"set","path":"/id","value":"b"}]`, ttlstore.ErrInvalidPatch, `"/id"`},
		{"_ts", `[{"op":"remove","path":"/_ts"}]`, ttlstore.ErrInvalidPatch, `"/_ts"`},
		{"_etag", `[{"op":"set","path":"/_etag","value":"x"}]`, ttlstore.ErrInvalidPatch, `"/_etag"`},
		{"replace of an absent member", `[{"op":"replace","path":"/zz","value":1}]`, ttlstore.ErrInvalidPatch, "path not found"},
		{"remove of an absent member", `[{"op":"remove","path":"/zz"}]`, ttlstore.ErrInvalidPatch, "path not found"},
		{"add without its parent", `[{"op":"add","path":"/p/q","value":1}]`, ttlstore.ErrInvalidPatch, "path not found"},
		{"incr of a string", `[{"op":"incr","path":"/s","value":1}]`, ttlstore.ErrInvalidPatch, "not a number"},
		{"incr past int64", `[{"op":"set","path":"/n","value":9223372036854775807},{"op":"incr","path":"/n","value":1}]`, ttlstore.ErrInvalidPatch, "operation 1"},
		{"all or none", `[{"op":"set","path":"/n","value":2},{"op":"remove","path":"/zz"}]`, ttlstore.ErrInvalidPatch, "operation 1"},
		{"result too large", `[{"op":"set","path":"/pad","value":"` + strings.Repeat("p", 200) + `"}]`, ttlstore.ErrTooLarge, ""},
		{"more than 10 operations", `[` + strings.TrimSuffix(strings.Repeat(`{"op":"incr","path":"/n","value":1},`, 11), ",") + `]`, ttlstore.ErrTooLarge, "11 patch operations"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Patch("a", ops(t, tc.wire))
			requireErrClass(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.says)
			got, rerr := c.Read("a")
			require.NoError(t, rerr)
			assert.Equal(t, before.String(), got.String(), "a refused patch changed the document")
		})
	}
	_, err := c.Patch("b", ops(t, `[{"op":"set","path":"/n","value":2}]`))
	requireErrClass(t, err, ttlstore.ErrNotFound)
	_, err = ttlstore.ParsePatch([]byte(`[{"op":"frobnicate","path":"/n"}]`))
	requireErrClass(t, err, ttlstore.ErrInvalidPatch)
	_, err = ttlstore.ParsePatch([]byte(`[{"op":"move","from":"/arr","path":"/arr/0"}]`))
	requireErrClass(t, err, ttlstore.ErrInvalidPatch)
	// Made in Go rather than parsed, the same move is refused by Patch.
	_, err = c.Patch("a", []ttlstore.PatchOp{{Kind: ttlstore.PatchMove, From: "/arr", Path: "/arr/0"}})
	requireErrClass(t, err, ttlstore.ErrInvalidPatch)

	c2, _ := newCollection(t, ttlstore.Options{MaxPatchOperations: 20})
	upsert(t, c2, `{"id":"a","n":0}`)
	d, err := c2.Patch("a", ops(t, `[`+strings.TrimSuffix(strings.Repeat(`{"op":"incr","path":"/n","value":1},`, 20), ",")+`]`))
	require.NoError(t, err)
	assert.Contains(t, d.String(), `"n":20`)
	_, err = ttlstore.New(ttlstore.Options{MaxPatchOperations: -1})
	requireErrClass(t, err, ttlstore.ErrInvalidOptions)
}

func TestPatchConditions(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	d := upsert(t, c, `{"id":"a","stock":1}`)
	set := ops(t, `[{"op":"incr","path":"/stock","value":-1}]`)

	_, err := c.PatchIfMatch("a", set, `"bogus"`)
	requireErrClass(t, err, ttlstore.ErrPreconditionFailed)
	d, err = c.PatchIfMatch("a", set, d.ETag())
	require.NoError(t, err)
	assert.Contains(t, d.String(), `"stock":0`)

	inStock := func(d ttlstore.Document) bool {
		var v struct{ Stock int }
		return d.Decode(&v) == nil && v.Stock > 0
	}
	_, err = c.PatchIf("a", set, inStock)
	requireErrClass(t, err, ttlstore.ErrPreconditionFailed)
	var pe *ttlstore.PreconditionError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, d.String(), pe.Current.String(), "the error holds the document the condition refused")

	upsert(t, c, `{"id":"a","stock":5}`)
	d, err = c.PatchIf("a", set, inStock)
	require.NoError(t, err)
	assert.Contains(t, d.String(), `"stock":4`)
	_, err = c.PatchIf("zz", set, inStock)
	requireErrClass(t, err, ttlstore.ErrNotFound)
}

// A patch equals the Replace of the document it makes: the same JSON but
// for the stamps, the same expiry.
func TestPatchEqualsReplace(t *testing.T) {
	for _, def := range []*int32{nil, ttlstore.TTL(ttlstore.Never), ttlstore.TTL(60)} {
		for _, wire := range []string{
			`[{"op":"set","path":"/ttl","value":5}]`, `[{"op":"remove","path":"/ttl"}]`,
			`[{"op":"set","path":"/v","value":[1,{"a":2}]}]`, `[{"op":"move","from":"/ttl","path":"/old"}]`,
		} {
			p, _ := newCollection(t, ttlstore.Options{DefaultTTL: def})
			r, _ := newCollection(t, ttlstore.Options{DefaultTTL: def})
			upsert(t, p, `{"id":"a","ttl":30,"v":1}`)
			got, err := p.Patch("a", ops(t, wire))
			require.NoError(t, err, wire)
			var body map[string]any
			require.NoError(t, got.Decode(&body))
			delete(body, "_ts")
			delete(body, "_etag")
			want, err := r.Upsert(body)
			require.NoError(t, err)
			ge, gok := got.ExpiresAt()
			we, wok := want.ExpiresAt()
			assert.Equal(t, wok, gok, wire)
			assert.Equal(t, we, ge, wire)
			gt, gh := got.TTL()
			wt, wh := want.TTL()
			assert.Equal(t, [2]any{wt, wh}, [2]any{gt, gh}, wire)
		}
	}
}

func TestPatchDurableAndInBatch(t *testing.T) {
	fsys := vfs.NewMemFS()
	clk := newMock()
	c, err := openMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30)
	require.NoError(t, err)
	upsert(t, c, `{"id":"a","n":1}`)
	var b ttlstore.Batch
	b.Patch("a", ops(t, `[{"op":"incr","path":"/n","value":1}]`)).
		Patch("a", ops(t, `[{"op":"incr","path":"/n","value":1}]`)).
		Create([]byte(`{"id":"b"}`))
	docs, err := c.ExecuteBatch(&b)
	require.NoError(t, err)
	assert.Contains(t, docs[1].String(), `"n":3`, "the second patch sees the first")

	b = ttlstore.Batch{}
	b.Patch("a", ops(t, `[{"op":"incr","path":"/n","value":1}]`)).Patch("b", ops(t, `[{"op":"remove","path":"/zz"}]`))
	_, err = c.ExecuteBatch(&b)
	var be *ttlstore.BatchError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 1, be.Index)
	requireErrClass(t, err, ttlstore.ErrInvalidPatch)
	want := shownOf(c).String()
	require.NoError(t, c.Close())

	c, err = openMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, want, shownOf(c).String())
	assert.Contains(t, want, `"n":3`)
}
