package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

var queryDocs = []string{
	`{"id":"a","pk":"p","n":1,"s":"apple","tags":["x","y"],"nested":{"k":1}}`,
	`{"id":"b","pk":"p","n":2,"s":"banana","tags":["y"]}`,
	`{"id":"c","pk":"p","n":3,"s":"cherry"}`,
	`{"id":"d","pk":"q","n":4,"s":"apricot","tags":["x"]}`,
	`{"id":"e","pk":"q","n":5,"s":"date","opt":null}`,
}

func queryEnv(t *testing.T) (*env, *azcosmos.ContainerClient) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	for _, d := range queryDocs {
		pk := azcosmos.NewPartitionKeyString(parse(t, []byte(d))["pk"].(string))
		if _, err := c.CreateItem(ctx, pk, []byte(d), nil); err != nil {
			t.Fatal(err)
		}
	}
	return e, c
}

func TestQuery(t *testing.T) {
	_, c := queryEnv(t)
	all := azcosmos.NewPartitionKey()
	p := azcosmos.NewPartitionKeyString("p")
	cases := []struct {
		name   string
		pk     azcosmos.PartitionKey
		q      string
		params []any
		// want is the ids (sorted unless ordered) of the results, or,
		// when raw is set, the results' JSON joined with commas, in order.
		want    string
		raw     bool
		ordered bool
	}{
		{"partition filter and WHERE on another partition", p, "SELECT * FROM c WHERE c.pk = 'q'", nil, "", false, false},
		{"SELECT * in a partition", p, "SELECT * FROM c", nil, "a,b,c", false, false},
		{"SELECT * cross-partition", all, "SELECT * FROM c", nil, "a,b,c,d,e", false, false},
		{"SELECT * other root alias", all, "SELECT * FROM root r WHERE r.n > 3", nil, "d,e", false, false},
		{"VALUE", all, "SELECT VALUE c.id FROM c ORDER BY c.id", nil, `"a","b","c","d","e"`, true, true},
		{"VALUE nested", p, "SELECT VALUE c.nested.k FROM c WHERE c.id = 'a'", nil, `1`, true, true},
		{"projection", all, "SELECT c.id, c.n FROM c WHERE c.id = 'a'", nil, `{"id":"a","n":1}`, true, true},
		{"projection with aliases and nested", all, "SELECT c.id AS i, c.nested.k AS k FROM c WHERE c.id = 'a'", nil, `{"i":"a","k":1}`, true, true},
		{"projection of an undefined property omits it", all, "SELECT c.id, c.tags FROM c WHERE c.id = 'c'", nil, `{"id":"c"}`, true, true},
		{"WHERE parameters AND", all, "SELECT * FROM c WHERE c.n > @min AND c.n <= @max", []any{"@min", 1, "@max", 4}, "b,c,d", false, false},
		{"WHERE string parameter", all, "SELECT * FROM c WHERE c.s = @s", []any{"@s", "date"}, "e", false, false},
		{"null parameter", all, "SELECT * FROM c WHERE c.opt = @x", []any{"@x", nil}, "e", false, false},
		{"object parameter", all, "SELECT * FROM c WHERE c.nested = @o", []any{"@o", map[string]any{"k": 1}}, "a", false, false},
		{"array equality", all, "SELECT * FROM c WHERE c.tags = @t", []any{"@t", []string{"x", "y"}}, "a", false, false},
		{"bool parameter", all, "SELECT * FROM c WHERE IS_DEFINED(c.tags) = @b", []any{"@b", false}, "c,e", false, false},
		{"OR", all, "SELECT * FROM c WHERE c.n = 1 OR c.n = 5", nil, "a,e", false, false},
		{"NOT", all, "SELECT * FROM c WHERE NOT (c.n > 1)", nil, "a", false, false},
		{"!= and <>", all, "SELECT * FROM c WHERE c.n != 1 AND c.n <> 2", nil, "c,d,e", false, false},
		{"IN", all, "SELECT * FROM c WHERE c.id IN ('a', 'd', 'zz')", nil, "a,d", false, false},
		{"NOT IN", all, "SELECT * FROM c WHERE c.id NOT IN ('a', 'd')", nil, "b,c,e", false, false},
		{"IS_DEFINED", all, "SELECT * FROM c WHERE IS_DEFINED(c.tags)", nil, "a,b,d", false, false},
		{"NOT IS_DEFINED", all, "SELECT * FROM c WHERE NOT IS_DEFINED(c.tags)", nil, "c,e", false, false},
		{"IS_DEFINED of a null", all, "SELECT * FROM c WHERE IS_DEFINED(c.opt)", nil, "e", false, false},
		{"comparison with undefined is not true", all, "SELECT * FROM c WHERE c.missing = null", nil, "", false, false},
		{"STARTSWITH", all, "SELECT * FROM c WHERE STARTSWITH(c.s, 'ap')", nil, "a,d", false, false},
		{"STARTSWITH parameter", all, "SELECT * FROM c WHERE STARTSWITH(c.s, @pre)", []any{"@pre", "b"}, "b", false, false},
		{"ARRAY_CONTAINS", all, "SELECT * FROM c WHERE ARRAY_CONTAINS(c.tags, 'x')", nil, "a,d", false, false},
		{"ARRAY_CONTAINS of a parameter array", all, "SELECT * FROM c WHERE ARRAY_CONTAINS(@ids, c.id)", []any{"@ids", []string{"a", "e"}}, "a,e", false, false},
		{"ORDER BY asc", all, "SELECT * FROM c ORDER BY c.s", nil, "a,d,b,c,e", false, true},
		{"ORDER BY ASC explicit", all, "SELECT * FROM c ORDER BY c.n ASC", nil, "a,b,c,d,e", false, true},
		{"ORDER BY desc", all, "SELECT * FROM c ORDER BY c.n DESC", nil, "e,d,c,b,a", false, true},
		{"ORDER BY in a partition", p, "SELECT VALUE c.id FROM c ORDER BY c.n DESC", nil, `"c","b","a"`, true, true},
		{"TOP", all, "SELECT TOP 2 * FROM c ORDER BY c.n", nil, "a,b", false, true},
		{"TOP parameter", all, "SELECT TOP @k * FROM c ORDER BY c.n DESC", []any{"@k", 1}, "e", false, true},
		{"OFFSET LIMIT", all, "SELECT * FROM c ORDER BY c.n OFFSET 1 LIMIT 2", nil, "b,c", false, true},
		{"OFFSET past the end", all, "SELECT * FROM c ORDER BY c.n OFFSET 10 LIMIT 2", nil, "", false, true},
		{"VALUE COUNT(1)", all, "SELECT VALUE COUNT(1) FROM c", nil, `5`, true, true},
		{"VALUE COUNT(1) in a partition", p, "SELECT VALUE COUNT(1) FROM c", nil, `3`, true, true},
		{"VALUE COUNT(1) WHERE", all, "SELECT VALUE COUNT(1) FROM c WHERE c.n > 2", nil, `3`, true, true},
		{"COUNT(1) AS", all, "SELECT COUNT(1) AS n FROM c", nil, `{"n":5}`, true, true},
		{"COUNT(1) unnamed", all, "SELECT COUNT(1) FROM c", nil, `{"$1":5}`, true, true},
		{"COUNT of nothing", all, "SELECT VALUE COUNT(1) FROM c WHERE c.n > 99", nil, `0`, true, true},
		{"case-insensitive keywords", all, "select value c.id from c where c.n = 2", nil, `"b"`, true, true},
		{"system properties", all, "SELECT VALUE c._ts FROM c WHERE c.id = 'a'", nil, jsonString(start.Unix()), true, true},
		{"bracket property", all, `SELECT VALUE c["s"] FROM c WHERE c["id"] = 'b'`, nil, `"banana"`, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items := mustQuery(t, c, tc.pk, tc.q, tc.params...)
			var got string
			if tc.raw {
				got = joined(items)
			} else {
				ids := ids(t, items)
				if !tc.ordered {
					sort.Strings(ids)
				}
				got = strings.Join(ids, ",")
			}
			if got != tc.want {
				t.Errorf("%s\n got %s\nwant %s", tc.q, got, tc.want)
			}
		})
	}
}

func TestQueryPaging(t *testing.T) {
	_, c := queryEnv(t)
	for i := 0; i < 20; i++ {
		create(t, c, azcosmos.NewPartitionKeyString("r"), doc{"id": "r" + string(rune('a'+i)), "pk": "r", "n": 10 + i})
	}
	cases := []struct {
		name    string
		pk      azcosmos.PartitionKey
		q       string
		size    int32
		n       int
		ordered bool
	}{
		{"cross-partition pages of 2", azcosmos.NewPartitionKey(), "SELECT * FROM c", 2, 25, false},
		{"cross-partition pages of 7", azcosmos.NewPartitionKey(), "SELECT * FROM c", 7, 25, false},
		{"one partition pages of 3", azcosmos.NewPartitionKeyString("r"), "SELECT * FROM c", 3, 20, false},
		{"ORDER BY pages of 4", azcosmos.NewPartitionKey(), "SELECT * FROM c ORDER BY c.n DESC", 4, 25, true},
		{"WHERE pages of 1", azcosmos.NewPartitionKey(), "SELECT * FROM c WHERE c.n >= 10", 1, 20, false},
		{"page size larger than the result", azcosmos.NewPartitionKey(), "SELECT * FROM c", 100, 25, false},
		{"OFFSET LIMIT pages of 2", azcosmos.NewPartitionKey(), "SELECT * FROM c ORDER BY c.n OFFSET 3 LIMIT 5", 2, 5, true},
		{"TOP pages of 2", azcosmos.NewPartitionKey(), "SELECT TOP 5 * FROM c ORDER BY c.n", 2, 5, true},
		{"TOP without ORDER BY pages of 3", azcosmos.NewPartitionKey(), "SELECT TOP 7 * FROM c", 3, 7, false},
		{"ORDER BY a nested path pages of 3", azcosmos.NewPartitionKey(), "SELECT * FROM c WHERE IS_DEFINED(c.n) ORDER BY c.n DESC", 3, 25, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items, pages, err := query(t, c, tc.pk, tc.q, tc.size)
			if err != nil {
				t.Fatal(err)
			}
			got := ids(t, items)
			seen := map[string]int{}
			for _, id := range got {
				seen[id]++
				if seen[id] > 1 {
					t.Errorf("%s returned twice", id)
				}
			}
			if len(got) != tc.n {
				t.Errorf("%d items, want %d: %v", len(got), tc.n, got)
			}
			if min := (tc.n + int(tc.size) - 1) / int(tc.size); pages < min {
				t.Errorf("%d pages for %d items of page size %d: pages are larger than x-ms-max-item-count", pages, tc.n, tc.size)
			}
			if tc.ordered {
				var ns []float64
				for _, it := range items {
					ns = append(ns, parse(t, it)["n"].(float64))
				}
				sorted := sort.SliceIsSorted(ns, func(i, j int) bool { return ns[i] < ns[j] }) || sort.SliceIsSorted(ns, func(i, j int) bool { return ns[i] > ns[j] })
				if !sorted {
					t.Errorf("order lost across pages: %v", ns)
				}
			}
		})
	}
	t.Run("TOP and LIMIT count across pages", func(t *testing.T) {
		for _, q := range []string{"SELECT TOP 3 * FROM c ORDER BY c.n", "SELECT * FROM c ORDER BY c.n OFFSET 2 LIMIT 3", "SELECT TOP 3 * FROM c"} {
			pager := c.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 2})
			n := 0
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				n += len(page.Items)
			}
			if n != 3 {
				t.Errorf("%s: %d items in all pages, want 3", q, n)
			}
		}
	})
	t.Run("aggregate with page size 1", func(t *testing.T) {
		items, _, err := query(t, c, azcosmos.NewPartitionKey(), "SELECT VALUE COUNT(1) FROM c", 1)
		if err != nil || joined(items) != "25" {
			t.Errorf("%v %s, want 25", err, joined(items))
		}
		items, _, err = query(t, c, azcosmos.NewPartitionKey(), "SELECT VALUE MAX(c.n) FROM c", 1)
		if err != nil || joined(items) != "29" {
			t.Errorf("%v %s, want 29", err, joined(items))
		}
	})
	t.Run("resume with ContinuationToken", func(t *testing.T) {
		pager := c.NewQueryItemsPager("SELECT * FROM c ORDER BY c.n", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 10})
		page, err := pager.NextPage(ctx)
		if err != nil || page.ContinuationToken == nil {
			t.Fatalf("first page: %v, continuation %v", err, page.ContinuationToken)
		}
		first := ids(t, page.Items)
		pager2 := c.NewQueryItemsPager("SELECT * FROM c ORDER BY c.n", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 10, ContinuationToken: page.ContinuationToken})
		rest := []string{}
		for pager2.More() {
			pg, err := pager2.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rest = append(rest, ids(t, pg.Items)...)
		}
		if len(first) != 10 || len(rest) != 15 || first[9] == rest[0] {
			t.Errorf("first %v, rest %v", first, rest)
		}
	})
	t.Run("R9 an item expiring between pages is not served", func(t *testing.T) {
		e2 := newEnv(t, cosmoshttp.Options{})
		tc := e2.container("t", nil)
		for i := 0; i < 6; i++ {
			d := doc{"id": string(rune('a' + i)), "pk": "p", "n": i}
			create(t, tc, pkP, d)
		}
		r, _ := tc.Read(ctx, nil)
		props := *r.ContainerProperties
		props.DefaultTimeToLive = ttlp(-1)
		if _, err := tc.Replace(ctx, props, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.UpsertItem(ctx, pkP, []byte(`{"id":"f","pk":"p","n":5,"ttl":5}`), nil); err != nil {
			t.Fatal(err)
		}
		pager := tc.NewQueryItemsPager("SELECT * FROM c ORDER BY c.n", pkP, &azcosmos.QueryOptions{PageSizeHint: 3})
		var got []string
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(t, page.Items)...)
		e2.at(5)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ids(t, page.Items)...)
		}
		if strings.Join(got, ",") != "a,b,c,d,e" {
			t.Errorf("got %v, want a..e without the expired f", got)
		}
	})
}

func TestQueryUnsupported(t *testing.T) {
	_, c := queryEnv(t)
	all := azcosmos.NewPartitionKey()
	refused := []struct {
		name, q, word string
	}{
		{"JOIN", "SELECT t FROM c JOIN t IN c.tags", "JOIN"},
		{"GROUP BY", "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk", "GROUP BY"},
		{"syntax error", "SELEKT * FROM c", ""},
		{"unterminated string", "SELECT * FROM c WHERE c.s = 'abc", ""},
		{"missing parameter", "SELECT * FROM c WHERE c.n = @nope", "@nope"},
	}
	for _, tc := range refused {
		t.Run(tc.name+" 400", func(t *testing.T) {
			_, _, err := query(t, c, all, tc.q, 0)
			if status(err) != http.StatusBadRequest {
				t.Fatalf("status %d, want 400 (err %v)", status(err), err)
			}
			code, msg := errorBody(t, err)
			if code != "BadRequest" {
				t.Errorf("code %q, want BadRequest", code)
			}
			if !strings.Contains(strings.ToUpper(msg), strings.ToUpper(tc.word)) {
				t.Errorf("message %q does not name %s", msg, tc.word)
			}
		})
	}
	// Outside the documented subset: each is either answered right or
	// refused with 400, never answered wrong.
	rightOr400 := []struct {
		name, q, want string
	}{
		{"DISTINCT", "SELECT DISTINCT VALUE c.pk FROM c ORDER BY c.pk", `"p","q"`},
		{"CONTAINS", "SELECT VALUE c.id FROM c WHERE CONTAINS(c.s, 'err') ORDER BY c.id", `"c"`},
		{"SUM", "SELECT VALUE SUM(c.n) FROM c", `15`},
		{"MAX", "SELECT VALUE MAX(c.n) FROM c", `5`},
		{"LOWER", "SELECT VALUE LOWER('AB') FROM c WHERE c.id = 'a'", `"ab"`},
		{"ORDER BY two paths", "SELECT VALUE c.id FROM c ORDER BY c.pk DESC, c.n DESC", `"e","d","c","b","a"`},
		{"EXISTS subquery", "SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'y') ORDER BY c.id", `"a","b"`},
		{"arithmetic", "SELECT VALUE c.n * 2 + 1 FROM c WHERE c.id = 'b'", `5`},
		{"IS_NULL", "SELECT VALUE c.id FROM c WHERE IS_NULL(c.opt)", `"e"`},
		{"ARRAY_LENGTH", "SELECT VALUE c.id FROM c WHERE ARRAY_LENGTH(c.tags) = 2", `"a"`},
		{"BETWEEN", "SELECT VALUE c.id FROM c WHERE c.n BETWEEN 2 AND 3 ORDER BY c.id", `"b","c"`},
	}
	for _, tc := range rightOr400 {
		t.Run("right or 400/"+tc.name, func(t *testing.T) {
			items, _, err := query(t, c, all, tc.q, 0)
			if err != nil {
				if status(err) != http.StatusBadRequest {
					t.Errorf("status %d, want 200 or 400 (err %v)", status(err), err)
				}
				return
			}
			if got := joined(items); got != tc.want {
				t.Errorf("%s\n got %s\nwant %s (or a 400)", tc.q, got, tc.want)
			}
		})
	}
}

// TestQueryPagingUnderChange: an item that exists and is unchanged for the
// whole of a paged query is returned exactly once, whatever happens to
// other items between pages (Cosmos DB's continuation resumes after the
// last item returned, not at a position).
func TestQueryPagingUnderChange(t *testing.T) {
	cases := []struct {
		name   string
		q      string
		change func(t *testing.T, e *env, c *azcosmos.ContainerClient)
		maybe  string // the item the change touched: may appear or not
	}{
		{"delete before the cursor", "SELECT * FROM c", func(t *testing.T, e *env, c *azcosmos.ContainerClient) {
			if _, err := c.DeleteItem(ctx, pkP, "a", nil); err != nil {
				t.Fatal(err)
			}
		}, "a"},
		{"expiry before the cursor", "SELECT * FROM c", func(t *testing.T, e *env, c *azcosmos.ContainerClient) {
			e.at(5) // a has ttl 5
		}, "a"},
		{"insert before the cursor", "SELECT * FROM c", func(t *testing.T, e *env, c *azcosmos.ContainerClient) {
			create(t, c, pkP, doc{"id": "a0", "pk": "p", "n": 0})
		}, "a0"},
		{"ORDER BY: delete before the cursor", "SELECT * FROM c ORDER BY c.n DESC", func(t *testing.T, e *env, c *azcosmos.ContainerClient) {
			if _, err := c.DeleteItem(ctx, pkP, "f", nil); err != nil {
				t.Fatal(err)
			}
		}, "f"},
		{"ORDER BY: insert before the cursor", "SELECT * FROM c ORDER BY c.n DESC", func(t *testing.T, e *env, c *azcosmos.ContainerClient) {
			create(t, c, pkP, doc{"id": "z", "pk": "p", "n": 99})
		}, "z"},
	}
	for _, tc := range cases {
		for _, pk := range []struct {
			name string
			pk   azcosmos.PartitionKey
		}{{"in a partition", pkP}, {"cross-partition", azcosmos.NewPartitionKey()}} {
			t.Run(tc.name+"/"+pk.name, func(t *testing.T) {
				e := newEnv(t, cosmoshttp.Options{})
				c := e.container("c", ttlp(-1))
				for i, id := range []string{"a", "b", "c", "d", "e", "f"} {
					d := doc{"id": id, "pk": "p", "n": i + 1}
					if id == "a" {
						d["ttl"] = 5
					}
					create(t, c, pkP, d)
				}
				pager := c.NewQueryItemsPager(tc.q, pk.pk, &azcosmos.QueryOptions{PageSizeHint: 2})
				page, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got := ids(t, page.Items)
				tc.change(t, e, c)
				for pager.More() {
					page, err := pager.NextPage(ctx)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, ids(t, page.Items)...)
				}
				seen := map[string]int{}
				for _, id := range got {
					seen[id]++
				}
				for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
					if id == tc.maybe || (id == "a" && strings.Contains(tc.name, "expiry")) {
						continue
					}
					if seen[id] != 1 {
						t.Errorf("%s returned %d times (all: %v)", id, seen[id], got)
					}
				}
				if seen[tc.maybe] > 1 {
					t.Errorf("%s returned %d times", tc.maybe, seen[tc.maybe])
				}
			})
		}
	}
}

// TestQueryMixedTypes: Cosmos DB orders mixed types undefined < null <
// false < true < numbers < strings, and a comparison between different
// types is undefined (never true).
func TestQueryMixedTypes(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	for _, d := range []string{
		`{"id":"u","pk":"p"}`, `{"id":"n","pk":"p","v":null}`, `{"id":"f","pk":"p","v":false}`,
		`{"id":"t","pk":"p","v":true}`, `{"id":"1","pk":"p","v":1}`, `{"id":"2","pk":"p","v":2.5}`,
		`{"id":"s","pk":"p","v":"a"}`, `{"id":"s2","pk":"p","v":"b"}`,
	} {
		if _, err := c.CreateItem(ctx, pkP, []byte(d), nil); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ name, q, want string }{
		{"ORDER BY ASC", "SELECT VALUE c.id FROM c ORDER BY c.v", `"u","n","f","t","1","2","s","s2"`},
		{"ORDER BY DESC", "SELECT VALUE c.id FROM c ORDER BY c.v DESC", `"s2","s","2","1","t","f","n","u"`},
		{"number comparison skips other types", "SELECT VALUE c.id FROM c WHERE c.v > 0 ORDER BY c.id", `"1","2"`},
		{"string comparison skips other types", "SELECT VALUE c.id FROM c WHERE c.v >= 'a' ORDER BY c.id", `"s","s2"`},
		{"= null matches null only", "SELECT VALUE c.id FROM c WHERE c.v = null", `"n"`},
		{"bool", "SELECT VALUE c.id FROM c WHERE c.v = true", `"t"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items, _, err := query(t, c, pkP, tc.q, 0)
			if err != nil {
				if status(err) != http.StatusBadRequest {
					t.Errorf("status %d, want 200 or 400: %v", status(err), err)
				}
				return
			}
			if got := joined(items); got != tc.want {
				t.Errorf("%s\n got %s\nwant %s (or a 400)", tc.q, got, tc.want)
			}
		})
	}
}

// TestQueryPagingKeys: pages resume after the last result, with ties in the
// ORDER BY value, mixed types, the same id in several partitions, VALUE
// projections that hide the id, and the last returned item itself changed
// or gone before the next page.
func TestQueryPagingKeys(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", ttlp(-1))
	var want []string
	vals := []string{`null`, `false`, `true`, `1`, `1`, `1`, `2.5`, `"a"`, `"a"`, `"b"`, ``}
	for i, v := range vals {
		for _, p := range []string{"p", "q"} {
			id := fmt.Sprintf("i%02d", i)
			body := fmt.Sprintf(`{"id":"%s","pk":"%s","v":%s}`, id, p, v)
			if v == "" {
				body = fmt.Sprintf(`{"id":"%s","pk":"%s"}`, id, p)
			}
			if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(p), []byte(body), nil); err != nil {
				t.Fatal(err)
			}
			want = append(want, p+"/"+id)
		}
	}
	sort.Strings(want)
	key := func(it []byte) string {
		d := parse(t, it)
		return fmt.Sprint(d["pk"]) + "/" + fmt.Sprint(d["id"])
	}
	for _, q := range []string{
		"SELECT * FROM c ORDER BY c.v", "SELECT * FROM c ORDER BY c.v DESC", "SELECT * FROM c",
		"SELECT * FROM c WHERE c.v = 1 ORDER BY c.v",
	} {
		for _, size := range []int32{1, 2, 3, 7} {
			t.Run(fmt.Sprintf("%s/page %d", q, size), func(t *testing.T) {
				items, _, err := query(t, c, azcosmos.NewPartitionKey(), q, size)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, it := range items {
					got = append(got, key(it))
				}
				all, _, _ := query(t, c, azcosmos.NewPartitionKey(), q, 0)
				var unpaged []string
				for _, it := range all {
					unpaged = append(unpaged, key(it))
				}
				if strings.Join(got, " ") != strings.Join(unpaged, " ") {
					t.Errorf("paged\n%v\nunpaged\n%v", got, unpaged)
				}
				if !strings.Contains(q, "WHERE") {
					sorted := append([]string(nil), got...)
					sort.Strings(sorted)
					if strings.Join(sorted, " ") != strings.Join(want, " ") {
						t.Errorf("items %v, want each of %v once", sorted, want)
					}
				}
			})
		}
	}
	t.Run("VALUE projection pages", func(t *testing.T) {
		items, _, err := query(t, c, azcosmos.NewPartitionKey(), "SELECT VALUE c.v FROM c ORDER BY c.v", 2)
		if err != nil {
			t.Fatal(err)
		}
		all := mustQuery(t, c, azcosmos.NewPartitionKey(), "SELECT VALUE c.v FROM c ORDER BY c.v")
		if joined(items) != joined(all) {
			t.Errorf("paged %s\nunpaged %s", joined(items), joined(all))
		}
	})
	t.Run("the last returned item changes before the next page", func(t *testing.T) {
		for _, change := range []string{"delete", "reorder"} {
			pager := c.NewQueryItemsPager("SELECT * FROM c WHERE c.pk = 'p' ORDER BY c.v", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 4})
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := ids(t, page.Items)
			last := got[len(got)-1]
			switch change {
			case "delete":
				if _, err := c.DeleteItem(ctx, pkP, last, nil); err != nil {
					t.Fatal(err)
				}
			case "reorder":
				if _, err := c.ReplaceItem(ctx, pkP, last, []byte(`{"id":"`+last+`","pk":"p","v":"zzz"}`), nil); err != nil {
					t.Fatal(err)
				}
			}
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ids(t, page.Items)...)
			}
			seen := map[string]int{}
			for _, id := range got {
				seen[id]++
			}
			for id, n := range seen {
				if n > 1 && id != last {
					t.Errorf("%s: %s returned %d times (%v)", change, id, n, got)
				}
			}
			live := liveIDsIn(t, c, "p")
			for _, id := range live {
				if id != last && seen[id] == 0 {
					t.Errorf("%s: %s never returned (%v)", change, id, got)
				}
			}
		}
	})
}

// liveIDsIn returns the ids of partition p.
func liveIDsIn(t *testing.T, c *azcosmos.ContainerClient, p string) []string {
	t.Helper()
	var out []string
	for _, it := range mustQuery(t, c, azcosmos.NewPartitionKeyString(p), "SELECT VALUE c.id FROM c") {
		var s string
		json.Unmarshal(it, &s)
		out = append(out, s)
	}
	return out
}
