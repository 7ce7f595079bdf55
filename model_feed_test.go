package ttlstore_test

import (
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
			cur, has := mc.feedState[ch.ID]
			switch ch.Op {
			case ttlstore.OpCreate, ttlstore.OpLoaded:
				if has {
					rt.Fatalf("feed: %s of %q, whose version %s it has not removed", ch.Op, ch.ID, cur)
				}
			default:
				if !has || cur != ch.PreviousETag {
					rt.Fatalf("feed: %s of %q names version %s; the feed's is %q (%v)", ch.Op, ch.ID, ch.PreviousETag, cur, has)
				}
			}
			switch ch.Op {
			case ttlstore.OpDelete, ttlstore.OpEvicted:
				delete(mc.feedState, ch.ID)
			default:
				mc.feedState[ch.ID] = ch.Document.ETag()
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
