package cosmosql_test

import (
	"slices"
	"testing"

	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

// FuzzParse checks that Parse and ParseCondition never panic, and that a
// query that parses also executes over a small corpus without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`SELECT * FROM c`, `SELECT VALUE c.a FROM c WHERE c.b IN (1, "x", null) ORDER BY c.d DESC`,
		`SELECT TOP @n c.a, c["b c"] AS d, c.arr[0] FROM root r`, `select value count(1) from c where not is_defined(c.x)`,
		`SELECT * FROM c WHERE STARTSWITH(c.s, 'a\u00e9', true) AND c.n BETWEEN -1 AND 2.5e3 OFFSET 1 LIMIT 2`,
		`FROM c WHERE c.a || "x" = {"k": [1, 2]}`, `SELECT VALUE MAX(c.n) FROM c`, `SELECT * FROM c JOIN t IN c.x`,
		`SELECT VALUE c.s LIKE "a[^b-d]%_" ESCAPE '!' FROM c`,
	} {
		f.Add(s)
	}
	docs := docsOf(corpus)
	params := []cosmosql.Param{param("@n", "2"), param("@s", `"a"`)}
	f.Fuzz(func(t *testing.T, text string) {
		if q, err := cosmosql.Parse(text, params); err == nil {
			if _, err := q.Execute(slices.Values(docs)); err != nil {
				t.Errorf("Execute(%q): %v", text, err)
			}
			for _, d := range docs {
				q.Match(d)
			}
		}
		if q, err := cosmosql.ParseCondition(text); err == nil {
			q.Match(docs[0])
		}
	})
}
