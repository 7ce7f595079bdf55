package cosmosql_test

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

// keyed yields the documents of ds keyed by their index, zero-padded so
// that the keys sort as the indexes.
func keyed(ds []string) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for i, d := range ds {
			if !yield(fmt.Sprintf("%04d", i), []byte(d)) {
				return
			}
		}
	}
}

// allPages pages q over ds with pages of size max and returns every result.
func allPages(t *testing.T, q *cosmosql.Query, ds []string, max int) []string {
	t.Helper()
	var out []string
	after := ""
	for range 1000 {
		res, next, err := q.Page(keyed(ds), after, max)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) > max {
			t.Fatalf("a page of %d results, max %d", len(res), max)
		}
		for _, r := range res {
			out = append(out, string(r))
		}
		if next == "" {
			return out
		}
		after = next
	}
	t.Fatal("paging does not end")
	return nil
}

// TestPageIsExecute: the pages of a query, of any size, are its results.
func TestPageIsExecute(t *testing.T) {
	var ds []string
	for i := range 23 {
		ds = append(ds, fmt.Sprintf(`{"id":"d%02d","n":%d,"g":%d}`, i, (i*7)%11, i%3))
	}
	ds = append(ds, `{"id":"nog"}`)
	queries := []string{
		"SELECT * FROM c",
		"SELECT c.id FROM c WHERE c.g = 1",
		"SELECT VALUE c.n FROM c",
		"SELECT * FROM c ORDER BY c.n",
		"SELECT c.id, c.n FROM c ORDER BY c.n DESC",
		"SELECT * FROM c ORDER BY c.g",
		"SELECT TOP 7 * FROM c ORDER BY c.n",
		"SELECT TOP 5 c.id FROM c",
		"SELECT * FROM c OFFSET 3 LIMIT 9",
		"SELECT * FROM c ORDER BY c.n OFFSET 4 LIMIT 10",
		"SELECT VALUE COUNT(1) FROM c",
		"SELECT * FROM c WHERE c.n > 100",
	}
	for _, text := range queries {
		q, err := cosmosql.Parse(text, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := run(t, text, nil, ds)
		for _, max := range []int{1, 2, 3, 5, 100} {
			t.Run(fmt.Sprintf("%s/max=%d", text, max), func(t *testing.T) {
				if got := allPages(t, q, ds, max); !slices.Equal(got, want) {
					t.Fatalf("pages:\n%v\nExecute:\n%v", got, want)
				}
			})
		}
	}
}

// TestPageUnderChange: a document that is in the results and does not
// change is returned exactly once, whatever is deleted, inserted or changed
// between pages.
func TestPageUnderChange(t *testing.T) {
	base := func() []string {
		var ds []string
		for i := range 10 {
			ds = append(ds, fmt.Sprintf(`{"id":"d%d","n":%d}`, i, i))
		}
		return ds
	}
	tests := []struct {
		name, query string
		change      func(ds []string, seen []string) []string
	}{
		{"delete a returned one", "SELECT VALUE c.id FROM c", func(ds, _ []string) []string { return ds[1:] }},
		{"insert before the position", "SELECT VALUE c.id FROM c", func(ds, _ []string) []string {
			return append([]string{`{"id":"new","n":-1}`}, ds...)
		}},
		{"delete, ordered desc", "SELECT VALUE c.id FROM c ORDER BY c.n DESC", func(ds, _ []string) []string { return ds[:len(ds)-1] }},
		{"insert a smaller one, ordered", "SELECT VALUE c.id FROM c ORDER BY c.n", func(ds, _ []string) []string {
			return append(ds, `{"id":"new","n":-5}`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := cosmosql.Parse(tt.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			ds := base()
			res, next, err := q.Page(keyedByID(ds), "", 3)
			if err != nil || next == "" {
				t.Fatal(err, next)
			}
			var seen []string
			for _, r := range res {
				seen = append(seen, string(r))
			}
			ds = tt.change(ds, seen)
			for next != "" {
				res, next, err = q.Page(keyedByID(sortByID(ds)), next, 3)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					seen = append(seen, string(r))
				}
			}
			for i := range 10 {
				id := fmt.Sprintf(`"d%d"`, i)
				n := 0
				for _, s := range seen {
					if s == id {
						n++
					}
				}
				changed := strings.Contains(tt.name, "delete") && (i == 0 && tt.name == "delete a returned one" || i == 9 && strings.Contains(tt.name, "desc"))
				if n != 1 && !(changed && n == 0) {
					t.Fatalf("%s returned %d times: %v", id, n, seen)
				}
			}
		})
	}
}

// keyedByID yields documents keyed by their id.
func keyedByID(ds []string) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, d := range ds {
			_, rest, _ := strings.Cut(d, `"id":"`)
			id, _, _ := strings.Cut(rest, `"`)
			if !yield(id, []byte(d)) {
				return
			}
		}
	}
}

func sortByID(ds []string) []string {
	out := slices.Clone(ds)
	slices.SortFunc(out, func(a, b string) int {
		ka, kb := "", ""
		for k := range keyedByID([]string{a}) {
			ka = k
		}
		for k := range keyedByID([]string{b}) {
			kb = k
		}
		return strings.Compare(ka, kb)
	})
	return out
}

func TestPageBadPosition(t *testing.T) {
	q, _ := cosmosql.Parse("SELECT * FROM c ORDER BY c.n", nil)
	for _, pos := range []string{"zzz", `{"k":"a"}`, "[]"} {
		if _, _, err := q.Page(keyed([]string{`{"n":1}`}), pos, 5); !errors.Is(err, cosmosql.ErrPosition) {
			t.Fatalf("position %q: %v", pos, err)
		}
	}
}
