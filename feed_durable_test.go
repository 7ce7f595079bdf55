package ttlstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// openFeedMem opens "db" on fsys with a change feed keeping retain bytes.
func openFeedMem(t testing.TB, fsys vfs.FS, clk clock.Clock, policy ttlstore.SyncPolicy, minCompact, retain int64) (*ttlstore.Collection, error) {
	t.Helper()
	return ttlstore.OpenFS(fsys, "db", ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(3600),
		Clock:         clk,
		SweepInterval: ttlstore.ManualSweep,
		Sync:          policy,
		ChangeFeed:    ttlstore.ChangeFeedOptions{RetainBytes: retain},
	}, minCompact, true)
}

// feedLines describes changes with their LSNs and documents' _etags, to
// compare feeds read in different processes.
func feedLines(changes []ttlstore.Change) []string {
	var out []string
	for _, ch := range changes {
		out = append(out, fmt.Sprintf("%d %s %s ttl=%v prev=%s etag=%s", ch.LSN, ch.Op, ch.ID, ch.TimeToLiveExpired, ch.PreviousETag, ch.Document.ETag()))
	}
	return out
}

func TestFeedDurableRestart(t *testing.T) {
	fsys, clk := vfs.NewMemFS(), newMock()
	c, err := openFeedMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30, 64<<20)
	require.NoError(t, err)
	upsert(t, c, `{"id":"a","v":1}`)
	upsert(t, c, `{"id":"a","v":2}`)
	upsert(t, c, `{"id":"b","ttl":5}`)
	before, mid := readFeed(t, c, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Previous: true})
	require.NoError(t, c.Close())

	clk.Add(10 * time.Second) // b expires while the collection is closed
	c, err = openFeedMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30, 64<<20)
	require.NoError(t, err)
	again, _ := readFeed(t, c, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Previous: true})
	require.Equal(t, feedLines(before), feedLines(again), "the same feed after a restart")
	assert.Equal(t, before[0].Document.ETag(), again[1].Previous.ETag(), "Previous is read back too")
	assert.JSONEq(t, string(before[1].Document.JSON()), string(again[1].Document.JSON()))

	require.NoError(t, c.Delete("a"))
	require.Equal(t, 1, c.Sweep())
	rest := readFrom(t, c, avad, mid)
	require.Equal(t, []string{"delete a", "delete b ttl"}, describe(rest), "the token from before the restart resumes")
	require.NoError(t, c.Close())

	// The expiry is in the log: a restart neither loses it nor reports it twice.
	c, err = openFeedMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30, 64<<20)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, 0, c.Sweep())
	rest2 := readFrom(t, c, avad, mid)
	require.Equal(t, feedLines(rest), feedLines(rest2))
}

func TestFeedDurableCompaction(t *testing.T) {
	fsys, clk := vfs.NewMemFS(), newMock()
	c, err := openFeedMem(t, fsys, clk, ttlstore.SyncNever, 1<<30, 64<<20)
	require.NoError(t, err)
	for i := range 20 {
		upsert(t, c, fmt.Sprintf(`{"id":"%d"}`, i%5))
	}
	require.NoError(t, c.Compact())
	upsert(t, c, `{"id":"after"}`)
	require.NoError(t, c.Compact())
	all, _ := readFeed(t, c, avad)
	require.Len(t, all, 21)
	require.NoError(t, c.Close())

	c, err = openFeedMem(t, fsys, clk, ttlstore.SyncNever, 1<<30, 64<<20)
	require.NoError(t, err)
	again, _ := readFeed(t, c, avad)
	require.Equal(t, feedLines(all), feedLines(again), "compactions keep the logs the feed needs")
	require.NoError(t, c.Close())

	// With room for one log only, a compaction drops the older ones, and
	// a token in them is gone.
	c, err = openFeedMem(t, fsys, clk, ttlstore.SyncNever, 1<<30, 1)
	require.NoError(t, err)
	upsert(t, c, `{"id":"newest"}`)
	require.NoError(t, c.Compact())
	require.NoError(t, c.Close())
	c, err = openFeedMem(t, fsys, clk, ttlstore.SyncNever, 1<<30, 64<<20)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: all[3].Token()})
	require.ErrorIs(t, err, ttlstore.ErrTokenGone)
	kept, _ := readFeed(t, c, avad)
	assert.NotContains(t, describe(kept), "create 0")
}

// TestFeedDurableGap: changes made while the collection had no feed are a
// gap, and a token from before them is gone rather than silently short.
func TestFeedDurableGap(t *testing.T) {
	fsys, clk := vfs.NewMemFS(), newMock()
	c, err := openFeedMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30, 64<<20)
	require.NoError(t, err)
	upsert(t, c, `{"id":"a"}`)
	_, tok := readFeed(t, c, avad)
	require.NoError(t, c.Close())

	c, err = openMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30) // no feed
	require.NoError(t, err)
	upsert(t, c, `{"id":"unseen"}`)
	require.NoError(t, c.Close())

	c, err = openFeedMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30, 64<<20)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: tok})
	require.ErrorIs(t, err, ttlstore.ErrTokenGone)
	upsert(t, c, `{"id":"b"}`)
	got, _ := readFeed(t, c, avad)
	assert.Equal(t, []string{"create b"}, describe(got))
}

// TestFeedDurableCrash runs random histories with a feed reader on a
// crash-simulating file system, injects a fault (at a random operation, or
// at a random fsync of a log), crashes, and reopens: what
// the reader was given is never undone (a prefix of the reopened feed),
// its last token resumes with no gap and no duplicate, and the reopened
// feed, replayed, gives exactly the documents the collection holds.
func TestFeedDurableCrash(t *testing.T) {
	for _, tc := range crashModes {
		t.Run(tc.name, func(t *testing.T) {
			seeds := crashSeeds(t)
			for seed := range seeds {
				feedCrashHistory(t, uint64(seed), tc.policy, tc.kill, seed%2 == 1)
			}
		})
	}
}

// failLogSync fails the n-th fsync of a log file.
func failLogSync(n int64) func(vfs.Op, string) error {
	var calls atomic.Int64
	return func(op vfs.Op, name string) error {
		if op == vfs.OpSync && strings.HasSuffix(name, ".log") && calls.Add(1) == n {
			return vfs.ErrInjected
		}
		return nil
	}
}

// feedCrashHistory runs one history of TestFeedDurableCrash. The fault is
// at a random operation, or with logSync at a random fsync of a log.
func feedCrashHistory(t *testing.T, seed uint64, policy ttlstore.SyncPolicy, kill, logSync bool) {
	rng := rand.New(rand.NewPCG(seed, 19))
	fsys, clk := vfs.NewMemFS(), newMock()
	c, err := openFeedMem(t, fsys, clk, policy, 512, 64<<20)
	require.NoError(t, err)
	if logSync {
		fsys.SetHook(failLogSync(1 + rng.Int64N(40)))
	} else {
		fsys.SetHook(vfs.FailNth(1+rng.Int64N(400), nil))
	}
	var seen []ttlstore.Change
	req := ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes}
	for op := 0; op < 60; op++ {
		id := "d" + strconv.Itoa(rng.IntN(8))
		var err error
		switch k := rng.IntN(20); {
		case k < 9:
			_, err = c.Upsert(fmt.Appendf(nil, `{"id":%q,"n":%d,"ttl":%d}`, id, op, 1+rng.IntN(60)))
		case k < 12:
			err = c.Delete(id)
		case k < 13:
			_, err = c.ExecuteBatch(new(ttlstore.Batch).Upsert(fmt.Appendf(nil, `{"id":%q}`, id)).Upsert([]byte(`{"id":"batch"}`)))
		case k < 15:
			clk.Add(time.Duration(rng.IntN(30)) * time.Second)
			c.Sweep()
		case k < 17:
			if err := c.Compact(); err != nil {
				require.ErrorIs(t, err, ttlstore.ErrIO, "seed %d", seed)
			}
		default:
			page, err := c.ReadFeed(req)
			if err != nil {
				require.ErrorIs(t, err, ttlstore.ErrIO, "seed %d", seed)
				continue
			}
			seen = append(seen, page.Changes...)
			req.Token = page.Token
		}
		if err != nil && !errors.Is(err, ttlstore.ErrNotFound) {
			require.ErrorIs(t, err, ttlstore.ErrIO, "seed %d", seed)
		}
	}
	var after *vfs.MemFS
	if kill {
		after = fsys.Kill()
	} else {
		after = fsys.Crash(rng, true)
	}
	c.Close()

	c2, err := openFeedMem(t, after, clk, policy, 512, 64<<20)
	require.NoError(t, err, "seed %d", seed)
	defer c2.Close()
	c2.Sweep()
	whole, _ := readFeed(t, c2, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes})

	require.GreaterOrEqual(t, len(whole), len(seen), "seed %d: the feed lost changes it had returned", seed)
	require.Equal(t, feedLines(seen), feedLines(whole[:len(seen)]), "seed %d: what the feed returned is undone", seed)
	if req.Token != "" {
		rest := readFrom(t, c2, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes}, req.Token)
		require.Equal(t, feedLines(whole[len(seen):]), feedLines(rest), "seed %d: resumed with a gap or a duplicate", seed)
	}
	live := map[string]bool{}
	for _, ch := range whole {
		live[ch.ID] = ch.Op != ttlstore.OpDelete
	}
	var want, got []string
	for id, l := range live {
		if l {
			want = append(want, id)
		}
	}
	for d := range c2.All() {
		got = append(got, d.ID())
	}
	slices.Sort(want)
	slices.Sort(got)
	require.Equal(t, want, got, "seed %d (log fsync fault %v): the feed replayed is not what the collection holds", seed, logSync)
}

// TestFeedDurableSnapshotBehindLog writes into the log a compaction has
// just started, before it captures the documents, and fails that write's
// fsync; a power loss then keeps only what was synced. The snapshot must
// not hold the write (its record, and the feed's, are gone): the reopened
// collection and its feed agree, and neither has it. Under SyncNever the
// write succeeds and the compaction's own sync of the log fails.
func TestFeedDurableSnapshotBehindLog(t *testing.T) {
	for _, policy := range []ttlstore.SyncPolicy{ttlstore.SyncAlways, ttlstore.SyncNever} {
		t.Run(policy.String(), func(t *testing.T) {
			fsys, clk := vfs.NewMemFS(), newMock()
			c, err := openFeedMem(t, fsys, clk, policy, 1<<30, 64<<20)
			require.NoError(t, err)
			_, err = c.Upsert([]byte(`{"id":"a"}`))
			require.NoError(t, err)
			err = c.CompactBetween(func() {
				fsys.SetHook(failLogSync(1))
				_, err := c.Upsert([]byte(`{"id":"b"}`))
				if policy == ttlstore.SyncAlways {
					assert.ErrorIs(t, err, ttlstore.ErrIO)
				} else {
					assert.NoError(t, err)
				}
			})
			assert.ErrorIs(t, err, ttlstore.ErrIO, "the snapshot was published over an unsynced log")
			after := fsys.Crash(nil, false)
			c.Close()

			c2, err := openFeedMem(t, after, clk, policy, 1<<30, 64<<20)
			require.NoError(t, err)
			defer c2.Close()
			whole, _ := readFeed(t, c2, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes})
			assert.Equal(t, []string{"create a"}, describe(whole))
			var ids []string
			for d := range c2.All() {
				ids = append(ids, d.ID())
			}
			assert.Equal(t, []string{"a"}, ids)
		})
	}
}

func TestFeedDurablePartitionDelete(t *testing.T) {
	fsys, clk := vfs.NewMemFS(), newMock()
	opts := ttlstore.Options{PartitionKeyPath: "/t", Clock: clk, SweepInterval: ttlstore.ManualSweep, DefaultTTL: ttlstore.TTL(ttlstore.Never),
		ChangeFeed: ttlstore.ChangeFeedOptions{RetainBytes: 1 << 20}}
	c, err := ttlstore.OpenFS(fsys, "db", opts, 1<<30, false)
	require.NoError(t, err)
	upsert(t, c, `{"id":"1","t":"a"}`)
	upsert(t, c, `{"id":"2","t":"a","ttl":1}`)
	clk.Add(2 * time.Second)
	require.NoError(t, c.DeletePartition(pkA))
	before, _ := readFeed(t, c, avad)
	require.Equal(t, []string{"create 1", "create 2", "delete 1", "delete 2"}, describe(before))
	require.NoError(t, c.Close())

	c, err = ttlstore.OpenFS(fsys, "db", opts, 1<<30, false)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, 0, c.Sweep(), "the partition's documents are gone, not expired again")
	again, _ := readFeed(t, c, avad)
	require.Equal(t, feedLines(before), feedLines(again))
	assert.Equal(t, pkA, again[3].PartitionKey)
}

// TestFeedDurableTokenAhead: under SyncNever the feed shows what the OS
// has; a power loss can take it back, and a token past the log's end is
// refused rather than pointed at the writes that take its place.
func TestFeedDurableTokenAhead(t *testing.T) {
	fsys, clk := vfs.NewMemFS(), newMock()
	c, err := openFeedMem(t, fsys, clk, ttlstore.SyncNever, 1<<30, 64<<20)
	require.NoError(t, err)
	upsert(t, c, `{"id":"a"}`)
	require.NoError(t, c.Close()) // synced
	c, err = openFeedMem(t, fsys, clk, ttlstore.SyncNever, 1<<30, 64<<20)
	require.NoError(t, err)
	upsert(t, c, `{"id":"b"}`)
	_, tok := readFeed(t, c, avad)
	after := fsys.Crash(nil, false) // b was never synced
	c.Close()

	c, err = openFeedMem(t, after, clk, ttlstore.SyncNever, 1<<30, 64<<20)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: tok})
	require.ErrorIs(t, err, ttlstore.ErrInvalidToken)
	assert.Contains(t, err.Error(), "ahead")
}

// TestFeedDurableMissingLog: a log the feed kept, removed by hand, is a gap:
// tokens before it are gone, and the feed goes on after it.
func TestFeedDurableMissingLog(t *testing.T) {
	fsys, clk := vfs.NewMemFS(), newMock()
	c, err := openFeedMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30, 64<<20)
	require.NoError(t, err)
	upsert(t, c, `{"id":"in-log-1"}`)
	_, tok := readFeed(t, c, avad)
	require.NoError(t, c.Compact())
	upsert(t, c, `{"id":"in-log-2"}`)
	require.NoError(t, c.Compact())
	upsert(t, c, `{"id":"in-log-3"}`)
	require.NoError(t, c.Close())
	require.NoError(t, fsys.Remove("db/0000000000000002.log"))

	c, err = openFeedMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30, 64<<20)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: tok})
	require.ErrorIs(t, err, ttlstore.ErrTokenGone)
	got, _ := readFeed(t, c, avad)
	assert.Equal(t, []string{"create in-log-3"}, describe(got))
}
