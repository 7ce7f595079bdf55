package cosmosql_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

func BenchmarkExecute(b *testing.B) {
	docs := make([][]byte, 1000)
	for i := range docs {
		docs[i] = fmt.Appendf(nil, `{"id":"d%d","n":%d,"kind":"k%d","tags":["a","b"],"o":{"x":%d}}`, i, i, i%7, i%13)
	}
	for _, query := range []string{
		`SELECT * FROM c WHERE c.kind = "k3"`,
		`SELECT c.id, c.o.x FROM c WHERE c.n > 100 ORDER BY c.o.x DESC`,
		`SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(c.tags, "b")`,
		`SELECT TOP 10 * FROM c`,
	} {
		q, err := cosmosql.Parse(query, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(query, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := q.Execute(slices.Values(docs)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, err := cosmosql.Parse(`SELECT TOP 5 c.id, c.a.b AS x FROM c WHERE c.k IN (1, 2, 3) AND STARTSWITH(c.s, "ab") ORDER BY c.ts DESC`, nil); err != nil {
			b.Fatal(err)
		}
	}
}
