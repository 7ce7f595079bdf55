package ttlstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

var (
	pkA = ttlstore.PartitionKeyString("a")
	pkB = ttlstore.PartitionKeyString("b")
)

// newPartitioned returns a collection with the partition key path path
// (and opts), on a mock clock, with no background sweeper.
func newPartitioned(t *testing.T, path string, opts ttlstore.Options) (*ttlstore.Collection, *clock.Mock) {
	t.Helper()
	opts.PartitionKeyPath = path
	return newCollection(t, opts)
}

// idsIn returns the ids of the documents AllIn(pk) yields, sorted.
func idsIn(c *ttlstore.Collection, pk ttlstore.PartitionKey) []string {
	var out []string
	for d := range c.AllIn(pk) {
		out = append(out, d.ID())
	}
	slices.Sort(out)
	return out
}

func mustUpsert(t *testing.T, c *ttlstore.Collection, doc string) ttlstore.Document {
	t.Helper()
	d, err := c.Upsert([]byte(doc))
	require.NoError(t, err, doc)
	return d
}

func TestPartitionKeyPathValidated(t *testing.T) {
	for _, path := range []string{"tenant", "/", "/a//b", "/a/", "/a~2", "/_ts", "/_etag/x"} {
		t.Run(path, func(t *testing.T) {
			_, err := ttlstore.New(ttlstore.Options{PartitionKeyPath: path, SweepInterval: ttlstore.ManualSweep})
			require.ErrorIs(t, err, ttlstore.ErrInvalidOptions)
			assert.Contains(t, err.Error(), "PartitionKeyPath")
		})
	}
	for _, path := range []string{"/tenant", "/a/b", "/a~1b", "/id"} {
		t.Run(path, func(t *testing.T) {
			c, err := ttlstore.New(ttlstore.Options{PartitionKeyPath: path, SweepInterval: ttlstore.ManualSweep})
			require.NoError(t, err)
			require.NoError(t, c.Close())
		})
	}
}

func TestPartitionSameIDTwoItems(t *testing.T) {
	c, _ := newPartitioned(t, "/tenant", ttlstore.Options{})
	_, err := c.Create([]byte(`{"id":"x","tenant":"a","v":1}`))
	require.NoError(t, err)
	_, err = c.Create([]byte(`{"id":"x","tenant":"b","v":2}`))
	require.NoError(t, err, "the same id in another partition is another document")
	_, err = c.Create([]byte(`{"id":"x","tenant":"a","v":3}`))
	require.ErrorIs(t, err, ttlstore.ErrConflict)
	assert.Contains(t, err.Error(), `"x" in partition "a"`)
	assert.Equal(t, 2, c.Len())

	da, err := c.ReadIn(pkA, "x")
	require.NoError(t, err)
	assert.Equal(t, `1`, string(members(t, da)["v"]))
	assert.Equal(t, "x", da.ID())
	assert.Equal(t, pkA, da.PartitionKey())
	db, err := c.ReadIn(pkB, "x")
	require.NoError(t, err)
	assert.Equal(t, `2`, string(members(t, db)["v"]))
	_, err = c.ReadIn(ttlstore.PartitionKeyString("c"), "x")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)

	require.NoError(t, c.DeleteIn(pkA, "x"))
	_, err = c.ReadIn(pkA, "x")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	_, err = c.ReadIn(pkB, "x")
	require.NoError(t, err, "deleting one partition's x leaves the other's")
	require.NoError(t, c.CheckInvariants())
}

// TestPartitionIDOnlyFormsRefused: on a partitioned collection every call
// that names a document by id alone returns ErrPartitionKeyRequired and
// changes nothing.
func TestPartitionIDOnlyFormsRefused(t *testing.T) {
	c, _ := newPartitioned(t, "/tenant", ttlstore.Options{})
	d := mustUpsert(t, c, `{"id":"x","tenant":"a"}`)
	load := func(context.Context, string) (any, error) { return nil, errors.New("not called") }
	calls := map[string]func() error{
		"Read":           func() error { _, err := c.Read("x"); return err },
		"Delete":         func() error { return c.Delete("x") },
		"DeleteIfMatch":  func() error { return c.DeleteIfMatch("x", d.ETag()) },
		"Touch":          func() error { _, err := c.Touch("x"); return err },
		"ReplaceIfMatch": func() error { _, err := c.ReplaceIfMatch([]byte(`{"id":"x","tenant":"a"}`), d.ETag()); return err },
		"Patch":          func() error { _, err := c.Patch("x", nil); return err },
		"PatchIfMatch":   func() error { _, err := c.PatchIfMatch("x", nil, d.ETag()); return err },
		"PatchIf":        func() error { _, err := c.PatchIf("x", nil, func(ttlstore.Document) bool { return true }); return err },
		"ReadOrLoad":     func() error { _, err := c.ReadOrLoad(context.Background(), "x", load); return err },
		"Typed.Read":     func() error { _, err := ttlstore.NewTyped[map[string]any](c).Read("x"); return err },
		"Typed.ReadOrLoad": func() error {
			_, err := ttlstore.NewTyped[map[string]any](c).ReadOrLoad(context.Background(), "x", func(context.Context, string) (map[string]any, error) { return nil, nil })
			return err
		},
		"ExecuteBatch": func() error { _, err := c.ExecuteBatch(new(ttlstore.Batch).Read("x")); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.ErrorIs(t, err, ttlstore.ErrPartitionKeyRequired)
			assert.Contains(t, err.Error(), "/tenant")
			got, err := c.ReadIn(pkA, "x")
			require.NoError(t, err)
			assert.Equal(t, d.ETag(), got.ETag(), "changed nothing")
		})
	}
}

// TestPartitionInFormsUnpartitioned: on a collection without a partition
// key path, the In forms take PartitionKeyNone as its one partition and
// refuse any other key.
func TestPartitionInFormsUnpartitioned(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	none := ttlstore.PartitionKeyNone()
	_, err := c.CreateIn(none, []byte(`{"id":"x"}`))
	require.NoError(t, err)
	d, err := c.ReadIn(none, "x")
	require.NoError(t, err)
	assert.Equal(t, none, d.PartitionKey())
	assert.Equal(t, []string{"x"}, idsIn(c, none))
	assert.Empty(t, idsIn(c, pkA))
	_, err = c.ReadIn(pkA, "x")
	require.ErrorIs(t, err, ttlstore.ErrInvalidPartitionKey)
	_, err = c.UpsertIn(pkA, []byte(`{"id":"y"}`))
	require.ErrorIs(t, err, ttlstore.ErrInvalidPartitionKey)
	require.ErrorIs(t, c.DeletePartition(none), ttlstore.ErrInvalidPartitionKey)
	_, err = c.TouchIn(none, "x")
	require.NoError(t, err)
	require.NoError(t, c.DeleteIn(none, "x"))
	assert.Zero(t, c.Len())
}

// TestPartitionMismatchRefused: a write whose document is in another
// partition than the one named is ErrInvalidDocument naming both.
func TestPartitionMismatchRefused(t *testing.T) {
	c, _ := newPartitioned(t, "/tenant", ttlstore.Options{})
	d := mustUpsert(t, c, `{"id":"x","tenant":"a"}`)
	doc := []byte(`{"id":"x","tenant":"b"}`)
	writes := map[string]func() error{
		"CreateIn":         func() error { _, err := c.CreateIn(pkA, doc); return err },
		"UpsertIn":         func() error { _, err := c.UpsertIn(pkA, doc); return err },
		"ReplaceIn":        func() error { _, err := c.ReplaceIn(pkA, doc); return err },
		"ReplaceIfMatchIn": func() error { _, err := c.ReplaceIfMatchIn(pkA, doc, d.ETag()); return err },
		"Batch":            func() error { _, err := c.ExecuteBatch(new(ttlstore.Batch).In(pkA).Upsert(doc)); return err },
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			err := write()
			require.ErrorIs(t, err, ttlstore.ErrInvalidDocument)
			assert.Contains(t, err.Error(), `"b"`)
			assert.Contains(t, err.Error(), `"a"`)
			assert.Empty(t, idsIn(c, pkB), "nothing written")
		})
	}
}

// TestPartitionKeyCannotChange: a Replace with another partition key
// addresses another document; a Patch may not touch the path.
func TestPartitionKeyCannotChange(t *testing.T) {
	c, _ := newPartitioned(t, "/t/k", ttlstore.Options{})
	d := mustUpsert(t, c, `{"id":"x","t":{"k":"a","o":1}}`)
	_, err := c.Replace([]byte(`{"id":"x","t":{"k":"b"}}`))
	require.ErrorIs(t, err, ttlstore.ErrNotFound, "x is not in partition b")
	_, err = c.ReplaceIfMatchIn(pkB, []byte(`{"id":"x","t":{"k":"b"}}`), d.ETag())
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	for _, op := range []ttlstore.PatchOp{
		{Kind: ttlstore.PatchSet, Path: "/t/k", Value: []byte(`"b"`)},
		{Kind: ttlstore.PatchRemove, Path: "/t"},
		{Kind: ttlstore.PatchSet, Path: "/t", Value: []byte(`{"k":"b"}`)},
		{Kind: ttlstore.PatchMove, From: "/t", Path: "/u"},
	} {
		_, err = c.PatchIn(pkA, "x", []ttlstore.PatchOp{op})
		require.ErrorIs(t, err, ttlstore.ErrInvalidPatch, "%+v", op)
	}
	got, err := c.PatchIn(pkA, "x", []ttlstore.PatchOp{{Kind: ttlstore.PatchIncr, Path: "/t/o", Value: []byte(`1`)}})
	require.NoError(t, err, "a path beside the partition key can be patched")
	assert.JSONEq(t, `{"k":"a","o":2}`, string(members(t, got)["t"]))
	_, err = c.PatchIfMatchIn(pkA, "x", []ttlstore.PatchOp{{Kind: ttlstore.PatchSet, Path: "/n", Value: []byte(`1`)}}, d.ETag())
	require.ErrorIs(t, err, ttlstore.ErrPreconditionFailed)
	_, err = c.PatchIfIn(pkA, "x", []ttlstore.PatchOp{{Kind: ttlstore.PatchSet, Path: "/n", Value: []byte(`1`)}}, func(ttlstore.Document) bool { return true })
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, idsIn(c, pkA))
}

// TestPartitionKeyValues: which values are one partition and which two.
func TestPartitionKeyValues(t *testing.T) {
	c, _ := newPartitioned(t, "/a/b", ttlstore.Options{})
	docs := []struct {
		doc string
		pk  ttlstore.PartitionKey
	}{
		{`{"id":"1","a":{"b":1}}`, ttlstore.PartitionKeyNumber(1)},
		{`{"id":"2","a":{"b":1.0}}`, ttlstore.PartitionKeyNumber(1)},
		{`{"id":"3","a":{"b":10e-1}}`, ttlstore.PartitionKeyNumber(1)},
		{`{"id":"4","a":{"b":0}}`, ttlstore.PartitionKeyNumber(0)},
		{`{"id":"5","a":{"b":-0}}`, ttlstore.PartitionKeyNumber(0)},
		{`{"id":"6","a":{"b":-0.0}}`, ttlstore.PartitionKeyNumber(0)},
		{`{"id":"7","a":{"b":null}}`, ttlstore.PartitionKeyNull()},
		{`{"id":"8","a":{}}`, ttlstore.PartitionKeyNone()},
		{`{"id":"9"}`, ttlstore.PartitionKeyNone()},
		{`{"id":"10","a":[{"b":1}]}`, ttlstore.PartitionKeyNone()},
		{`{"id":"11","a":"b"}`, ttlstore.PartitionKeyNone()},
		{`{"id":"12","a":{"b":"null"}}`, ttlstore.PartitionKeyString("null")},
		{`{"id":"13","a":{"b":"\u00e9"}}`, ttlstore.PartitionKeyString("é")},
		{`{"id":"14","a":{"b":"é"}}`, ttlstore.PartitionKeyString("é")},
		{`{"id":"15","a":{"b":true}}`, ttlstore.PartitionKeyBool(true)},
		{`{"id":"16","a":{"b":false}}`, ttlstore.PartitionKeyBool(false)},
		{`{"id":"17","a":{"b":"1"}}`, ttlstore.PartitionKeyString("1")},
	}
	for _, d := range docs {
		got := mustUpsert(t, c, d.doc)
		assert.Equal(t, d.pk, got.PartitionKey(), d.doc)
	}
	assert.Equal(t, ttlstore.PartitionKeyNumber(0), ttlstore.PartitionKeyNumber(math.Copysign(0, -1)), "-0 is 0")
	for _, tt := range []struct {
		pk   ttlstore.PartitionKey
		ids  []string
		show string
	}{
		{ttlstore.PartitionKeyNumber(1), []string{"1", "2", "3"}, "1"},
		{ttlstore.PartitionKeyNumber(0), []string{"4", "5", "6"}, "0"},
		{ttlstore.PartitionKeyNull(), []string{"7"}, "null"},
		{ttlstore.PartitionKeyNone(), []string{"10", "11", "8", "9"}, "none"},
		{ttlstore.PartitionKeyString("null"), []string{"12"}, `"null"`},
		{ttlstore.PartitionKeyString("é"), []string{"13", "14"}, `"é"`},
		{ttlstore.PartitionKeyBool(true), []string{"15"}, "true"},
		{ttlstore.PartitionKeyBool(false), []string{"16"}, "false"},
		{ttlstore.PartitionKeyString("1"), []string{"17"}, `"1"`},
	} {
		t.Run(tt.show, func(t *testing.T) {
			assert.Equal(t, tt.show, tt.pk.String())
			assert.Equal(t, tt.ids, idsIn(c, tt.pk))
			for _, id := range tt.ids {
				_, err := c.ReadIn(tt.pk, id)
				require.NoError(t, err)
			}
		})
	}
	_, err := c.Upsert([]byte(`{"id":"o","a":{"b":{"c":1}}}`))
	require.ErrorIs(t, err, ttlstore.ErrInvalidDocument, "an object is no partition key")
	_, err = c.Upsert([]byte(`{"id":"o","a":{"b":[1]}}`))
	require.ErrorIs(t, err, ttlstore.ErrInvalidDocument, "nor an array")
	_, err = c.Upsert([]byte(`{"id":"o","a":{"b":1e400}}`))
	require.ErrorIs(t, err, ttlstore.ErrInvalidDocument, "nor a number past float64")
	assert.Equal(t, len(docs), c.Len())
}

// TestPartitionScopedIteration: AllIn and QueryIn yield exactly the live
// documents of their partition.
func TestPartitionScopedIteration(t *testing.T) {
	c, clk := newPartitioned(t, "/tenant", ttlstore.Options{DefaultTTL: ttlstore.TTL(100)})
	want := map[string][]string{}
	for i := range 300 {
		tenant := fmt.Sprintf("t%d", i%7)
		id := fmt.Sprintf("d%d", i/7)
		ttl := ""
		if i%5 == 0 {
			ttl = `,"ttl":10`
		} else {
			want[tenant] = append(want[tenant], id)
		}
		mustUpsert(t, c, fmt.Sprintf(`{"id":%q,"tenant":%q%s}`, id, tenant, ttl))
	}
	clk.Add(10 * time.Second) // the ttl 10 ones expire
	for tenant, ids := range want {
		slices.Sort(ids)
		pk := ttlstore.PartitionKeyString(tenant)
		assert.Equal(t, ids, idsIn(c, pk), tenant)
		var odd []string
		for d := range c.QueryIn(pk, func(d ttlstore.Document) bool { return d.ID()[len(d.ID())-1]%2 == 1 }) {
			odd = append(odd, d.ID())
		}
		for _, id := range odd {
			assert.Contains(t, ids, id)
		}
	}
	assert.Empty(t, idsIn(c, ttlstore.PartitionKeyString("t7")))
	n := 0
	for range c.AllIn(ttlstore.PartitionKeyString("t1")) {
		if n++; n == 1 {
			break
		}
	}
	assert.Equal(t, 1, n, "the loop can stop")
}

// TestDeletePartition: every document of the partition at the call is
// gone at once, writes after it are not, the sweeper removes them in
// batches, and nothing is reported to OnExpire or OnEvict.
func TestDeletePartition(t *testing.T) {
	var expired, evicted []string
	c, clk := newPartitioned(t, "/tenant", ttlstore.Options{
		DefaultTTL: ttlstore.TTL(1000),
		SweepBatch: 7,
		OnExpire:   func(d ttlstore.Document) { expired = append(expired, d.ID()) },
		OnEvict:    func(d ttlstore.Document) { evicted = append(evicted, d.ID()) },
	})
	for i := range 50 {
		mustUpsert(t, c, fmt.Sprintf(`{"id":"d%d","tenant":"a"}`, i))
		mustUpsert(t, c, fmt.Sprintf(`{"id":"d%d","tenant":"b"}`, i))
	}
	mustUpsert(t, c, `{"id":"short","tenant":"a","ttl":5}`)
	view := ttlstore.NewTyped[map[string]any](c)
	_, err := view.ReadIn(pkA, "d1") // cached in the view
	require.NoError(t, err)

	require.NoError(t, c.DeletePartition(pkA))
	require.NoError(t, c.CheckInvariants())
	_, err = c.ReadIn(pkA, "d1")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	_, err = view.ReadIn(pkA, "d1")
	require.ErrorIs(t, err, ttlstore.ErrNotFound, "nor through a view")
	_, err = c.TouchIn(pkA, "d2")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	require.ErrorIs(t, c.DeleteIn(pkA, "d3"), ttlstore.ErrNotFound)
	assert.Empty(t, idsIn(c, pkA))
	assert.Len(t, idsIn(c, pkB), 50)
	for d := range c.All() {
		require.Equal(t, pkB, d.PartitionKey())
	}
	st := c.Stats()
	assert.Equal(t, 50, st.Live)
	assert.Equal(t, 51, st.Deleted)

	// Writes after the call are not affected: Create may take a
	// deleted id at once.
	_, err = c.CreateIn(pkA, []byte(`{"id":"d4","tenant":"a","new":true}`))
	require.NoError(t, err)
	_, err = c.CreateIn(pkA, []byte(`{"id":"fresh","tenant":"a"}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"d4", "fresh"}, idsIn(c, pkA))
	require.NoError(t, c.CheckInvariants())

	clk.Add(5 * time.Second) // "short" expires, hidden: still not reported
	n := c.Sweep()
	assert.Equal(t, 50, n, "removes the hidden documents (but d4, replaced)")
	require.NoError(t, c.CheckInvariants())
	st = c.Stats()
	assert.Equal(t, 52, st.Live)
	assert.Zero(t, st.Deleted)
	assert.Zero(t, st.Expired)
	assert.Zero(t, st.Swept, "a deletion is not an expiry")
	assert.Empty(t, expired)
	assert.Empty(t, evicted)
	assert.Equal(t, []string{"d4", "fresh"}, idsIn(c, pkA))
	d, err := c.ReadIn(pkA, "d4")
	require.NoError(t, err)
	assert.Equal(t, "true", string(members(t, d)["new"]))

	require.NoError(t, c.DeletePartition(ttlstore.PartitionKeyString("nothing")))
	require.NoError(t, c.DeletePartition(pkA))
	require.NoError(t, c.DeletePartition(pkA), "twice is nothing more")
	assert.Empty(t, idsIn(c, pkA))
	assert.Equal(t, 2, c.Sweep())
	assert.Equal(t, 50, c.Len())
}

// TestDeletePartitionSweepBatches: the sweeper removes a deleted
// partition in batches of SweepBatch, letting go of the lock between
// them (a reader and a writer get in between two).
func TestDeletePartitionSweepBatches(t *testing.T) {
	c, _ := newPartitioned(t, "/p", ttlstore.Options{SweepBatch: 10})
	for i := range 95 {
		mustUpsert(t, c, fmt.Sprintf(`{"id":"d%d","p":1}`, i))
	}
	require.NoError(t, c.DeletePartition(ttlstore.PartitionKeyNumber(1.0)))
	assert.Equal(t, 95, c.Stats().Deleted)
	assert.Equal(t, 95, c.Sweep())
	assert.Zero(t, c.Stats().Deleted)
	assert.Zero(t, c.Len())
}

// TestDeletePartitionBounded: hidden documents count against the bound
// until removed, and a write at the bound removes them first, rather than
// evicting or refusing.
func TestDeletePartitionBounded(t *testing.T) {
	for _, policy := range []ttlstore.EvictionPolicy{ttlstore.NoEviction, ttlstore.EvictColdest, ttlstore.EvictSoonestExpiry} {
		t.Run(policy.String(), func(t *testing.T) {
			var evicted []string
			c, _ := newPartitioned(t, "/tenant", ttlstore.Options{
				MaxDocuments: 20, Eviction: policy, DefaultTTL: ttlstore.TTL(100),
				OnEvict: func(d ttlstore.Document) { evicted = append(evicted, d.ID()) },
			})
			for i := range 10 {
				mustUpsert(t, c, fmt.Sprintf(`{"id":"d%d","tenant":"a"}`, i))
				mustUpsert(t, c, fmt.Sprintf(`{"id":"d%d","tenant":"b"}`, i))
			}
			require.NoError(t, c.DeletePartition(pkA))
			for i := range 10 {
				_, err := c.Create([]byte(fmt.Sprintf(`{"id":"n%d","tenant":"c"}`, i)))
				require.NoError(t, err)
			}
			assert.Empty(t, evicted, "the deleted partition made the room")
			assert.Len(t, idsIn(c, pkB), 10)
			assert.Equal(t, 20, c.Len())
			st := c.Stats()
			assert.LessOrEqual(t, st.Live+st.Expired+st.Deleted, 20, "the bound holds")
			require.NoError(t, c.CheckInvariants())
		})
	}
}

// TestPartitionBatch: a batch is in one partition, and its ids are in it.
func TestPartitionBatch(t *testing.T) {
	c, _ := newPartitioned(t, "/tenant", ttlstore.Options{})
	mustUpsert(t, c, `{"id":"x","tenant":"b","v":"b"}`)
	b := new(ttlstore.Batch).In(pkA).
		Create([]byte(`{"id":"x","tenant":"a","v":1}`)).
		Upsert([]byte(`{"id":"y","tenant":"a"}`)).
		Read("x").
		Patch("x", []ttlstore.PatchOp{{Kind: ttlstore.PatchIncr, Path: "/v", Value: []byte(`1`)}}).
		Delete("y")
	docs, err := c.ExecuteBatch(b)
	require.NoError(t, err)
	require.Len(t, docs, 5)
	assert.Equal(t, pkA, docs[0].PartitionKey())
	assert.Equal(t, "x", docs[2].ID())
	assert.Equal(t, docs[0].TS(), docs[3].TS(), "one _ts")
	d, err := c.ReadIn(pkA, "x")
	require.NoError(t, err)
	assert.Equal(t, `2`, string(members(t, d)["v"]))
	d, err = c.ReadIn(pkB, "x")
	require.NoError(t, err)
	assert.Equal(t, `"b"`, string(members(t, d)["v"]), "the other partition's x is untouched")

	// A document of another partition fails the whole batch.
	_, err = c.ExecuteBatch(new(ttlstore.Batch).In(pkA).
		Upsert([]byte(`{"id":"z","tenant":"a"}`)).
		Upsert([]byte(`{"id":"w","tenant":"b"}`)))
	var be *ttlstore.BatchError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 1, be.Index)
	require.ErrorIs(t, err, ttlstore.ErrInvalidDocument)
	_, err = c.ReadIn(pkA, "z")
	require.ErrorIs(t, err, ttlstore.ErrNotFound, "nothing applied")

	// Not found in the batch's partition, though in another.
	_, err = c.ExecuteBatch(new(ttlstore.Batch).In(pkB).Read("y"))
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	require.NoError(t, c.CheckInvariants())
}

// TestPartitionReadOrLoad: the load gets the id, and must return a document
// of the partition asked for.
func TestPartitionReadOrLoad(t *testing.T) {
	c, _ := newPartitioned(t, "/tenant", ttlstore.Options{})
	ctx := context.Background()
	var asked []string
	d, err := c.ReadOrLoadIn(ctx, pkA, "x", func(_ context.Context, id string) (any, error) {
		asked = append(asked, id)
		return []byte(`{"id":"x","tenant":"a","src":"load"}`), nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, asked)
	assert.Equal(t, pkA, d.PartitionKey())
	_, err = c.ReadOrLoadIn(ctx, pkB, "x", func(_ context.Context, id string) (any, error) {
		return []byte(`{"id":"x","tenant":"a"}`), nil
	})
	require.ErrorIs(t, err, ttlstore.ErrInvalidDocument)
	assert.Contains(t, err.Error(), `partition "b"`)
	_, err = c.ReadIn(pkB, "x")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)

	type doc struct {
		ID     string `json:"id"`
		Tenant string `json:"tenant"`
		N      int    `json:"n"`
	}
	view := ttlstore.NewTyped[doc](c)
	v, err := view.ReadOrLoadIn(ctx, pkB, "t", func(_ context.Context, id string) (doc, error) {
		return doc{ID: id, Tenant: "b", N: 7}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 7, v.N)
	v, err = view.ReadIn(pkB, "t")
	require.NoError(t, err)
	assert.Equal(t, 7, v.N)
	cur, err := c.ReadIn(pkB, "t")
	require.NoError(t, err)
	v.N = 8
	_, err = view.ReplaceIfMatchIn(pkB, v, cur.ETag())
	require.NoError(t, err)
	var ns []int
	for v, err := range view.AllIn(pkB) {
		require.NoError(t, err)
		ns = append(ns, v.N)
	}
	assert.Equal(t, []int{8}, ns)
}

// TestPartitionErrorsQuoteKey: an error names the id and its partition,
// cut as ids are.
func TestPartitionErrorsQuoteKey(t *testing.T) {
	c, _ := newPartitioned(t, "/tenant", ttlstore.Options{})
	long := strings.Repeat("a", 100)
	_, err := c.ReadIn(ttlstore.PartitionKeyString(long), "x")
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	assert.Contains(t, err.Error(), `"x" in partition "aaaa`)
	assert.Contains(t, err.Error(), "(100 bytes)")
	assert.Less(t, len(err.Error()), 200)
	_, err = c.ReadIn(ttlstore.PartitionKeyNumber(2.5), "x")
	assert.Contains(t, err.Error(), `"x" in partition 2.5`)
}

// FuzzPartitionWrite writes arbitrary bytes to a collection partitioned by
// /a/b: it never panics, and a document it accepts is found again, and
// only, under its own partition key and id.
func FuzzPartitionWrite(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","a":{"b":"t"}}`, `{"id":"x","a":{"b":1e3}}`, `{"id":"x","a":{"b":-0}}`,
		`{"id":"x","a":{"b":null}}`, `{"id":"x","a":[{"b":1}]}`, `{"id":"x","a":{"b":{"c":1}}}`,
		`{"id":"x","a":{"b":"\ud800"}}`, `{"id":"x","a":{"b":1,"b":2}}`, `{"id":"x"}`,
		`{"id":"x","a":{"b":"` + strings.Repeat("z", 2049) + `"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := ttlstore.New(ttlstore.Options{PartitionKeyPath: "/a/b", SweepInterval: ttlstore.ManualSweep})
		require.NoError(t, err)
		defer c.Close()
		d, err := c.Upsert(doc)
		if err != nil {
			if !errors.Is(err, ttlstore.ErrInvalidDocument) && !errors.Is(err, ttlstore.ErrInvalidTTL) {
				require.ErrorIs(t, err, ttlstore.ErrTooLarge)
			}
			return
		}
		got, err := c.ReadIn(d.PartitionKey(), d.ID())
		require.NoError(t, err)
		require.Equal(t, d.ETag(), got.ETag())
		n := 0
		for range c.AllIn(d.PartitionKey()) {
			n++
		}
		require.Equal(t, 1, n)
		_, err = c.UpsertIn(d.PartitionKey(), d)
		require.NoError(t, err, "a document is in its own partition")
		require.NoError(t, c.DeletePartition(d.PartitionKey()))
		_, err = c.ReadIn(d.PartitionKey(), d.ID())
		require.ErrorIs(t, err, ttlstore.ErrNotFound)
		require.NoError(t, c.CheckInvariants())
	})
}

// TestDeletePartitionConcurrent deletes a partition again and again while
// other goroutines write, read and iterate it and the background sweeper
// removes what was hidden (for the race detector, and the invariants):
// once DeletePartition has returned, a read never finds a document that a
// write finished before the call.
func TestDeletePartitionConcurrent(t *testing.T) {
	c, err := ttlstore.New(ttlstore.Options{PartitionKeyPath: "/tenant", SweepInterval: time.Millisecond, SweepBatch: 8})
	require.NoError(t, err)
	defer func() {
		require.NoError(t, c.CheckInvariants())
		require.NoError(t, c.Close())
	}()
	done := make(chan struct{})
	errs := make(chan error, 4)
	var rounds [3]atomic.Int64 // each writer's iterations
	for w := range 3 {
		go func() {
			var err error
			defer func() { errs <- err }()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				id := fmt.Sprintf("d%d", i%50)
				switch w {
				case 0:
					_, err = c.Upsert([]byte(fmt.Sprintf(`{"id":%q,"tenant":"a","w":%d}`, id, i)))
				case 1:
					if _, err = c.ReadIn(pkA, id); errors.Is(err, ttlstore.ErrNotFound) {
						err = nil
					}
				case 2:
					for range c.AllIn(pkA) {
					}
					_, err = c.UpsertIn(pkB, []byte(fmt.Sprintf(`{"id":%q,"tenant":"b"}`, id)))
				}
				if err != nil {
					return
				}
				rounds[w].Add(1)
			}
		}()
	}
	for i := 0; i < 200 || rounds[0].Load() < 100 || rounds[1].Load() < 100 || rounds[2].Load() < 100; i++ {
		// Documents written before the call: a marker, then the delete.
		_, err := c.Upsert([]byte(`{"id":"marker","tenant":"a"}`))
		require.NoError(t, err)
		require.NoError(t, c.DeletePartition(pkA))
		_, err = c.ReadIn(pkA, "marker")
		require.ErrorIs(t, err, ttlstore.ErrNotFound, "a document written before DeletePartition")
	}
	close(done)
	for range 3 {
		require.NoError(t, <-errs)
	}
	c.Sweep()
	assert.Zero(t, c.Stats().Deleted)
	assert.Len(t, idsIn(c, pkB), 50)
}
