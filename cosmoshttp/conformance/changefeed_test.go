//go:build azcosmos15

package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

// feedIDs returns the ids of a change feed page, in order, and checks that
// each change is a whole document with its system properties.
func feedIDs(t *testing.T, r azcosmos.ChangeFeedResponse) []string {
	t.Helper()
	out := []string{}
	for _, it := range r.Items {
		d := parse(t, it)
		for _, p := range []string{"_rid", "_etag", "_ts", "_lsn"} {
			if _, ok := d[p]; !ok {
				t.Errorf("change %s has no %s", it, p)
			}
		}
		out = append(out, d["id"].(string))
	}
	return out
}

func feedRange(t *testing.T, c *azcosmos.ContainerClient) azcosmos.FeedRange {
	t.Helper()
	ranges, err := c.ReadFeedRanges(ctx, nil)
	if err != nil {
		t.Fatalf("ReadFeedRanges: %v", err)
	}
	if len(ranges) != 1 || ranges[0].MinInclusive != "" || ranges[0].MaxExclusive != "FF" {
		t.Fatalf("feed ranges %+v, want one [\"\", FF)", ranges)
	}
	return ranges[0]
}

func TestChangeFeedLatestVersion(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	pkQ := azcosmos.NewPartitionKeyString("q")
	for _, id := range []string{"a", "b", "c"} {
		create(t, c, pkP, doc{"id": id, "pk": "p", "v": 1})
	}
	create(t, c, pkQ, doc{"id": "d", "pk": "q", "v": 1})
	fr := feedRange(t, c)
	var tok string

	t.Run("from the beginning", func(t *testing.T) {
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "a,b,c,d" {
			t.Errorf("changes %q, want a,b,c,d in write order", got)
		}
		if r.Count != 4 || r.ResourceID == "" {
			t.Errorf("_count %d _rid %q", r.Count, r.ResourceID)
		}
		tok = r.ContinuationToken
		if tok == "" {
			t.Fatal("no continuation token")
		}
	})
	t.Run("nothing new is an empty answer", func(t *testing.T) {
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{Continuation: &tok})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Items) != 0 || r.RawResponse.StatusCode != http.StatusNotModified {
			t.Errorf("status %d items %d, want 304 and none", r.RawResponse.StatusCode, len(r.Items))
		}
		if r.ContinuationToken == "" {
			t.Error("no continuation token on the empty answer")
		}
		tok = r.ContinuationToken
	})
	t.Run("incremental: latest version of each updated item, no deletes", func(t *testing.T) {
		if _, err := c.ReplaceItem(ctx, pkP, "b", []byte(`{"id":"b","pk":"p","v":2}`), nil); err != nil {
			t.Fatal(err)
		}
		p := azcosmos.PatchOperations{}
		p.AppendSet("/v", 3)
		if _, err := c.PatchItem(ctx, pkP, "b", p, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpsertItem(ctx, pkP, []byte(`{"id":"e","pk":"p","v":1}`), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.DeleteItem(ctx, pkP, "c", nil); err != nil {
			t.Fatal(err)
		}
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{Continuation: &tok})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "b,e" {
			t.Errorf("changes %q, want b,e", got)
		}
		for _, it := range r.Items {
			if d := parse(t, it); d["id"] == "b" && d["v"] != 3.0 {
				t.Errorf("b in the feed: %s, want the latest version (v 3)", it)
			}
		}
		tok = r.ContinuationToken
		r, err = c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{Continuation: &tok})
		if err != nil || len(r.Items) != 0 {
			t.Errorf("after reading everything: %v, %d items", err, len(r.Items))
		}
	})
	t.Run("from the beginning again: latest versions only, once", func(t *testing.T) {
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
		if err != nil {
			t.Fatal(err)
		}
		got := feedIDs(t, r)
		sort.Strings(got)
		if g := strings.Join(got, ","); g != "a,b,d,e" {
			t.Errorf("changes %q, want a,b,d,e (c deleted, b once)", g)
		}
	})
	t.Run("MaxItemCount pages", func(t *testing.T) {
		seen := []string{}
		var cont *string
		for i := 0; i < 10; i++ {
			o := &azcosmos.ChangeFeedOptions{MaxItemCount: 2}
			if cont == nil {
				o.FeedRange = &fr
			} else {
				o.Continuation = cont
			}
			r, err := c.ReadChangeFeed(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Items) > 2 {
				t.Errorf("page of %d items, MaxItemCount 2", len(r.Items))
			}
			if len(r.Items) == 0 {
				break
			}
			seen = append(seen, feedIDs(t, r)...)
			tk := r.ContinuationToken
			cont = &tk
		}
		sort.Strings(seen)
		if got := strings.Join(seen, ","); got != "a,b,d,e" {
			t.Errorf("paged changes %q, want a,b,d,e each once", got)
		}
	})
	t.Run("PartitionKey", func(t *testing.T) {
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr, PartitionKey: &pkQ})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "d" {
			t.Errorf("changes of q %q, want d", got)
		}
	})
	t.Run("StartFrom", func(t *testing.T) {
		e.at(100.5)
		create(t, c, pkP, doc{"id": "late", "pk": "p"})
		from := base.Add(50 * time.Second)
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr, StartFrom: &from})
		if err != nil {
			t.Fatalf("StartFrom (sent as If-Modified-Since %q): %v", from.UTC().Format(time.RFC1123), err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "late" {
			t.Errorf("changes since base+50 %q, want late", got)
		}
	})
	t.Run("continuation of another container refused", func(t *testing.T) {
		other := e.container("other", nil)
		_, err := other.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{Continuation: &tok})
		if err == nil {
			t.Error("a continuation of container c was accepted by container other: the containers share a _rid")
		}
	})
}

// TestChangeFeedTTL: expired items never show in the latest-version feed
// (R9), and in all versions and deletes (which azcosmos cannot request, so
// raw signed requests) a TTL delete is marked timeToLiveExpired (R11).
func TestChangeFeedTTL(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{SweepInterval: ttlstore.ManualSweep})
	c := e.container("c", ttlp(-1))
	fr := feedRange(t, c)
	feed := func(t *testing.T, hdr map[string]string) ([]map[string]any, string, int) {
		t.Helper()
		h := map[string]string{"A-IM": "Full-Fidelity Feed", "x-ms-cosmos-changefeed-wire-format-version": "2021-09-15", "x-ms-documentdb-partitionkeyrangeid": "0"}
		for k, v := range hdr {
			h[k] = v
		}
		resp, b := e.raw(t, "GET", "/dbs/db/colls/c/docs", cosmoshttp.EmulatorKey, "docs", "dbs/db/colls/c", h, nil)
		if resp.StatusCode == http.StatusNotModified {
			return nil, resp.Header.Get("etag"), 304
		}
		if resp.StatusCode != 200 {
			t.Fatalf("all versions and deletes: %d %s", resp.StatusCode, b)
		}
		var body struct{ Documents []map[string]any }
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return body.Documents, resp.Header.Get("etag"), 200
	}
	_, start, _ := feed(t, map[string]string{"If-None-Match": "*"})

	create(t, c, pkP, doc{"id": "short", "pk": "p", "ttl": 5})
	create(t, c, pkP, doc{"id": "keep", "pk": "p"})
	if _, err := c.ReplaceItem(ctx, pkP, "keep", []byte(`{"id":"keep","pk":"p","v":2}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteItem(ctx, pkP, "keep", nil); err != nil {
		t.Fatal(err)
	}

	t.Run("all versions: create, replace, delete", func(t *testing.T) {
		docs, _, _ := feed(t, map[string]string{"If-None-Match": start})
		var ops []string
		for _, d := range docs {
			m, _ := d["metadata"].(map[string]any)
			id := ""
			if cur, ok := d["current"].(map[string]any); ok {
				id, _ = cur["id"].(string)
			} else {
				id, _ = m["id"].(string)
			}
			ops = append(ops, id+":"+jsonString(m["operationType"]))
		}
		if got, want := strings.Join(ops, " "), `short:"create" keep:"create" keep:"replace" keep:"delete"`; got != want {
			t.Errorf("changes %s, want %s", got, want)
		}
	})
	t.Run("R9 latest version skips expired items", func(t *testing.T) {
		e.at(5)
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "" {
			t.Errorf("latest-version feed after expiry and delete: %q, want nothing", got)
		}
	})
	t.Run("R11 TTL delete marked timeToLiveExpired", func(t *testing.T) {
		// The TTL delete is written by a sweep: the server's own, run here.
		if n := e.srv.Sweep(); n != 1 {
			t.Fatalf("the sweep removed %d items, want 1 (short)", n)
		}
		docs, _, _ := feed(t, map[string]string{"If-None-Match": start})
		for _, d := range docs {
			m, _ := d["metadata"].(map[string]any)
			if m["operationType"] == "delete" && m["id"] == "short" {
				if m["timeToLiveExpired"] != true {
					t.Errorf("TTL delete without timeToLiveExpired: %v", d)
				}
				return
			}
			if m["operationType"] == "delete" && m["id"] == "keep" && m["timeToLiveExpired"] == true {
				t.Errorf("an explicit delete marked timeToLiveExpired: %v", d)
			}
		}
		t.Errorf("no TTL delete of short in the all-versions feed after a sweep: %v", docs)
	})
}

// TestChangeFeedExpired: without a sweeper, an expired item is not in the
// latest-version feed, from the beginning or incrementally (R9).
func TestChangeFeedExpired(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", ttlp(10))
	fr := feedRange(t, c)
	create(t, c, pkP, doc{"id": "old", "pk": "p"})
	r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
	if err != nil {
		t.Fatal(err)
	}
	tok := r.ContinuationToken
	create(t, c, pkP, doc{"id": "short", "pk": "p", "ttl": 5})
	create(t, c, pkP, doc{"id": "keep", "pk": "p", "ttl": -1})
	e.at(5)
	t.Run("from the beginning", func(t *testing.T) {
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "old,keep" {
			t.Errorf("changes %q at base+5, want old,keep (short expired at base+5)", got)
		}
	})
	t.Run("incremental", func(t *testing.T) {
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{Continuation: &tok})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "keep" {
			t.Errorf("changes %q at base+5, want keep", got)
		}
	})
	t.Run("after defaultTtl expiry", func(t *testing.T) {
		e.at(10)
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "keep" {
			t.Errorf("changes %q at base+10, want keep", got)
		}
	})
}

// TestReadManyItems: v1.5's ReadManyItems (a query with IN/OR built by the
// SDK, sent with x-ms-documentdb-partitionkeyrangeid) returns the items
// that exist and are alive.
func TestReadManyItems(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", ttlp(-1))
	pkQ := azcosmos.NewPartitionKeyString("q")
	create(t, c, pkP, doc{"id": "a", "pk": "p"})
	create(t, c, pkP, doc{"id": "b", "pk": "p", "ttl": 5})
	create(t, c, pkQ, doc{"id": "a", "pk": "q", "v": "q"})
	create(t, c, azcosmos.NullPartitionKey, doc{"id": "n", "pk": nil})
	cases := []struct {
		name string
		ids  []azcosmos.ItemIdentity
		want string
	}{
		{"one partition", []azcosmos.ItemIdentity{{ID: "a", PartitionKey: pkP}, {ID: "b", PartitionKey: pkP}}, "a/p,b/p"},
		{"two partitions, same id", []azcosmos.ItemIdentity{{ID: "a", PartitionKey: pkP}, {ID: "a", PartitionKey: pkQ}}, "a/p,a/q"},
		{"missing ids skipped", []azcosmos.ItemIdentity{{ID: "a", PartitionKey: pkQ}, {ID: "zz", PartitionKey: pkP}, {ID: "b", PartitionKey: pkQ}}, "a/q"},
		{"null partition key", []azcosmos.ItemIdentity{{ID: "n", PartitionKey: azcosmos.NullPartitionKey}, {ID: "a", PartitionKey: pkP}}, "a/p,n/null"},
	}
	check := func(t *testing.T, ids []azcosmos.ItemIdentity, want string) {
		t.Helper()
		r, err := c.ReadManyItems(ctx, ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range r.Items {
			d := parse(t, it)
			pk := "null"
			if s, ok := d["pk"].(string); ok {
				pk = s
			}
			got = append(got, d["id"].(string)+"/"+pk)
		}
		sort.Strings(got)
		if g := strings.Join(got, ","); g != want {
			t.Errorf("ReadManyItems %v: %q, want %q", ids, g, want)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.ids, tc.want) })
	}
	t.Run("R9 expired items skipped", func(t *testing.T) {
		e.at(5)
		check(t, []azcosmos.ItemIdentity{{ID: "a", PartitionKey: pkP}, {ID: "b", PartitionKey: pkP}}, "a/p")
	})
}

// TestChangeFeedRecreatedContainer: azcosmos v1.5 caches a container's _rid
// by name for the life of the process, so after a delete and re-create of
// the same name its change feed and ReadManyItems still work, and an old
// continuation is refused (4xx) or read on, never a 5xx.
func TestChangeFeedRecreatedContainer(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	create(t, c, pkP, doc{"id": "old", "pk": "p"})
	fr := feedRange(t, c)
	r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
	if err != nil {
		t.Fatal(err)
	}
	oldTok := r.ContinuationToken
	if _, err := c.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	c = e.container("c", nil)
	create(t, c, pkP, doc{"id": "new", "pk": "p"})
	t.Run("feed from the beginning", func(t *testing.T) {
		fr := feedRange(t, c)
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "new" {
			t.Errorf("changes %q, want new", got)
		}
	})
	t.Run("old continuation", func(t *testing.T) {
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{Continuation: &oldTok})
		if err != nil {
			if st := status(err); st >= 500 || (st >= 0 && st < 400) {
				t.Errorf("old continuation: %v", err)
			}
			return
		}
		if got := strings.Join(feedIDs(t, r), ","); strings.Contains(got, "old") {
			t.Errorf("the deleted container's item in the new one's feed: %q", got)
		}
	})
	t.Run("ReadManyItems", func(t *testing.T) {
		r, err := c.ReadManyItems(ctx, []azcosmos.ItemIdentity{{ID: "new", PartitionKey: pkP}, {ID: "old", PartitionKey: pkP}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(ids(t, r.Items), ","); got != "new" {
			t.Errorf("ReadManyItems %q, want new", got)
		}
	})
}

// TestChangeFeedDurableRestart: over a directory, a continuation taken
// before a restart reads on after it (Cosmos DB's continuations do not
// lapse), and the feed from the beginning still has every live item.
func TestChangeFeedDurableRestart(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{Dir: t.TempDir()})
	c := e.container("c", nil)
	create(t, c, pkP, doc{"id": "a", "pk": "p"})
	create(t, c, pkP, doc{"id": "b", "pk": "p"})
	fr := feedRange(t, c)
	r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
	if err != nil {
		t.Fatal(err)
	}
	tok := r.ContinuationToken
	e.restart()
	c, _ = e.client.NewContainer("db", "c")
	create(t, c, pkP, doc{"id": "after", "pk": "p"})
	t.Run("continuation from before the restart", func(t *testing.T) {
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{Continuation: &tok})
		if err != nil {
			t.Fatalf("%v", shortErr(err))
		}
		if got := strings.Join(feedIDs(t, r), ","); got != "after" {
			t.Errorf("changes %q, want after", got)
		}
	})
	t.Run("from the beginning", func(t *testing.T) {
		fr := feedRange(t, c)
		r, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &fr})
		if err != nil {
			t.Fatal(err)
		}
		got := feedIDs(t, r)
		sort.Strings(got)
		if g := strings.Join(got, ","); g != "a,after,b" {
			t.Errorf("changes %q, want a,after,b", g)
		}
	})
}

// TestReadManyItemsPathSyntax: ReadManyItems over a partition key path that
// is not an identifier (the SDK writes c["my-key"]) and one nested path.
func TestReadManyItemsPathSyntax(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	db := e.database()
	for _, path := range []string{"/my-key", "/a/b", "/id"} {
		t.Run(path, func(t *testing.T) {
			id := strings.NewReplacer("/", "_").Replace(path)
			if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: id, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{path}}}, nil); err != nil {
				t.Fatal(err)
			}
			c, _ := db.NewContainer(id)
			body := map[string]string{"/my-key": `{"id":"%s","my-key":"%s"}`, "/a/b": `{"id":"%s","a":{"b":"%s"}}`, "/id": `{"id":"%s","v":"%s"}`}[path]
			items := [][2]string{{"x", "v1"}, {"y", "v1"}, {"x", "v2"}}
			cases := []struct {
				name string
				ids  []azcosmos.ItemIdentity
				want string
			}{
				{"one partition", []azcosmos.ItemIdentity{{ID: "x", PartitionKey: azcosmos.NewPartitionKeyString("v1")}, {ID: "y", PartitionKey: azcosmos.NewPartitionKeyString("v1")}}, "x,y"},
				{"two partitions", []azcosmos.ItemIdentity{{ID: "x", PartitionKey: azcosmos.NewPartitionKeyString("v1")}, {ID: "x", PartitionKey: azcosmos.NewPartitionKeyString("v2")}}, "x,x"},
			}
			if path == "/id" {
				// The partition key is the id: the SDK's query is c.id IN (...).
				items = [][2]string{{"x", "x"}, {"y", "y"}, {"z", "z"}}
				cases = cases[:1]
				cases[0].ids = []azcosmos.ItemIdentity{{ID: "x", PartitionKey: azcosmos.NewPartitionKeyString("x")}, {ID: "y", PartitionKey: azcosmos.NewPartitionKeyString("y")}, {ID: "q", PartitionKey: azcosmos.NewPartitionKeyString("q")}}
			}
			for _, kv := range items {
				if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(kv[1]), []byte(fmt.Sprintf(body, kv[0], kv[1])), nil); err != nil {
					t.Fatal(err)
				}
			}
			for _, tc := range cases {
				r, err := c.ReadManyItems(ctx, tc.ids, nil)
				if err != nil {
					t.Errorf("%s: %v", tc.name, shortErr(err))
					continue
				}
				got := ids(t, r.Items)
				sort.Strings(got)
				if g := strings.Join(got, ","); g != tc.want {
					t.Errorf("%s: %q, want %q", tc.name, g, tc.want)
				}
			}
		})
	}
}

// TestChangeFeedPartitionPaging: a partition's feed with a small
// MaxItemCount is not handed empty pages because other partitions changed
// more.
func TestChangeFeedPartitionPaging(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	pkQ := azcosmos.NewPartitionKeyString("q")
	for i := 0; i < 10; i++ {
		create(t, c, pkQ, doc{"id": fmt.Sprint("q", i), "pk": "q"})
	}
	create(t, c, pkP, doc{"id": "p0", "pk": "p"})
	for i := 10; i < 15; i++ {
		create(t, c, pkQ, doc{"id": fmt.Sprint("q", i), "pk": "q"})
	}
	create(t, c, pkP, doc{"id": "p1", "pk": "p"})
	fr := feedRange(t, c)
	var got []string
	o := &azcosmos.ChangeFeedOptions{FeedRange: &fr, PartitionKey: &pkP, MaxItemCount: 2}
	for i := 0; i < 3; i++ {
		r, err := c.ReadChangeFeed(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, feedIDs(t, r)...)
		tok := r.ContinuationToken
		o = &azcosmos.ChangeFeedOptions{Continuation: &tok, PartitionKey: &pkP, MaxItemCount: 2}
	}
	if g := strings.Join(got, ","); g != "p0,p1" {
		t.Errorf("p's changes over three reads: %q, want p0,p1", g)
	}
}
