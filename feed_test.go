package ttlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// withFeed returns opts with a change feed that keeps 64 MiB.
func withFeed(opts ttlstore.Options) ttlstore.Options {
	opts.ChangeFeed = ttlstore.ChangeFeedOptions{RetainBytes: 64 << 20}
	return opts
}

// readFeed reads req's feed page by page until a page is empty, and returns
// the changes and the last token.
func readFeed(t *testing.T, c *ttlstore.Collection, req ttlstore.FeedRequest) ([]ttlstore.Change, string) {
	t.Helper()
	var all []ttlstore.Change
	for {
		page, err := c.ReadFeed(req)
		require.NoError(t, err)
		all = append(all, page.Changes...)
		if page.Token == req.Token || (len(page.Changes) == 0 && req.Token != "") {
			return all, page.Token
		}
		req.Token = page.Token
	}
}

// describe writes changes as "op id", with " ttl" for an expiry.
func describe(changes []ttlstore.Change) []string {
	var out []string
	for _, ch := range changes {
		s := ch.Op.String() + " " + ch.ID
		if ch.TimeToLiveExpired {
			s += " ttl"
		}
		out = append(out, s)
	}
	return out
}

var avad = ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes}

func TestFeedOff(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	_, err := c.ReadFeed(avad)
	require.ErrorIs(t, err, ttlstore.ErrNoChangeFeed)
	_, err = ttlstore.New(ttlstore.Options{ChangeFeed: ttlstore.ChangeFeedOptions{RetainBytes: -1}})
	require.ErrorIs(t, err, ttlstore.ErrInvalidOptions)
	_, err = ttlstore.New(ttlstore.Options{ChangeFeed: ttlstore.ChangeFeedOptions{RetainFor: -time.Second}})
	require.ErrorIs(t, err, ttlstore.ErrInvalidOptions)
}

func TestFeedAllVersionsAndDeletes(t *testing.T) {
	c, clk := newCollection(t, withFeed(ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never)}))
	d1 := mustUpsert(t, c, `{"id":"a","v":1}`)
	d2 := mustUpsert(t, c, `{"id":"a","v":2}`)
	d3, err := c.Patch("a", []ttlstore.PatchOp{{Kind: ttlstore.PatchSet, Path: "/v", Value: []byte(`3`)}})
	require.NoError(t, err)
	clk.Add(time.Second)
	d4, err := c.Touch("a")
	require.NoError(t, err)
	mustUpsert(t, c, `{"id":"b","ttl":5}`)
	require.NoError(t, c.Delete("a"))
	err = c.Delete("nope")
	require.ErrorIs(t, err, ttlstore.ErrNotFound) // changes nothing, so no change

	got, _ := readFeed(t, c, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Previous: true})
	require.Equal(t, []string{"create a", "replace a", "replace a", "replace a", "create b", "delete a"}, describe(got))
	versions := []ttlstore.Document{d1, d2, d3, d4}
	for i, ch := range got[:4] {
		assert.Equal(t, versions[i].ETag(), ch.Document.ETag(), "change %d", i)
		assert.JSONEq(t, string(versions[i].JSON()), string(ch.Document.JSON()))
		if i > 0 {
			assert.Equal(t, versions[i-1].ETag(), ch.PreviousETag, "change %d names the version before", i)
			assert.Equal(t, versions[i-1].ETag(), ch.Previous.ETag())
		}
		if i > 0 {
			assert.Greater(t, ch.LSN, got[i-1].LSN)
		}
	}
	assert.Empty(t, got[0].PreviousETag)
	assert.Equal(t, d4.ETag(), got[5].PreviousETag)
	assert.Empty(t, got[5].Document.ID(), "a delete has no new version")
	assert.Equal(t, "a", got[5].ID)
	assert.Equal(t, time.Unix(d4.TS().Unix(), 0).UTC(), got[3].Time)

	// A returned document cannot change what is stored.
	j := got[4].Document.JSON()
	j[2] = 'X'
	d, err := c.Read("b")
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"b","ttl":5}`, string(stripSystem(t, d.JSON())))
}

func TestFeedExpiriesMarkedOnce(t *testing.T) {
	c, clk := newCollection(t, withFeed(ttlstore.Options{DefaultTTL: ttlstore.TTL(10)}))
	mustUpsert(t, c, `{"id":"swept"}`)
	mustUpsert(t, c, `{"id":"overwritten"}`)
	mustUpsert(t, c, `{"id":"purged","ttl":-1}`)
	mustUpsert(t, c, `{"id":"live","ttl":100}`)
	_, tok := readFeed(t, c, avad)

	clk.Add(11 * time.Second)
	assert.Empty(t, readFrom(t, c, avad, tok), "expired but not removed: no change yet")
	_, err := c.Create([]byte(`{"id":"overwritten"}`))
	require.NoError(t, err)
	require.Equal(t, 1, c.Sweep())
	assert.Equal(t, 0, c.Sweep())
	require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(1)))
	// purged has ttl -1: it never expires, whatever the default.
	require.NoError(t, c.SetDefaultTTL(nil))
	mustUpsert(t, c, `{"id":"x","ttl":1}`)
	require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(ttlstore.Never)))
	clk.Add(2 * time.Second)
	require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(1)))
	c.Sweep()

	got := readFrom(t, c, avad, tok)
	// x expired under TTL Never by its own ttl: the change to 1 purges it
	// (R13); overwritten has no ttl of its own, so the new default makes
	// it expire at once (R14), for the sweep.
	assert.Equal(t, []string{"delete overwritten ttl", "create overwritten", "delete swept ttl", "create x", "delete x ttl", "delete overwritten ttl"}, describe(got))
}

// readFrom reads everything after tok.
func readFrom(t *testing.T, c *ttlstore.Collection, req ttlstore.FeedRequest, tok string) []ttlstore.Change {
	t.Helper()
	req.Token = tok
	got, _ := readFeed(t, c, req)
	return got
}

func TestFeedBatchSharesLSN(t *testing.T) {
	c, _ := newCollection(t, withFeed(ttlstore.Options{}))
	mustUpsert(t, c, `{"id":"a"}`)
	_, err := c.ExecuteBatch(new(ttlstore.Batch).Upsert([]byte(`{"id":"b"}`)).Delete("a").Read("b").Upsert([]byte(`{"id":"b","v":2}`)))
	require.NoError(t, err)
	_, err = c.ExecuteBatch(new(ttlstore.Batch).Upsert([]byte(`{"id":"c"}`)).Delete("zz"))
	require.ErrorIs(t, err, ttlstore.ErrNotFound) // a failed batch changes nothing
	got, _ := readFeed(t, c, avad)
	require.Equal(t, []string{"create a", "create b", "delete a", "replace b"}, describe(got))
	assert.Equal(t, got[1].LSN, got[2].LSN)
	assert.Equal(t, got[1].LSN, got[3].LSN)
	assert.Greater(t, got[1].LSN, got[0].LSN)

	// A token in the middle of the batch resumes within it.
	rest := readFrom(t, c, avad, got[1].Token())
	assert.Equal(t, []string{"delete a", "replace b"}, describe(rest))
}

func TestFeedDeletePartition(t *testing.T) {
	c, clk := newPartitioned(t, "/t", withFeed(ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never)}))
	mustUpsert(t, c, `{"id":"1","t":"a"}`)
	mustUpsert(t, c, `{"id":"2","t":"a","ttl":1}`)
	mustUpsert(t, c, `{"id":"3","t":"b"}`)
	_, tok := readFeed(t, c, avad)
	clk.Add(2 * time.Second)
	require.NoError(t, c.DeletePartition(pkA))
	c.Sweep()
	got := readFrom(t, c, avad, tok)
	require.Equal(t, []string{"delete 1", "delete 2"}, describe(got), "a deletion, not an expiry, even of an expired document (as OnExpire)")
	assert.Equal(t, got[0].LSN, got[1].LSN, "one commit")
	assert.Equal(t, pkA, got[0].PartitionKey)
}

func TestFeedEvictionsAndLoadsAskedFor(t *testing.T) {
	c, _ := newCollection(t, withFeed(ttlstore.Options{MaxDocuments: 1, Eviction: ttlstore.EvictColdest}))
	mustUpsert(t, c, `{"id":"a"}`)
	mustUpsert(t, c, `{"id":"b"}`)
	_, err := c.ReadOrLoad(context.Background(), "c", func(context.Context, string) (any, error) {
		return []byte(`{"id":"c"}`), nil
	})
	require.NoError(t, err)

	got, _ := readFeed(t, c, avad)
	assert.Equal(t, []string{"create a", "create b"}, describe(got), "neither evictions nor loads unless asked")
	all, _ := readFeed(t, c, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Evictions: true, Loads: true})
	assert.Equal(t, []string{"create a", "evicted a", "create b", "evicted b", "loaded c"}, describe(all))
	lv, _ := readFeed(t, c, ttlstore.FeedRequest{Loads: true})
	assert.Equal(t, []string{"loaded c"}, describe(lv), "LatestVersion: what was evicted is not there any more")
}

func TestFeedLatestVersion(t *testing.T) {
	c, _ := newCollection(t, withFeed(ttlstore.Options{}))
	mustUpsert(t, c, `{"id":"a","v":1}`)
	mustUpsert(t, c, `{"id":"b"}`)
	mustUpsert(t, c, `{"id":"a","v":2}`)
	mustUpsert(t, c, `{"id":"gone"}`)
	require.NoError(t, c.Delete("gone"))
	got, tok := readFeed(t, c, ttlstore.FeedRequest{})
	require.Equal(t, []string{"create b", "replace a"}, describe(got))
	assert.JSONEq(t, `{"id":"a","v":2}`, string(stripSystem(t, got[1].Document.JSON())))

	for _, size := range []int{1, 2, 3} {
		var paged []ttlstore.Change
		req := ttlstore.FeedRequest{MaxChanges: size}
		for {
			page, err := c.ReadFeed(req)
			require.NoError(t, err)
			if len(page.Changes) == 0 {
				break
			}
			paged = append(paged, page.Changes...)
			req.Token = page.Token
		}
		assert.Equal(t, []string{"create b", "replace a"}, describe(paged),
			"pages of %d: each document once, at its latest change; a replaced version or a deleted document in an earlier page is not returned", size)
	}

	require.NoError(t, c.Delete("b"))
	assert.Empty(t, readFrom(t, c, ttlstore.FeedRequest{}, tok), "deletes do not appear")
	_, err := c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: tok})
	require.ErrorIs(t, err, ttlstore.ErrInvalidToken, "a token of another mode")
}

// TestFeedLatestVersionExpired: LatestVersion does not return a document
// that has expired, whether or not the sweeper removed it.
func TestFeedLatestVersionExpired(t *testing.T) {
	c, mock := newCollection(t, withFeed(ttlstore.Options{DefaultTTL: ttlstore.TTL(10), SweepInterval: ttlstore.ManualSweep}))
	mustUpsert(t, c, `{"id":"short","ttl":5}`)
	mustUpsert(t, c, `{"id":"keep","ttl":-1}`)
	got, _ := readFeed(t, c, ttlstore.FeedRequest{})
	require.Equal(t, []string{"create short", "create keep"}, describe(got))
	mock.Add(5 * time.Second)
	got, _ = readFeed(t, c, ttlstore.FeedRequest{})
	assert.Equal(t, []string{"create keep"}, describe(got), "expired, not swept")
	c.Sweep()
	got, _ = readFeed(t, c, ttlstore.FeedRequest{})
	assert.Equal(t, []string{"create keep"}, describe(got), "expired and swept")
}

func TestFeedTokens(t *testing.T) {
	c, _ := newCollection(t, withFeed(ttlstore.Options{}))
	other, _ := newCollection(t, withFeed(ttlstore.Options{}))
	for i := range 50 {
		mustUpsert(t, c, fmt.Sprintf(`{"id":"%d"}`, i%7))
		if i%5 == 0 {
			_, err := c.ExecuteBatch(new(ttlstore.Batch).Upsert([]byte(fmt.Sprintf(`{"id":"b%d"}`, i))).Upsert([]byte(`{"id":"bb"}`)))
			require.NoError(t, err)
		}
	}
	whole, _ := readFeed(t, c, avad)
	require.Len(t, whole, 70)
	for _, size := range []int{1, 2, 3, 7, 100} {
		req := avad
		req.MaxChanges = size
		var paged []ttlstore.Change
		for {
			page, err := c.ReadFeed(req)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page.Changes), size)
			if len(page.Changes) == 0 {
				break
			}
			paged = append(paged, page.Changes...)
			req.Token = page.Token
		}
		assert.Equal(t, describe(whole), describe(paged), "pages of %d: exactly once, in order", size)
	}
	for i, ch := range whole {
		rest := readFrom(t, c, avad, ch.Token())
		require.Equal(t, describe(whole[i+1:]), describe(rest), "resumed after change %d", i)
	}

	page, err := c.ReadFeed(avad)
	require.NoError(t, err)
	for name, tok := range map[string]string{"garbage": "hello", "truncated": page.Token[:len(page.Token)-3], "empty body": "f"} {
		_, err := c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: tok})
		require.ErrorIs(t, err, ttlstore.ErrInvalidToken, name)
	}
	_, err = other.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: page.Token})
	require.ErrorIs(t, err, ttlstore.ErrInvalidToken, "another collection's token")
	assert.Contains(t, err.Error(), "another collection")
}

func TestFeedStarts(t *testing.T) {
	c, clk := newCollection(t, withFeed(ttlstore.Options{}))
	mustUpsert(t, c, `{"id":"a"}`)
	clk.Add(10 * time.Second)
	from := clk.Now()
	mustUpsert(t, c, `{"id":"b"}`)
	page, err := c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Start: ttlstore.FeedFromNow})
	require.NoError(t, err)
	assert.Empty(t, page.Changes)
	mustUpsert(t, c, `{"id":"c"}`)
	assert.Equal(t, []string{"create c"}, describe(readFrom(t, c, avad, page.Token)))

	got, _ := readFeed(t, c, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Start: ttlstore.FeedFromTime, StartTime: from})
	assert.Equal(t, []string{"create b", "create c"}, describe(got))
	got, _ = readFeed(t, c, ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Start: ttlstore.FeedFromTime, StartTime: from.Add(time.Millisecond)})
	assert.Equal(t, []string{}, append([]string{}, describe(got)...), "from a time within a second: the next whole second")
}

func TestFeedRetention(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{ChangeFeed: ttlstore.ChangeFeedOptions{RetainBytes: 8 << 10}})
	first, err := c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Start: ttlstore.FeedFromNow})
	require.NoError(t, err)
	for i := range 200 {
		mustUpsert(t, c, fmt.Sprintf(`{"id":"%d"}`, i))
	}
	_, err = c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: first.Token})
	require.ErrorIs(t, err, ttlstore.ErrTokenGone)
	kept, _ := readFeed(t, c, avad)
	require.NotEmpty(t, kept)
	assert.Less(t, len(kept), 200)
	assert.Equal(t, "199", kept[len(kept)-1].ID, "the newest are kept")

	byTime, clk2 := newCollection(t, ttlstore.Options{ChangeFeed: ttlstore.ChangeFeedOptions{RetainFor: time.Minute}})
	_ = clk
	mustUpsert(t, byTime, `{"id":"old"}`)
	clk2.Add(2 * time.Minute)
	mustUpsert(t, byTime, `{"id":"new"}`)
	got, _ := readFeed(t, byTime, avad)
	assert.Equal(t, []string{"create new"}, describe(got))
}

func TestWaitFeed(t *testing.T) {
	c, _ := newCollection(t, withFeed(ttlstore.Options{}))
	start, err := c.ReadFeed(ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Start: ttlstore.FeedFromNow})
	require.NoError(t, err)
	req := avad
	req.Token = start.Token

	got := make(chan []string)
	go func() {
		page, err := c.WaitFeed(context.Background(), req)
		assert.NoError(t, err)
		got <- describe(page.Changes)
	}()
	mustUpsert(t, c, `{"id":"a"}`)
	assert.Equal(t, []string{"create a"}, <-got)

	ctx, cancel := context.WithCancel(context.Background())
	req.Token = readFrom2(t, c, req)
	done := make(chan error)
	go func() {
		_, err := c.WaitFeed(ctx, req)
		done <- err
	}()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	// The iterator, then Close ends a wait.
	n := 0
	for ch, err := range c.Feed(context.Background(), avad) {
		require.NoError(t, err)
		assert.Equal(t, "a", ch.ID)
		n++
		break
	}
	assert.Equal(t, 1, n)
	c2, err := ttlstore.New(withFeed(ttlstore.Options{SweepInterval: ttlstore.ManualSweep}))
	require.NoError(t, err)
	go func() {
		_, err := c2.WaitFeed(context.Background(), ttlstore.FeedRequest{Start: ttlstore.FeedFromNow})
		done <- err
	}()
	require.NoError(t, c2.Close())
	require.ErrorIs(t, <-done, ttlstore.ErrClosed)
}

// readFrom2 returns the token after everything req can read now.
func readFrom2(t *testing.T, c *ttlstore.Collection, req ttlstore.FeedRequest) string {
	_, tok := readFeed(t, c, req)
	return tok
}

// TestFeedStress runs writers, the sweeper and readers at once: each
// reader checks that LSNs never go back and, at the end, that it saw every
// change the writers made.
func TestFeedStress(t *testing.T) {
	c, clk := newCollection(t, withFeed(ttlstore.Options{DefaultTTL: ttlstore.TTL(5)}))
	const writers, perWriter, readers = 4, 500, 3
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				mustUpsert(t, c, fmt.Sprintf(`{"id":"w%d-%d"}`, w, i%50))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			clk.Add(time.Second)
			c.Sweep()
		}
	}()
	var rwg sync.WaitGroup
	results := make([][]ttlstore.Change, readers)
	for r := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			req := avad
			req.MaxChanges = 1 + r*17
			for {
				page, err := c.ReadFeed(req)
				if !assert.NoError(t, err) {
					return
				}
				results[r] = append(results[r], page.Changes...)
				req.Token = page.Token
				if len(page.Changes) == 0 {
					select {
					case <-stop:
						page, err := c.ReadFeed(req)
						assert.NoError(t, err)
						results[r] = append(results[r], page.Changes...)
						if len(page.Changes) == 0 {
							return
						}
					default:
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	whole, _ := readFeed(t, c, avad)
	writes := 0
	for _, ch := range whole {
		if ch.Op == ttlstore.OpCreate || ch.Op == ttlstore.OpReplace {
			writes++
		}
	}
	require.Equal(t, writers*perWriter, writes, "every write is in the feed")
	for r, got := range results {
		require.Equal(t, describe(whole), describe(got), "reader %d", r)
		for i := 1; i < len(got); i++ {
			require.GreaterOrEqual(t, got[i].LSN, got[i-1].LSN)
		}
	}
	// Every delete is an expiry of a version the feed created.
	live := map[string]bool{}
	for _, ch := range whole {
		switch ch.Op {
		case ttlstore.OpCreate:
			require.False(t, live[ch.ID], "create of a live %s", ch.ID)
			live[ch.ID] = true
		case ttlstore.OpReplace:
			require.True(t, live[ch.ID])
		case ttlstore.OpDelete:
			require.True(t, ch.TimeToLiveExpired)
			require.True(t, live[ch.ID], "expiry of %s, which is not live", ch.ID)
			live[ch.ID] = false
		}
	}
	for id, l := range live {
		if _, err := c.Read(id); !l {
			require.ErrorIs(t, err, ttlstore.ErrNotFound, "the feed removed %s", id)
		}
	}
}

// stripSystem returns doc without _ts and _etag.
func stripSystem(t *testing.T, doc []byte) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	delete(m, "_ts")
	delete(m, "_etag")
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}
