package cosmosql

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fullDecode returns a copy of q that decodes every document whole, the
// path the lazy scan must agree with.
func fullDecode(q *Query) *Query {
	f := *q
	f.whole, f.fields = true, nil
	return &f
}

// outcome runs q over the single document doc and renders what Execute and
// Match give, errors included, for comparison.
func outcome(q *Query, doc []byte) string {
	rows, err := q.Execute(slices.Values([][]byte{doc}))
	var b strings.Builder
	fmt.Fprintf(&b, "match=%v err=%v rows=", q.Match(doc), err)
	for _, r := range rows {
		b.WriteString(string(r) + ";")
	}
	return b.String()
}

// sameAsFull checks that q gives over doc exactly what the full decode gives.
func sameAsFull(t *testing.T, q *Query, query string, doc []byte) {
	t.Helper()
	if q.whole {
		t.Fatalf("%s: expected a lazy plan", query)
	}
	lazy, full := outcome(q, doc), outcome(fullDecode(q), doc)
	if lazy != full {
		t.Errorf("%s over %q:\n lazy %s\n full %s", query, doc, lazy, full)
	}
}

// lazyTaken checks that decodeFields takes doc, a valid object within the
// scanner's limits, without falling back, and decodes exactly the members
// of the full decode it was asked for.
func lazyTaken(t *testing.T, doc []byte, fields ...string) {
	t.Helper()
	full, err := decodeJSON(doc)
	if err != nil {
		t.Fatalf("test document %q: %v", doc, err)
	}
	m, ok := decodeFields(doc, fields, nil)
	if !ok {
		t.Errorf("decodeFields fell back on the valid %q", doc)
		return
	}
	want := map[string]any{}
	for _, f := range fields {
		if v, ok := full.(map[string]any)[f]; ok {
			want[f] = v
		}
	}
	if len(m) != len(want) || (len(m) > 0 && !reflect.DeepEqual(m, want)) {
		t.Errorf("decodeFields(%q) = %#v, want %#v", doc, m, want)
	}
}

// TestScanStringAlignment puts each escape at every offset of the 8-byte
// blocks the string scan reads and checks it ends exactly at the closing quote.
func TestScanStringAlignment(t *testing.T) {
	for _, esc := range []string{`\"`, `\\`, `\\\"`, `\u0022`, `\/`, `\\\\`, `é`, `\"\"`} {
		for k := range 20 {
			for _, tail := range []string{"", "x", "xxxxxxxxxxxxxxx"} {
				str := `"` + strings.Repeat("a", k) + esc + tail + `"`
				s := jsonScanner{b: []byte(str + `,"z"`)}
				if _, ok := s.str(); !ok || s.i != len(str) {
					t.Errorf("str(%s) stopped at %d ok=%v, want %d", str, s.i, ok, len(str))
				}
				lazyTaken(t, []byte(`{"p":`+str+`,"cat":3,"s":`+str+`}`), "cat", "s")
			}
		}
	}
	for _, bad := range []string{`"ab`, `"ab\"`, "\"a\x01b\"", `"\x"`, `"\u12"`, `"\u12z4"`, `"` + strings.Repeat("x", 30)} {
		s := jsonScanner{b: []byte(bad)}
		if _, ok := s.str(); ok {
			t.Errorf("str(%q) accepted", bad)
		}
	}
}

func mustParse(t testing.TB, query string, params ...Param) *Query {
	t.Helper()
	q, err := Parse(query, params)
	if err != nil {
		t.Fatalf("Parse(%q): %v", query, err)
	}
	return q
}

func TestPlanDecode(t *testing.T) {
	cases := []struct {
		query  string
		fields string // joined with ","; "WHOLE" when the whole document is needed
	}{
		{`SELECT * FROM c WHERE c.cat = @cat`, "cat"},
		{`SELECT * FROM c`, ""},
		{`SELECT c FROM c`, ""},
		{`SELECT VALUE r FROM root r WHERE r["a b"].x = 1 ORDER BY r.t`, "a b,t"},
		{`SELECT c.id, c.o.x, c["id"] AS i2 FROM c WHERE c.n > 1 ORDER BY c.o.y`, "n,o,id"},
		{`SELECT VALUE SUM(c.n) FROM c WHERE c.s = "x"`, "s,n"},
		{`SELECT VALUE COUNT(1) FROM c`, ""},
		{`SELECT * FROM c WHERE c[@k] = 1`, "kk"},
		{`SELECT * FROM c WHERE c[@i] = 1`, "WHOLE"},
		{`SELECT * FROM c WHERE IS_DEFINED(c)`, "WHOLE"},
		{`SELECT VALUE COUNT(c) FROM c`, "WHOLE"},
		{`SELECT VALUE [c, c.a] FROM c`, "WHOLE"},
		{`SELECT c.a, c FROM c`, "a"},
	}
	params := []Param{{Name: "@cat", Value: []byte("3")}, {Name: "@k", Value: []byte(`"kk"`)}, {Name: "@i", Value: []byte("0")}}
	for _, c := range cases {
		q := mustParse(t, c.query, params...)
		got := strings.Join(q.fields, ",")
		if q.whole {
			got = "WHOLE"
		}
		if got != c.fields {
			t.Errorf("%s: fields %q, want %q", c.query, got, c.fields)
		}
	}
	q, err := ParseCondition(`FROM c WHERE c.ttl > 0 AND c.cat = 1`)
	if err != nil || q.whole || strings.Join(q.fields, ",") != "ttl,cat" {
		t.Errorf("condition plan: %v %v %v", q.fields, q.whole, err)
	}
}

// lazyQueries are the queries the comparisons below run.
var lazyQueries = []string{
	`SELECT * FROM c WHERE c.cat = 3`,
	`SELECT c.cat, c["a b"], c.o.x, c.s FROM c`,
	`SELECT VALUE c.s FROM c ORDER BY c.cat`,
	`SELECT VALUE c FROM c WHERE IS_DEFINED(c.pad)`,
	`SELECT VALUE MAX(c.cat) FROM c`,
	`SELECT * FROM c ORDER BY c.id DESC`,
}

func TestLazyScanTrickyDocuments(t *testing.T) {
	long := strings.Repeat(`ab\\\"c}{][,:`, 40)
	docs := []string{
		`{"pad":"a\\\"b","cat":3}`,
		`{"pad":"` + long + `","cat":3,"s":"after"}`,
		`{"pad":"` + long + `x","cat":3,"s":"` + long + `"}`,
		`{"pad":"\\\\\\\\","cat":3}`,
		`{"pad":"é\u00e9\"\\/\b\f\n\r\t","cat":3,"s":"héllo\u0041"}`,
		`{"n":{"s":"}}]]{{\"","a":[1,{"x":"]"}],"b":[[[]]],"e":{}},"cat":3,"o":{"x":[{"}":"{"}]}}`,
		`{"arr":[[["[\"]"]],{"cat":1}],"cat":3}`,
		`{"c\u0061t":3,"\u0073":"esc name"}`,
		`{"\"cat":1,"cat\\":2,"cat":3}`,
		" \n\t{ \"cat\" \r: 3 , \"x\" : [ 1 , { \"y\" : null } ] ,\n\"s\"\t:\"v\" } \n",
		`{"cat":1,"cat":3}`,
		`{"cat":3,"cat":1}`,
		`{"cat":1,"c\u0061t":3,"s":"a","s":"b"}`,
		`{"a b":{"q":true},"o":{"x":-1.50e+2},"cat":-0}`,
		`{"cat":3,"s":"\ud800 lone","pad":"\udc00\ud83d\ude00"}`,
		"{\"cat\":3,\"s\":\"bad utf8 \xff\xfe\",\"\xffk\":1}",
		`{}`,
		`{"cat":3} `,
	}
	for _, query := range lazyQueries {
		q := mustParse(t, query)
		for _, d := range docs {
			sameAsFull(t, q, query, []byte(d))
		}
	}
	for _, d := range docs {
		lazyTaken(t, []byte(d), "cat", "s", "o", "pad", "a b")
	}
	// Spot checks against hand-worked answers.
	q := mustParse(t, `SELECT VALUE c.cat FROM c`)
	for doc, want := range map[string]string{
		`{"c\u0061t":7}`: "7", `{"cat":1,"cat":3}`: "3", `{"cat":1,"c\u0061t":2}`: "2",
		`{"pad":"a\\\"b\",\"cat\":9","cat":4}`: "4", `{"o":{"cat":5},"x":"{\"cat\":6}"}`: "",
	} {
		rows, err := q.Execute(slices.Values([][]byte{[]byte(doc)}))
		if err != nil || strings.Join(toStrings(rows), ",") != want {
			t.Errorf("SELECT VALUE c.cat over %s: %v %v, want %s", doc, toStrings(rows), err, want)
		}
	}
}

func toStrings[T ~[]byte](rows []T) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r)
	}
	return out
}

func TestLazyScanMalformed(t *testing.T) {
	docs := []string{
		``, ` `, `3`, `"s"`, `[1]`, `null`, `{`, `{"cat":3`, `{"cat":3,}`, `{"cat":01}`, `{"cat":1.}`,
		`{"cat":-}`, `{"cat":1e}`, `{"cat":1e+}`, `{"cat":.5}`, `{"cat":+1}`, `{"cat":tru}`, `{"cat":truex}`,
		`{"cat":nul}`, "{\"cat\":\"a\x01\"}", `{"cat":"\x"}`, `{"cat":"\u12g4"}`, `{"cat":"\u12"}`,
		`{"cat":"abc`, `{"cat":"abc\"}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{"a" 1}`, `{1:2}`, `{"a":1 "b":2}`,
		`{"a":{"b":1}`, `{"a":{"b":1}}}`, `{"cat":3} x`, `{"cat":3} {}`, `{"cat":3} "s"`, `{"cat":3} ]`,
		`{"cat":3}{"cat":3}`, "\ufeff{\"cat\":3}", `{'cat':3}`, `{"cat":NaN}`, `{"cat":3}}`, `{"a":[}`,
		`{"a":"` + strings.Repeat("x", 37) + "\n" + `"}`, `{"a":"` + strings.Repeat("\\", 37) + `"}`,
		`{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `,"cat":3}`,
		`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `,"cat":3}`,
		`{"a":` + strings.Repeat(`{"b":`, 9998) + `1` + strings.Repeat("}", 9998) + `,"cat":3}`,
	}
	for _, query := range lazyQueries {
		q := mustParse(t, query)
		for _, d := range docs {
			sameAsFull(t, q, query, []byte(d))
		}
	}
}

// randomDoc builds a random JSON object (valid unless broken is set) whose
// members include the names the lazy queries read, spelled plainly or
// escaped, with strings full of quotes, backslashes and brackets, and
// random whitespace.
func randomDoc(r *rand.Rand) []byte {
	var b strings.Builder
	ws := func() {
		for range r.IntN(3) {
			b.WriteByte(" \t\r\n"[r.IntN(4)])
		}
	}
	names := []string{`cat`, `c\u0061t`, `s`, `\u0073`, `pad`, `a b`, `o`, `id`, `x`, `ca`, `cat\\`, `\"cat`}
	ws()
	b.WriteByte('{')
	for i := range r.IntN(6) {
		if i > 0 {
			ws()
			b.WriteByte(',')
		}
		ws()
		b.WriteString(`"` + names[r.IntN(len(names))] + `"`)
		ws()
		b.WriteByte(':')
		ws()
		randomValue(r, &b, 3)
		ws()
	}
	b.WriteByte('}')
	ws()
	return []byte(b.String())
}

func randomValue(r *rand.Rand, b *strings.Builder, depth int) {
	pieces := []string{`a`, `\"`, `\\`, `{`, `}`, `[`, `]`, `,`, `:`, `\u00e9`, `é`, `\n`, `\/`, `xxxxxxxxxxxx`, `\ud83d\ude00`}
	switch k := r.IntN(9); {
	case k < 3:
		b.WriteByte('"')
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		b.WriteByte('"')
	case k < 5:
		b.WriteString([]string{`3`, `-0`, `1.5e3`, `0.25`, `12345678901234567890`, `3.0`}[r.IntN(6)])
	case k == 5:
		b.WriteString([]string{`true`, `false`, `null`}[r.IntN(3)])
	case depth == 0:
		b.WriteString(`[]`)
	case k == 6:
		b.WriteByte('[')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteString(" , ")
			}
			randomValue(r, b, depth-1)
		}
		b.WriteByte(']')
	default:
		b.WriteString(`{"x":`)
		randomValue(r, b, depth-1)
		b.WriteString(`,"}":`)
		randomValue(r, b, depth-1)
		b.WriteByte('}')
	}
}

// mutate breaks doc in a random way: truncate it, or overwrite, insert or delete a byte.
func mutate(r *rand.Rand, doc []byte) []byte {
	if len(doc) == 0 {
		return doc
	}
	i := r.IntN(len(doc))
	const bytes = "{}[]\",:\\ax01 \x00\xff"
	c := bytes[r.IntN(len(bytes))]
	switch r.IntN(4) {
	case 0:
		return doc[:i]
	case 1:
		doc[i] = c
		return doc
	case 2:
		return slices.Insert(doc, i, c)
	}
	return slices.Delete(doc, i, i+1)
}

func TestLazyScanRandomDocuments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	qs := make([]*Query, len(lazyQueries))
	for i, query := range lazyQueries {
		qs[i] = mustParse(t, query)
	}
	for n := range 3000 {
		doc := randomDoc(r)
		if n%3 == 0 {
			doc = mutate(r, doc)
		} else {
			lazyTaken(t, doc, "cat", "s", "o", "a b")
		}
		for i, q := range qs {
			sameAsFull(t, q, lazyQueries[i], doc)
		}
	}
	// A whole batch too, for ORDER BY and aggregates over many documents.
	docs := make([][]byte, 200)
	for i := range docs {
		docs[i] = randomDoc(r)
	}
	for i, q := range qs {
		lazy, err1 := q.Execute(slices.Values(docs))
		full, err2 := fullDecode(q).Execute(slices.Values(docs))
		if !reflect.DeepEqual(toStrings(lazy), toStrings(full)) || (err1 == nil) != (err2 == nil) {
			t.Errorf("%s over a batch: lazy %v %v, full %v %v", lazyQueries[i], toStrings(lazy), err1, toStrings(full), err2)
		}
	}
}

// FuzzLazyScan checks that the lazy scan agrees with the full decode on any
// document (run with -fuzz FuzzLazyScan to search beyond the seeds).
func FuzzLazyScan(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		f.Add(randomDoc(r))
	}
	f.Add([]byte(`{"c\u0061t":3,"cat":"x\\\"y"}`))
	qs := make([]*Query, len(lazyQueries))
	for i, query := range lazyQueries {
		qs[i] = mustParse(f, query)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for i, q := range qs {
			sameAsFull(t, q, lazyQueries[i], doc)
		}
	})
}

func BenchmarkDecodeFields(b *testing.B) {
	var docs [][]byte
	for i := range 100 {
		pad := strings.Repeat("x", 60+(i*397)%1901)
		docs = append(docs, fmt.Appendf(nil, `{"id":"doc-%03d","cat":%d,"ttl":%d,"pad":%q}`, i, i%5, 60+i, pad))
	}
	m := map[string]any{}
	b.ReportAllocs()
	for range b.N {
		for _, d := range docs {
			if _, ok := decodeFields(d, []string{"cat"}, m); !ok {
				b.Fatal("fell back")
			}
		}
	}
}
