package ttlstore_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// The mode matrix: the contract tests of the TTL rules (rules_test.go), of
// batches, patches and partitions run again with their collections made in
// each mode and in all at once, so that every rule is seen to hold where
// the modes meet (STYLE.md, practice 17). newCollection builds its collections in collectionMode while
// TestContractsInEveryMode runs; the tests themselves do not change.

// collectionMode is the mode newCollection builds in; "" is the plain
// in-memory collection.
var collectionMode string

// matrixModes are the modes, each a set of features.
var matrixModes = map[string][]string{
	"durable": {"durable"},
	"bounded": {"bounded"},
	// The other eviction policies, each with the rest of the modes.
	"bounded-soonest, all": {"bounded-soonest", "durable", "feed", "callbacks", "typed"},
	"bounded-none, all":    {"bounded-none", "durable", "feed", "callbacks", "typed"},
	"feed":                 {"feed"},
	"callbacks":            {"callbacks"},
	"typed":                {"typed"},
	"all":                  {"durable", "bounded", "randomized", "feed", "callbacks", "typed"},
	// Every document that can expire in the far tree (expiry_far.go),
	// whatever its ttl, so that every rule holds through its drains.
	"far":      {"far"},
	"far, all": {"far", "durable", "bounded", "feed", "callbacks", "typed"},
}

// typedViews are the typed views of the collections made in typed mode:
// upsert reads each document it writes through the view, so that the
// view's cache holds it, and Cleanup requires that the view agrees with
// the collection about every document written.
var typedViews = map[*ttlstore.Collection]*typedCheck{}

type typedCheck struct {
	view *ttlstore.Typed[map[string]any]
	ids  map[string]bool
}

// noteTyped reads d through c's typed view, if it has one.
func noteTyped(t testing.TB, c *ttlstore.Collection, d ttlstore.Document) {
	tc := typedViews[c]
	if tc == nil {
		return
	}
	tc.ids[d.ID()] = true
	if d.PartitionKey() == (ttlstore.PartitionKey{}) {
		_, err := tc.view.Read(d.ID())
		require.NoError(t, err, "typed Read of a document just written")
	}
}

// checkTyped requires that c's typed view returns what c holds for every
// id written, and not found for the others.
func checkTyped(t testing.TB, c *ttlstore.Collection, tc *typedCheck) {
	t.Helper()
	for id := range tc.ids {
		d, err := c.Read(id)
		got, terr := tc.view.Read(id)
		if errors.Is(err, ttlstore.ErrPartitionKeyRequired) {
			continue
		}
		if err != nil {
			require.ErrorIs(t, terr, ttlstore.ErrNotFound, "typed view of %s, which the collection does not have", id)
			continue
		}
		require.NoError(t, terr, id)
		var want map[string]any
		require.NoError(t, json.Unmarshal(d.JSON(), &want))
		require.Equal(t, want, got, "typed view of %s", id)
	}
}

func TestContractsInEveryMode(t *testing.T) {
	rules := []struct {
		name string
		test func(*testing.T)
	}{
		{"R1", TestR1MatrixThroughCollection}, {"R2", TestR2BoundarySecond},
		{"R3", TestR3WritesStampAndRestartCountdown}, {"R4", TestR4TTLKeptAsWrittenAndOnlyTopLevelCounts},
		{"R5", TestR5WriteReplacesWholeDocument}, {"R6", TestR6InvalidTTLRejected},
		{"R7", TestR7DefaultTTLValidated}, {"R8", TestR8DocumentValidation},
		{"R9", TestR9ExpiredIsInvisibleToEveryOperation}, {"R10", TestR10SweepRemovesOnlyExpired},
		{"R11", TestR11OnExpireAfterUnlock}, {"R12", TestR12SetDefaultTTLIsAtomic},
		{"R13", TestR13ExpiryIsFinal}, {"R14", TestR14TurningTTLOffAndOn},
		{"R15", TestR15LowerAndRaiseDefaultTTL}, {"R16", TestR16LargestTTL},
		// The document operations' contracts.
		{"BatchAppliesInOrder", TestBatchAppliesInOrder},
		{"BatchRefusals", TestBatchRefusals},
		{"BatchTooManyBytes", TestBatchTooManyBytes},
		{"BatchIsolatedFromIteration", TestBatchIsolatedFromIteration},
		{"PatchIsOneWrite", TestPatchIsOneWrite},
		{"PatchTTL", TestPatchTTL},
		{"PatchRefusals", TestPatchRefusals},
		{"PatchConditions", TestPatchConditions},
		{"PatchEqualsReplace", TestPatchEqualsReplace},
		{"PartitionSameIDTwoItems", TestPartitionSameIDTwoItems},
		{"PartitionIDOnlyFormsRefused", TestPartitionIDOnlyFormsRefused},
		{"PartitionInFormsUnpartitioned", TestPartitionInFormsUnpartitioned},
		{"PartitionMismatchRefused", TestPartitionMismatchRefused},
		{"PartitionKeyCannotChange", TestPartitionKeyCannotChange},
		{"PartitionKeyValues", TestPartitionKeyValues},
		{"PartitionScopedIteration", TestPartitionScopedIteration},
		{"DeletePartition", TestDeletePartition},
		{"DeletePartitionSweepBatches", TestDeletePartitionSweepBatches},
		{"PartitionBatch", TestPartitionBatch},
		{"PartitionReadOrLoad", TestPartitionReadOrLoad},
		{"PartitionErrorsQuoteKey", TestPartitionErrorsQuoteKey},
	}
	modes := slices.Sorted(mapsKeys(matrixModes))
	if ttlstore.RaceRepeat(t) {
		// The repeats of -count under -race (see RaceRepeat): the
		// first run checked every mode, and the tests it repeats run
		// on their own in each repeat.
		t.Skip("a repeat under -race")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			collectionMode = mode
			defer func() { collectionMode = "" }()
			if slices.Contains(matrixModes[mode], "far") {
				defer ttlstore.SetFarLead(1)()
			}
			for _, r := range rules {
				t.Run(r.name, r.test)
			}
		})
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// newInMode is newCollection's collection in collectionMode:
//   - durable: on a MemFS of its own, compacting every few KiB;
//   - bounded, bounded-soonest, bounded-none: a bound that holds the test's
//     documents (1M documents, 1 GiB) under EvictColdest, EvictSoonestExpiry
//     or NoEviction, so that every write takes the bound's path;
//   - randomized: EvictColdest's policy hash seeded at random
//     (RandomizeEviction) rather than fixed;
//   - feed: a change feed, which Cleanup replays and compares with the
//     documents the collection holds;
//   - callbacks: OnExpire and OnEvict that call back into the collection
//     (a Read of the document, which must be gone) before the test's own;
//   - typed: a typed view of every document written (see typedViews).
func newInMode(t testing.TB, opts ttlstore.Options, m *clock.Mock) (*ttlstore.Collection, *clock.Mock) {
	t.Helper()
	has := func(f string) bool { return slices.Contains(matrixModes[collectionMode], f) }
	if opts.MaxDocuments == 0 && opts.MaxBytes == 0 {
		switch {
		case has("bounded"):
			opts.MaxDocuments, opts.MaxBytes, opts.Eviction = 1<<20, 1<<30, ttlstore.EvictColdest
			opts.RandomizeEviction = has("randomized")
		case has("bounded-soonest"):
			opts.MaxDocuments, opts.MaxBytes, opts.Eviction = 1<<20, 1<<30, ttlstore.EvictSoonestExpiry
		case has("bounded-none"):
			opts.MaxDocuments, opts.MaxBytes, opts.Eviction = 1<<20, 1<<30, ttlstore.NoEviction
		}
	}
	if has("feed") && opts.ChangeFeed == (ttlstore.ChangeFeedOptions{}) {
		opts.ChangeFeed = ttlstore.ChangeFeedOptions{RetainBytes: 64 << 20}
	}
	var c *ttlstore.Collection
	if has("callbacks") {
		callBack := func(what string, then func(ttlstore.Document)) func(ttlstore.Document) {
			return func(d ttlstore.Document) {
				// The version reported is gone; the id may have a
				// new one (a write that replaced it after it
				// expired).
				got, err := c.Read(d.ID())
				if errors.Is(err, ttlstore.ErrPartitionKeyRequired) {
					got, err = c.ReadIn(d.PartitionKey(), d.ID())
				}
				if err == nil && got.ETag() == d.ETag() {
					t.Errorf("%s(%s): Read from the callback found the version reported", what, d.ID())
				} else if err != nil && !errors.Is(err, ttlstore.ErrNotFound) {
					t.Errorf("%s(%s): Read from the callback: %v", what, d.ID(), err)
				}
				if then != nil {
					then(d)
				}
			}
		}
		opts.OnExpire = callBack("OnExpire", opts.OnExpire)
		opts.OnEvict = callBack("OnEvict", opts.OnEvict)
	}
	var err error
	if has("durable") {
		c, err = ttlstore.OpenFS(vfs.NewMemFS(), "db", opts, 4<<10, false)
	} else {
		c, err = ttlstore.New(opts)
	}
	require.NoError(t, err)
	if has("typed") {
		typedViews[c] = &typedCheck{view: ttlstore.NewTyped[map[string]any](c), ids: map[string]bool{}}
	}
	t.Cleanup(func() {
		require.NoError(t, c.CheckInvariants())
		if tc := typedViews[c]; tc != nil {
			delete(typedViews, c)
			if _, err := c.Read(""); !errors.Is(err, ttlstore.ErrClosed) {
				checkTyped(t, c, tc)
			}
		}
		if has("feed") {
			checkFeedAgainst(t, c)
		}
		require.NoError(t, c.Close())
	})
	return c, m
}

// checkFeedAgainst replays c's whole feed (all versions, deletes and
// evictions) and requires that each change follows the version the feed
// last showed of its document, and that, once what has expired is swept,
// the documents the feed leaves are those c holds, at the same _etags.
func checkFeedAgainst(t testing.TB, c *ttlstore.Collection) {
	t.Helper()
	c.Sweep()
	type key struct{ pk, id string }
	state := map[key]string{}
	req := ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Evictions: true, Loads: true}
	for {
		page, err := c.ReadFeed(req)
		if errors.Is(err, ttlstore.ErrClosed) {
			return // the test closed it
		}
		require.NoError(t, err)
		for _, ch := range page.Changes {
			if why := feedFollow(state, key{ch.PartitionKey.String(), ch.ID}, ch); why != "" {
				t.Fatal(why)
			}
		}
		if len(page.Changes) == 0 {
			break
		}
		req.Token = page.Token
	}
	held := map[key]string{}
	for d := range c.All() {
		held[key{d.PartitionKey().String(), d.ID()}] = d.ETag()
	}
	require.Equal(t, held, state, "the documents by the feed, against those the collection holds")
}
