package cosmosql_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

// corpus is the document set most tests query. Expected results below were
// worked out by hand from it, not copied from the code's output.
var corpus = []string{
	`{"id":"a","n":1,"s":"apple","b":true,"tags":["x","y"],"o":{"k":1},"z":null}`,
	`{"id":"b","n":2,"s":"Banana","b":false,"tags":[],"o":{"k":2,"m":[1,2]}}`,
	`{"id":"c","n":"3","s":"cherry"}`,
	`{"id":"d","n":10.5,"arr":[{"k":1,"v":2}],"p q":5}`,
	`{"id":"e"}`,
}

func docsOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// param builds a Param from a name and JSON text.
func param(name, value string) cosmosql.Param {
	return cosmosql.Param{Name: name, Value: json.RawMessage(value)}
}

// run parses and executes query over docs and returns the rows as strings.
func run(t *testing.T, query string, params []cosmosql.Param, docs []string) []string {
	t.Helper()
	q, err := cosmosql.Parse(query, params)
	if err != nil {
		t.Fatalf("Parse(%q): %v", query, err)
	}
	res, err := q.Execute(slices.Values(docsOf(docs)))
	if err != nil {
		t.Fatalf("Execute(%q): %v", query, err)
	}
	if res == nil {
		t.Fatalf("Execute(%q) returned a nil slice", query)
	}
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = string(r)
	}
	return out
}

// ids runs "SELECT VALUE c.id FROM c WHERE <cond>" over the corpus and joins the ids.
func ids(t *testing.T, cond string, params ...cosmosql.Param) string {
	t.Helper()
	rows := run(t, "SELECT VALUE c.id FROM c WHERE "+cond, params, corpus)
	for i, r := range rows {
		rows[i] = strings.Trim(r, `"`)
	}
	return strings.Join(rows, ",")
}

// value evaluates expr against doc with SELECT VALUE; "undefined" when no row comes back.
func value(t *testing.T, expr, doc string) string {
	t.Helper()
	rows := run(t, "SELECT VALUE "+expr+" FROM c", nil, []string{doc})
	switch len(rows) {
	case 0:
		return "undefined"
	case 1:
		return rows[0]
	}
	t.Fatalf("SELECT VALUE %s: %d rows", expr, len(rows))
	return ""
}
