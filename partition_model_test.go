package ttlstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestPartitionModel runs random sequences of partitioned operations (the
// In forms, Create, Upsert, batches, DeletePartition, sweeps, and for
// durable machines restarts, compactions and crashes) on a collection and
// on a map from (partition, id) to the document's value, and after every
// operation requires that they agree: each call's error class, ReadIn of
// every (partition, id), AllIn of every partition, All and Len; and that
// the collection's invariants hold. Half the machines are bounded
// (MaxDocuments, each eviction policy): a write may then be refused with
// ErrFull, changing nothing, or evict (OnEvict takes the document out of
// the model too), and the documents held, deleted partitions not yet swept
// included, never pass the bound. TTL is off: this is the partition key
// contract, which TestModel's TTL rules do not involve.
func TestPartitionModel(t *testing.T) {
	pks := []ttlstore.PartitionKey{
		ttlstore.PartitionKeyString("a"), ttlstore.PartitionKeyString("b"),
		ttlstore.PartitionKeyNumber(1), ttlstore.PartitionKeyNull(), ttlstore.PartitionKeyNone(),
	}
	// the JSON member that puts a document in pks[i]; written two ways
	// where there are two.
	spellings := [][]string{
		{`,"tenant":"a"`, `,"tenant":"\u0061"`}, {`,"tenant":"b"`}, {`,"tenant":1`, `,"tenant":1.0`},
		{`,"tenant":null`}, {``, `,"other":1`},
	}
	ids := []string{"x", "y", "z"}
	type key struct {
		pk int
		id string
	}
	rapid.Check(t, func(rt *rapid.T) {
		durable := rapid.Bool().Draw(rt, "durable")
		fsys := vfs.NewMemFS()
		clk := newMock()
		model := map[key]int{}
		opts := ttlstore.Options{
			PartitionKeyPath: "/tenant",
			Clock:            clk,
			SweepInterval:    ttlstore.ManualSweep,
			SweepBatch:       rapid.IntRange(0, 3).Draw(rt, "SweepBatch"),
			// An eviction is the model's too (it is never the
			// evicting write's own document).
			OnEvict: func(d ttlstore.Document) {
				delete(model, key{slices.Index(pks, d.PartitionKey()), d.ID()})
			},
		}
		bounded := rapid.Bool().Draw(rt, "bounded")
		if bounded {
			opts.MaxDocuments = rapid.IntRange(2, 8).Draw(rt, "MaxDocuments")
			opts.Eviction = rapid.SampledFrom([]ttlstore.EvictionPolicy{ttlstore.NoEviction, ttlstore.EvictColdest, ttlstore.EvictSoonestExpiry}).Draw(rt, "Eviction")
		}
		// full reports whether err is a bounded collection's refusal of a
		// write that needed room: the write changed nothing.
		full := func(err error) bool { return bounded && errors.Is(err, ttlstore.ErrFull) }
		open := func() *ttlstore.Collection {
			if !durable {
				c, err := ttlstore.New(opts)
				require.NoError(rt, err)
				return c
			}
			c, err := ttlstore.OpenFS(fsys, "db", opts, 1<<10, true)
			require.NoError(rt, err)
			return c
		}
		c := open()
		defer func() { c.Close() }()
		doc := func(k key, v int) []byte {
			m := spellings[k.pk]
			return []byte(fmt.Sprintf(`{"id":%q,"v":%d%s}`, k.id, v, m[rapid.IntRange(0, len(m)-1).Draw(rt, "spelling")]))
		}
		// want checks err against whether the operation should have
		// found (or not found) its document.
		want := func(op string, err error, ok bool, sentinel error) {
			if ok {
				require.NoError(rt, err, op)
			} else {
				require.ErrorIs(rt, err, sentinel, op)
			}
		}
		for step := range 50 {
			k := key{rapid.IntRange(0, len(pks)-1).Draw(rt, "pk"), rapid.SampledFrom(ids).Draw(rt, "id")}
			pk := pks[k.pk]
			_, exists := model[k]
			switch op := rapid.IntRange(0, 11).Draw(rt, "op"); op {
			case 0:
				_, err := c.Create(doc(k, step))
				if full(err) {
					break
				}
				want("create", err, !exists, ttlstore.ErrConflict)
				if !exists {
					model[k] = step
				}
			case 1:
				_, err := c.Upsert(doc(k, step))
				if full(err) {
					break
				}
				require.NoError(rt, err)
				model[k] = step
			case 2:
				_, err := c.ReplaceIn(pk, doc(k, step))
				want("replace", err, exists, ttlstore.ErrNotFound)
				if exists {
					model[k] = step
				}
			case 3:
				other := (k.pk + 1) % len(pks)
				_, err := c.UpsertIn(pks[other], doc(k, step))
				require.ErrorIs(rt, err, ttlstore.ErrInvalidDocument, "another partition")
			case 4:
				want("delete", c.DeleteIn(pk, k.id), exists, ttlstore.ErrNotFound)
				delete(model, k)
			case 5:
				_, err := c.TouchIn(pk, k.id)
				want("touch", err, exists, ttlstore.ErrNotFound)
			case 6:
				_, err := c.PatchIn(pk, k.id, []ttlstore.PatchOp{{Kind: ttlstore.PatchSet, Path: "/v", Value: []byte(fmt.Sprint(step))}})
				want("patch", err, exists, ttlstore.ErrNotFound)
				if exists {
					model[k] = step
				}
			case 7:
				require.NoError(rt, c.DeletePartition(pk))
				maps.DeleteFunc(model, func(m key, _ int) bool { return m.pk == k.pk })
			case 8:
				// A batch in pk: upsert k, then delete another id of pk
				// (which fails the batch when it is absent).
				o := key{k.pk, ids[(slices.Index(ids, k.id)+1)%len(ids)]}
				_, oexists := model[o]
				_, err := c.ExecuteBatch(new(ttlstore.Batch).In(pk).Upsert(doc(k, step)).Delete(o.id))
				if full(err) {
					break
				}
				want("batch", err, oexists, ttlstore.ErrNotFound)
				if oexists {
					model[k] = step
					delete(model, o)
				}
			case 9:
				c.Sweep()
			case 10:
				clk.Add(time.Duration(rapid.IntRange(0, 100).Draw(rt, "seconds")) * time.Second)
			case 11:
				if !durable {
					continue
				}
				switch rapid.IntRange(0, 2).Draw(rt, "restart") {
				case 0:
					require.NoError(rt, c.Close())
				case 1:
					require.NoError(rt, c.Compact())
					require.NoError(rt, c.Close())
				case 2:
					after := fsys.Crash(nil, false) // SyncAlways: every acknowledged write survives
					c.Close()
					fsys = after
				}
				c = open()
			}

			require.NoError(rt, c.CheckInvariants(), "step %d", step)
			for i, pk := range pks {
				got := map[string]string{}
				for d := range c.AllIn(pk) {
					got[d.ID()] = string(membersOf(rt, d)["v"])
				}
				wantIn := map[string]string{}
				for m, v := range model {
					if m.pk == i {
						wantIn[m.id] = fmt.Sprint(v)
					}
				}
				require.Equal(rt, wantIn, got, "step %d: partition %v", step, pk)
				for _, id := range ids {
					d, err := c.ReadIn(pk, id)
					if v, ok := model[key{i, id}]; ok {
						require.NoError(rt, err)
						require.Equal(rt, fmt.Sprint(v), string(membersOf(rt, d)["v"]))
						require.Equal(rt, pk, d.PartitionKey())
					} else {
						require.True(rt, errors.Is(err, ttlstore.ErrNotFound), "step %d: %v %s: %v", step, pk, id, err)
					}
				}
			}
			require.Equal(rt, len(model), c.Len())
			n := 0
			for range c.All() {
				n++
			}
			require.Equal(rt, len(model), n)
			if bounded {
				st := c.Stats()
				require.LessOrEqual(rt, st.Live+st.Expired+st.Deleted, opts.MaxDocuments, "step %d: the bound holds", step)
			}
		}
	})
}

// membersOf decodes a stored document's JSON into its top-level members.
func membersOf(t require.TestingT, d ttlstore.Document) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(d.JSON(), &m))
	return m
}
