package ttlstore_test

import (
	"fmt"
	"slices"

	"pgregory.net/rapid"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/model"
)

// checkFeed reads the changes since the last check from the machine's
// change feed (all versions and deletes, evictions and loads included) and
// requires that they tell what the model says happened: each change
// follows the version the feed last showed of its id (a create only of an
// id with none, a replace or removal of the version it names), the
// expiries it marks are exactly the documents OnExpire was given, and the
// documents the feed leaves are the model's live ones and those expired
// but not yet swept (st, the model's Stats). A durable machine's token
// goes on across its restarts and crashes: no change is lost or repeated.
func (mc *machine) checkFeed(rt *rapid.T, st model.Stats) {
	req := ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Evictions: true, Loads: true, Token: mc.feedToken}
	var expired []string
	for {
		page, err := mc.c.ReadFeed(req)
		if mc.closed {
			require.ErrorIs(rt, err, ttlstore.ErrClosed)
			return
		}
		require.NoError(rt, err, "ReadFeed")
		for _, ch := range page.Changes {
			if why := feedFollow(mc.feedState, ch.ID, ch); why != "" {
				rt.Fatal(why)
			}
			if ch.TimeToLiveExpired {
				expired = append(expired, ch.PreviousETag+" "+ch.ID)
			}
		}
		req.Token = page.Token
		if len(page.Changes) == 0 {
			break
		}
	}
	mc.feedToken = req.Token

	var reported []string
	for _, d := range mc.reported {
		reported = append(reported, d.ETag()+" "+d.ID())
	}
	slices.Sort(expired)
	slices.Sort(reported)
	if !slices.Equal(expired, reported) {
		require.Equal(rt, reported, expired, "the feed's expiries against OnExpire's (etag, id)")
	}
	for _, d := range mc.m.Live() {
		if got, want := mc.feedState[d.ID], mc.realETag[d.ETag]; got != want {
			rt.Fatalf("feed: %q is at version %q; the collection's is %q", d.ID, got, want)
		}
	}
	requireEqual(rt, st.Live+st.Expired, len(mc.feedState), "documents by the feed (live, and expired not yet swept)")
}

// feedFollow applies ch, a change of the document k, to state, each
// document's _etag by the feed read so far, and returns why ch does not
// follow what state says ("" when it does): a create or a load only of a
// document the feed has not shown, anything else only of the version the
// feed last showed.
func feedFollow[K comparable](state map[K]string, k K, ch ttlstore.Change) string {
	cur, has := state[k]
	switch ch.Op {
	case ttlstore.OpCreate, ttlstore.OpLoaded:
		if has {
			return fmt.Sprintf("feed: %s of %v, whose version %s it has not removed", ch.Op, k, cur)
		}
	default:
		if !has || cur != ch.PreviousETag {
			return fmt.Sprintf("feed: %s of %v names version %s; the feed's is %q (%v)", ch.Op, k, ch.PreviousETag, cur, has)
		}
	}
	if ch.Op == ttlstore.OpDelete || ch.Op == ttlstore.OpEvicted {
		delete(state, k)
	} else {
		state[k] = ch.Document.ETag()
	}
	return ""
}
