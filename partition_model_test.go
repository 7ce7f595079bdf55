package ttlstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestPartitionModel runs random sequences of partitioned operations (the
// In forms, Create, Upsert, batches, DeletePartition, sweeps, clock moves,
// and for durable machines restarts, compactions and crashes) on a
// collection and on a map from (partition, id) to the document's value,
// _ts and ttl, and after every operation requires that they agree: each
// call's error class, ReadIn of every (partition, id), AllIn of every
// partition, All and Len; and that the collection's invariants hold.
//
// Half the machines have TTL on (a DefaultTTL of 30 s, documents with a
// ttl of their own or none): an expired document is absent, and OnExpire
// must report only a document the model holds, expired, and never one of
// a deleted partition (a deletion is not an expiry). Half are bounded
// (MaxDocuments, each eviction policy): a write may then be refused with
// ErrFull, changing nothing, or evict (OnEvict takes the document out of
// the model too), and the documents held, deleted partitions not yet swept
// included, never pass the bound. TestModel checks the TTL rules
// themselves; this is where they meet partitions.
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
	type version struct {
		v   int
		ts  int64
		ttl int32 // the document's own: 0 for none
	}
	steps := 50
	if ttlstore.RaceRepeat(t) {
		steps = 15 // the repeats of -count under -race
	}
	rapid.Check(t, func(rt *rapid.T) {
		durable := rapid.Bool().Draw(rt, "durable")
		fsys := vfs.NewMemFS()
		clk := newMock()
		model := map[key]version{}
		now := func() int64 { return clk.Now().Unix() }
		var def int32 // 0: TTL off
		if rapid.Bool().Draw(rt, "ttl") {
			def = 30
		}
		expiry := func(m version) int64 {
			ttl := m.ttl
			if ttl == 0 {
				ttl = def
			}
			if def == 0 || ttl < 0 {
				return math.MaxInt64
			}
			return m.ts + int64(ttl)
		}
		live := func(k key) bool {
			m, ok := model[k]
			return ok && now() < expiry(m)
		}
		keyOf := func(d ttlstore.Document) key { return key{slices.Index(pks, d.PartitionKey()), d.ID()} }
		// The change feed, read after every step: each (partition, id)'s
		// _etag by the feed, and the expiries OnExpire was given since.
		feedState := map[key]string{}
		var feedToken string
		var reported []string
		opts := ttlstore.Options{
			PartitionKeyPath: "/tenant",
			Clock:            clk,
			SweepInterval:    ttlstore.ManualSweep,
			SweepBatch:       rapid.IntRange(0, 3).Draw(rt, "SweepBatch"),
			// An eviction is the model's too (it is never the
			// evicting write's own document).
			OnEvict: func(d ttlstore.Document) {
				k := keyOf(d)
				require.True(rt, live(k), "evicted %v, which the model does not hold live", k)
				delete(model, k)
			},
			// An expiry must be of a document the model holds and
			// has expired: not of a deleted partition's.
			OnExpire: func(d ttlstore.Document) {
				k := keyOf(d)
				m, ok := model[k]
				require.True(rt, ok, "reported %v expired, which the model does not hold (deleted?)", k)
				require.Equal(rt, fmt.Sprint(m.v), string(membersOf(rt, d)["v"]), "reported %v expired: not its version", k)
				require.False(rt, live(k), "reported %v expired while live", k)
				delete(model, k)
				reported = append(reported, fmt.Sprint(k, d.ETag()))
			},
			ChangeFeed: ttlstore.ChangeFeedOptions{RetainBytes: 16 << 20},
		}
		if def != 0 {
			opts.DefaultTTL = ttlstore.TTL(def)
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
		// doc returns a document of k with the value v, and the version
		// it stores when written now.
		doc := func(k key, v int) ([]byte, version) {
			m := spellings[k.pk]
			ttl := rapid.SampledFrom([]int32{0, 0, -1, 5, 50}).Draw(rt, "ttl")
			member := ""
			if ttl != 0 {
				member = fmt.Sprintf(`,"ttl":%d`, ttl)
			}
			return []byte(fmt.Sprintf(`{"id":%q,"v":%d%s%s}`, k.id, v, member, m[rapid.IntRange(0, len(m)-1).Draw(rt, "spelling")])),
				version{v: v, ts: now(), ttl: ttl}
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
		for step := range steps {
			k := key{rapid.IntRange(0, len(pks)-1).Draw(rt, "pk"), rapid.SampledFrom(ids).Draw(rt, "id")}
			pk := pks[k.pk]
			exists := live(k)
			switch op := rapid.IntRange(0, 11).Draw(rt, "op"); op {
			case 0:
				d, m := doc(k, step)
				_, err := c.Create(d)
				if full(err) {
					break
				}
				want("create", err, !exists, ttlstore.ErrConflict)
				if !exists {
					model[k] = m
				}
			case 1:
				d, m := doc(k, step)
				_, err := c.Upsert(d)
				if full(err) {
					break
				}
				require.NoError(rt, err)
				model[k] = m
			case 2:
				d, m := doc(k, step)
				_, err := c.ReplaceIn(pk, d)
				want("replace", err, exists, ttlstore.ErrNotFound)
				if exists {
					model[k] = m
				}
			case 3:
				other := (k.pk + 1) % len(pks)
				d, _ := doc(k, step)
				_, err := c.UpsertIn(pks[other], d)
				require.ErrorIs(rt, err, ttlstore.ErrInvalidDocument, "another partition")
			case 4:
				want("delete", c.DeleteIn(pk, k.id), exists, ttlstore.ErrNotFound)
				if exists {
					delete(model, k)
				}
			case 5:
				_, err := c.TouchIn(pk, k.id)
				want("touch", err, exists, ttlstore.ErrNotFound)
				if exists {
					m := model[k]
					m.ts = now()
					model[k] = m
				}
			case 6:
				_, err := c.PatchIn(pk, k.id, []ttlstore.PatchOp{{Kind: ttlstore.PatchSet, Path: "/v", Value: []byte(fmt.Sprint(step))}})
				want("patch", err, exists, ttlstore.ErrNotFound)
				if exists {
					m := model[k]
					m.v, m.ts = step, now()
					model[k] = m
				}
			case 7:
				require.NoError(rt, c.DeletePartition(pk))
				maps.DeleteFunc(model, func(m key, _ version) bool { return m.pk == k.pk })
			case 8:
				// A batch in pk: upsert k, then delete another id of pk
				// (which fails the batch when it is absent).
				o := key{k.pk, ids[(slices.Index(ids, k.id)+1)%len(ids)]}
				oexists := live(o)
				d, m := doc(k, step)
				_, err := c.ExecuteBatch(new(ttlstore.Batch).In(pk).Upsert(d).Delete(o.id))
				if full(err) {
					break
				}
				want("batch", err, oexists, ttlstore.ErrNotFound)
				if oexists {
					model[k] = m
					delete(model, o)
				}
			case 9:
				c.Sweep()
			case 10:
				clk.Add(time.Duration(rapid.IntRange(0, 40).Draw(rt, "seconds")) * time.Second)
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
			nlive := 0
			for i, pk := range pks {
				got := map[string]string{}
				for d := range c.AllIn(pk) {
					got[d.ID()] = string(membersOf(rt, d)["v"])
				}
				wantIn := map[string]string{}
				for m, v := range model {
					if m.pk == i && live(m) {
						wantIn[m.id] = fmt.Sprint(v.v)
						nlive++
					}
				}
				require.Equal(rt, wantIn, got, "step %d: partition %v", step, pk)
				for _, id := range ids {
					d, err := c.ReadIn(pk, id)
					if k := (key{i, id}); live(k) {
						require.NoError(rt, err)
						require.Equal(rt, fmt.Sprint(model[k].v), string(membersOf(rt, d)["v"]))
						require.Equal(rt, pk, d.PartitionKey())
						require.Equal(rt, model[k].ts, d.TS().Unix())
					} else {
						require.True(rt, errors.Is(err, ttlstore.ErrNotFound), "step %d: %v %s: %v", step, pk, id, err)
					}
				}
			}
			require.Equal(rt, nlive, c.Len())
			n := 0
			for range c.All() {
				n++
			}
			require.Equal(rt, nlive, n)
			// The feed: each change follows the version it last showed,
			// its expiries are OnExpire's, and it leaves the documents
			// the model holds (live, or expired and not yet swept).
			req := ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Evictions: true, Token: feedToken}
			var expired []string
			for {
				page, err := c.ReadFeed(req)
				require.NoError(rt, err, "step %d: ReadFeed", step)
				for _, ch := range page.Changes {
					k := key{slices.Index(pks, ch.PartitionKey), ch.ID}
					if why := feedFollow(feedState, k, ch); why != "" {
						rt.Fatalf("step %d: %s", step, why)
					}
					if ch.TimeToLiveExpired {
						expired = append(expired, fmt.Sprint(k, ch.PreviousETag))
					}
				}
				req.Token = page.Token
				if len(page.Changes) == 0 {
					break
				}
			}
			feedToken = req.Token
			slices.Sort(expired)
			slices.Sort(reported)
			require.Equal(rt, reported, expired, "step %d: the feed's expiries, against OnExpire's", step)
			reported = nil
			require.ElementsMatch(rt, slices.Collect(maps.Keys(model)), slices.Collect(maps.Keys(feedState)), "step %d: what the feed leaves", step)
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
