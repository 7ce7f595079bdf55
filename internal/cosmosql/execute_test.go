package cosmosql_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

func TestProjection(t *testing.T) {
	docs := []string{
		`{"id":"a", "n":1, "o":{"x":"<&>"}, "p q":true, "arr":[10,20]}`,
		`{"id":"b"}`,
	}
	tests := []struct {
		name, query string
		want        []string
	}{
		{"star keeps bytes", `SELECT * FROM c`, []string{`{"id":"a", "n":1, "o":{"x":"<&>"}, "p q":true, "arr":[10,20]}`, `{"id":"b"}`}},
		{"paths named by last member", `SELECT c.id, c.o.x FROM c`, []string{`{"id":"a","x":"<&>"}`, `{"id":"b"}`}},
		{"as alias", `SELECT c.o.x AS y, c.id AS ident FROM c`, []string{`{"y":"<&>","ident":"a"}`, `{"ident":"b"}`}},
		{"alias without as", `SELECT c.id i FROM c`, []string{`{"i":"a"}`, `{"i":"b"}`}},
		{"bracket member name", `SELECT c["p q"] FROM c`, []string{`{"p q":true}`, `{}`}},
		{"unnamed expressions numbered", `SELECT c.n + 1, c.id, c.arr[1], 'k' FROM c`, []string{`{"$1":2,"id":"a","$2":20,"$3":"k"}`, `{"id":"b","$3":"k"}`}},
		{"whole alias", `SELECT c FROM c WHERE c.id = 'b'`, []string{`{"c":{"id":"b"}}`}},
		{"value path", `SELECT VALUE c.o FROM c`, []string{`{"x":"<&>"}`}},
		{"value alias keeps bytes", `SELECT VALUE r FROM root r WHERE r.id = "a"`, []string{`{"id":"a", "n":1, "o":{"x":"<&>"}, "p q":true, "arr":[10,20]}`}},
		{"value object literal", `SELECT VALUE {"k": c.id, "m": c.n} FROM c`, []string{`{"k":"a","m":1}`, `{"k":"b"}`}},
		{"value array literal", `SELECT VALUE [c.id, c.n] FROM c`, []string{`["a",1]`, `["b"]`}},
		{"value of undefined yields no row", `SELECT VALUE c.n FROM c`, []string{`1`}},
		{"big integer kept exact", `SELECT VALUE 12345678901234567 FROM c WHERE c.id = 'b'`, []string{`12345678901234568`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.query, nil, docs)
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s\n got %q\nwant %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestDocumentNumbersKeepTheirText(t *testing.T) {
	got := run(t, `SELECT c.big, c.f FROM c`, nil, []string{`{"big":12345678901234567890,"f":1.50}`})
	want := []string{`{"big":12345678901234567890,"f":1.50}`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestOrderByTypeRank checks the documented order: undefined < null <
// false < true < numbers < strings < arrays < objects, stable within equal
// keys (the two arrays and the two objects keep their input order).
func TestOrderByTypeRank(t *testing.T) {
	docs := []string{
		`{"id":"obj1","k":{"a":1}}`, `{"id":"s2","k":"b"}`, `{"id":"arr1","k":[2]}`, `{"id":"n10","k":10}`,
		`{"id":"t","k":true}`, `{"id":"null","k":null}`, `{"id":"undef"}`, `{"id":"f","k":false}`,
		`{"id":"s1","k":"B"}`, `{"id":"n2","k":2}`, `{"id":"arr2","k":[1]}`, `{"id":"obj2","k":{}}`, `{"id":"nneg","k":-1.5}`,
	}
	asc := `"undef","null","f","t","nneg","n2","n10","s1","s2","arr1","arr2","obj1","obj2"`
	desc := `"obj1","obj2","arr1","arr2","s2","s1","n10","n2","nneg","t","f","null","undef"`
	tests := []struct{ name, query, want string }{
		{"asc default", `SELECT VALUE c.id FROM c ORDER BY c.k`, asc},
		{"asc explicit", `SELECT VALUE c.id FROM c ORDER BY c.k ASC`, asc},
		{"desc", `SELECT VALUE c.id FROM c ORDER BY c.k desc`, desc},
		{"bracket path", `SELECT VALUE c.id FROM c ORDER BY c["k"]`, asc},
		{"with where and offset", `SELECT VALUE c.id FROM c WHERE IS_NUMBER(c.k) ORDER BY c.k DESC OFFSET 1 LIMIT 5`, `"n2","nneg"`},
		{"with top", `SELECT TOP 2 VALUE c.id FROM c ORDER BY c.k DESC`, `"obj1","obj2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(run(t, tt.query, nil, docs), ","); got != tt.want {
				t.Errorf("%s\n got %s\nwant %s", tt.query, got, tt.want)
			}
		})
	}
}

func TestWindow(t *testing.T) {
	docs := []string{`{"n":1}`, `{"n":2}`, `{"n":3}`, `{"n":4}`}
	p := func(name, v string) []cosmosql.Param { return []cosmosql.Param{param(name, v)} }
	tests := []struct {
		name, query string
		params      []cosmosql.Param
		want        string
	}{
		{"top", `SELECT TOP 2 VALUE c.n FROM c`, nil, "1,2"},
		{"top zero", `SELECT TOP 0 VALUE c.n FROM c`, nil, ""},
		{"top beyond", `SELECT TOP 10 VALUE c.n FROM c`, nil, "1,2,3,4"},
		{"top parameter", `SELECT TOP @n VALUE c.n FROM c`, p("@n", "3"), "1,2,3"},
		{"top counts after where", `SELECT TOP 1 VALUE c.n FROM c WHERE c.n > 2`, nil, "3"},
		{"offset limit", `SELECT VALUE c.n FROM c OFFSET 1 LIMIT 2`, nil, "2,3"},
		{"offset zero limit zero", `SELECT VALUE c.n FROM c OFFSET 0 LIMIT 0`, nil, ""},
		{"offset past end", `SELECT VALUE c.n FROM c OFFSET 9 LIMIT 2`, nil, ""},
		{"limit past end", `SELECT VALUE c.n FROM c OFFSET 3 LIMIT 9`, nil, "4"},
		{"offset limit parameters", `SELECT VALUE c.n FROM c OFFSET @o LIMIT @l`, []cosmosql.Param{param("@o", "2"), param("@l", "1")}, "3"},
		{"offset limit with order by", `SELECT VALUE c.n FROM c ORDER BY c.n DESC OFFSET 1 LIMIT 2`, nil, "3,2"},
		{"undefined value uses its place", `SELECT TOP 2 VALUE c.m FROM c`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(run(t, tt.query, tt.params, docs), ","); got != tt.want {
				t.Errorf("%s: got %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestAggregates(t *testing.T) {
	docs := []string{`{"n":1,"s":"b"}`, `{"n":2.5,"s":"a"}`, `{"n":"x"}`, `{"m":4}`, `{"n":null,"s":"c"}`}
	tests := []struct {
		name, query, want string
	}{
		{"count", `SELECT COUNT(1) FROM c`, `{"$1":5}`},
		{"count value", `SELECT VALUE COUNT(1) FROM c`, `5`},
		{"count any case", `select value count(1) from c`, `5`},
		{"count with where", `SELECT VALUE COUNT(1) FROM c WHERE IS_NUMBER(c.n)`, `2`},
		{"count of nothing", `SELECT VALUE COUNT(1) FROM c WHERE c.n = 99`, `0`},
		{"count defined values", `SELECT VALUE COUNT(c.n) FROM c`, `4`},
		{"count alias", `SELECT COUNT(c.s) AS k FROM c`, `{"k":3}`},
		{"two aggregates", `SELECT COUNT(1), MAX(c.s) AS hi FROM c`, `{"$1":5,"hi":"c"}`},
		{"sum", `SELECT VALUE SUM(c.n) FROM c WHERE IS_NUMBER(c.n)`, `3.5`},
		{"sum with non-number is undefined", `SELECT VALUE SUM(c.n) FROM c`, ``},
		{"sum of nothing", `SELECT VALUE SUM(c.n) FROM c WHERE false`, `0`},
		{"avg", `SELECT VALUE AVG(c.n) FROM c WHERE IS_NUMBER(c.n)`, `1.75`},
		{"avg of nothing", `SELECT VALUE AVG(c.n) FROM c WHERE false`, ``},
		{"avg of nothing in object", `SELECT AVG(c.n) FROM c WHERE false`, `{}`},
		{"min numbers", `SELECT VALUE MIN(c.n) FROM c WHERE IS_NUMBER(c.n)`, `1`},
		{"min mixed uses type order", `SELECT VALUE MIN(c.n) FROM c`, `null`},
		{"max mixed uses type order", `SELECT VALUE MAX(c.n) FROM c`, `"x"`},
		{"top zero", `SELECT TOP 0 VALUE COUNT(1) FROM c`, ``},
		{"offset one", `SELECT VALUE COUNT(1) FROM c OFFSET 1 LIMIT 1`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(run(t, tt.query, nil, docs), ","); got != tt.want {
				t.Errorf("%s: got %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestExecuteMalformedDocument(t *testing.T) {
	q, err := cosmosql.Parse(`SELECT * FROM c`, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.Execute(slices.Values([][]byte{[]byte(`{"a":1}`), []byte(`{"a":`)}))
	if err == nil || !strings.Contains(err.Error(), "document 1") {
		t.Errorf("err = %v, want one naming document 1", err)
	}
}

func TestExecuteEmpty(t *testing.T) {
	for _, query := range []string{`SELECT * FROM c`, `SELECT * FROM c ORDER BY c.a`, `SELECT TOP 0 * FROM c`} {
		if got := run(t, query, nil, nil); len(got) != 0 {
			t.Errorf("%s over no documents: %q", query, got)
		}
	}
}

// TestExecuteStopsEarly checks that without ORDER BY, TOP stops reading documents.
func TestExecuteStopsEarly(t *testing.T) {
	q, err := cosmosql.Parse(`SELECT TOP 1 * FROM c`, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	seq := func(yield func([]byte) bool) {
		for range 100 {
			read++
			if !yield([]byte(`{}`)) {
				return
			}
		}
	}
	if _, err := q.Execute(seq); err != nil || read != 1 {
		t.Errorf("read %d documents (err %v), want 1", read, err)
	}
}

func TestMatchAndCondition(t *testing.T) {
	tests := []struct {
		name, cond, doc string
		want            bool
	}{
		{"match", `FROM c WHERE c.v = 1`, `{"v":1}`, true},
		{"no match", `FROM c WHERE c.v = 1`, `{"v":2}`, false},
		{"undefined is not a match", `FROM c WHERE c.v = 1`, `{}`, false},
		{"not undefined is not a match", `FROM c WHERE NOT (c.v = 1)`, `{}`, false},
		{"root alias lower case", `from root r where r.v > 0`, `{"v":1}`, true},
		{"as alias", `FROM root AS r WHERE r.v > 0`, `{"v":1}`, true},
		{"no where matches all", `FROM c`, `{"v":1}`, true},
		{"malformed document", `FROM c WHERE true`, `{"v":`, false},
		{"trailing garbage", `FROM c WHERE true`, `{} {}`, false},
		{"function", `FROM c WHERE STARTSWITH(c.k, "ab")`, `{"k":"abc"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := cosmosql.ParseCondition(tt.cond)
			if err != nil {
				t.Fatal(err)
			}
			if got := q.Match([]byte(tt.doc)); got != tt.want {
				t.Errorf("Match(%s) with %s = %v, want %v", tt.doc, tt.cond, got, tt.want)
			}
		})
	}
}

func TestMatchOnParsedQuery(t *testing.T) {
	q, err := cosmosql.Parse(`SELECT VALUE COUNT(1) FROM c WHERE c.a = @a`, []cosmosql.Param{param("@a", "1")})
	if err != nil {
		t.Fatal(err)
	}
	if !q.Match([]byte(`{"a":1}`)) || q.Match([]byte(`{"a":"1"}`)) {
		t.Error("Match does not apply the WHERE clause with its parameter")
	}
	if q, _ := cosmosql.Parse(`SELECT * FROM c`, nil); !q.Match([]byte(`{}`)) {
		t.Error("a query without WHERE must match")
	}
}

func TestConditionRefusesSelectAndParameters(t *testing.T) {
	for _, tt := range []struct {
		cond string
		want error
	}{
		{`SELECT * FROM c WHERE true`, cosmosql.ErrSyntax},
		{`FROM c WHERE c.a = @a`, cosmosql.ErrParameter},
		{`WHERE c.a = 1`, cosmosql.ErrSyntax},
		{`FROM c JOIN t IN c.x WHERE true`, cosmosql.ErrUnsupported},
	} {
		if _, err := cosmosql.ParseCondition(tt.cond); !errors.Is(err, tt.want) {
			t.Errorf("ParseCondition(%s) = %v, want %v", tt.cond, err, tt.want)
		}
	}
}

// TestConcurrentUse runs one Query from many goroutines; run with -race.
func TestConcurrentUse(t *testing.T) {
	q, err := cosmosql.Parse(`SELECT c.id FROM c WHERE c.s LIKE "%a%" ORDER BY c.n`, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := docsOf(corpus)
	done := make(chan []string)
	for range 8 {
		go func() {
			var out []string
			for range 50 {
				res, _ := q.Execute(slices.Values(docs))
				q.Match(docs[0])
				out = out[:0]
				for _, r := range res {
					out = append(out, string(r))
				}
			}
			done <- out
		}()
	}
	for range 8 {
		if got := strings.Join(<-done, ","); got != `{"id":"a"},{"id":"b"}` {
			t.Errorf("got %s", got)
		}
	}
}
