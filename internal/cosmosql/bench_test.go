package cosmosql_test

import (
	"fmt"
	"slices"
	"strings"
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

// handlerDocs mirrors what the HTTP handler queries: 100 documents with an
// id, a cat int, a ttl and one long pad string of 60 to 1960 bytes.
func handlerDocs() [][]byte {
	docs := make([][]byte, 100)
	for i := range docs {
		pad := strings.Repeat("x", 60+(i*397)%1901)
		docs[i] = fmt.Appendf(nil, `{"id":"doc-%03d","cat":%d,"ttl":%d,"pad":%q}`, i, i%5, 60+i, pad)
	}
	return docs
}

func BenchmarkHandler(b *testing.B) {
	docs := handlerDocs()
	params := []cosmosql.Param{{Name: "@cat", Value: []byte("3")}}
	for _, query := range []string{
		`SELECT * FROM c WHERE c.cat = @cat`,
		`SELECT * FROM c WHERE c.cat = @cat ORDER BY c.id DESC`,
		`SELECT c.id, c.ttl FROM c WHERE c.cat = @cat`,
	} {
		q, err := cosmosql.Parse(query, params)
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

func BenchmarkMatch(b *testing.B) {
	docs := handlerDocs()
	q, err := cosmosql.ParseCondition(`FROM c WHERE c.cat = 3`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		for _, d := range docs {
			q.Match(d)
		}
	}
}
