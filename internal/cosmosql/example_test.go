package cosmosql_test

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

func Example() {
	docs := [][]byte{
		[]byte(`{"id":"a","kind":"session","ttl":60}`),
		[]byte(`{"id":"b","kind":"cart"}`),
		[]byte(`{"id":"c","kind":"session","ttl":5}`),
	}
	q, err := cosmosql.Parse(
		`SELECT c.id, c.ttl AS seconds FROM c WHERE c.kind = @kind ORDER BY c.ttl`,
		[]cosmosql.Param{{Name: "@kind", Value: json.RawMessage(`"session"`)}},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, err := q.Execute(slices.Values(docs))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Println(string(r))
	}
	_, err = cosmosql.Parse(`SELECT * FROM c JOIN t IN c.tags`, nil)
	fmt.Println(err)
	// Output:
	// {"id":"c","seconds":5}
	// {"id":"a","seconds":60}
	// unsupported: JOIN (at offset 16)
}

func ExampleParseCondition() {
	cond, err := cosmosql.ParseCondition(`from root r where r.version = 3 AND NOT IS_DEFINED(r.locked)`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cond.Match([]byte(`{"version":3}`)))
	fmt.Println(cond.Match([]byte(`{"version":3,"locked":true}`)))
	fmt.Println(cond.Match([]byte(`{"version":"3"}`)))
	// Output:
	// true
	// false
	// false
}
