package cosmosql_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

var unsup, syntax, paramErr = cosmosql.ErrUnsupported, cosmosql.ErrSyntax, cosmosql.ErrParameter

// refusalTests are queries Parse must refuse, the sentinel and a part of the message.
var refusalTests = []struct {
	name, query string
	want        error
	contains    string
}{
	{"join", `SELECT * FROM c JOIN t IN c.tags`, unsup, "unsupported: JOIN"},
	{"group by", `SELECT c.k, COUNT(1) FROM c GROUP BY c.k`, unsup, "GROUP BY"},
	{"distinct", `SELECT DISTINCT c.k FROM c`, unsup, "DISTINCT"},
	{"distinct value", `SELECT DISTINCT VALUE c.k FROM c`, unsup, "DISTINCT"},
	{"exists subquery", `SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags)`, unsup, "subquery (EXISTS)"},
	{"array subquery", `SELECT ARRAY(SELECT VALUE t FROM t IN c.tags) FROM c`, unsup, "subquery (ARRAY)"},
	{"scalar subquery", `SELECT (SELECT VALUE 1) FROM c`, unsup, "subquery"},
	{"in subquery", `SELECT * FROM c WHERE c.a IN (SELECT VALUE 1)`, unsup, "subquery"},
	{"from subquery", `SELECT * FROM (SELECT * FROM c) d`, unsup, "subquery in FROM"},
	{"udf", `SELECT * FROM c WHERE udf.tax(c.p) > 1`, unsup, "user-defined function udf.tax"},
	{"like escape too long", `SELECT * FROM c WHERE c.s LIKE 'a%' ESCAPE 'ab'`, syntax, "one-character string after ESCAPE"},
	{"from in", `SELECT * FROM t IN c.tags`, unsup, "FROM ... IN"},
	{"from path", `SELECT * FROM c.tags`, unsup, "FROM on a path"},
	{"order by two", `SELECT * FROM c ORDER BY c.a, c.b`, unsup, "ORDER BY on more than one property"},
	{"order by expression", `SELECT * FROM c ORDER BY c.a + 1`, unsup, "not a property path"},
	{"order by rank", `SELECT * FROM c ORDER BY RANK FullTextScore(c.t, ['x'])`, unsup, "ORDER BY RANK"},
	{"unknown function", `SELECT * FROM c WHERE ABS(c.n) = 1`, unsup, "unsupported: function ABS"},
	{"spatial function", `SELECT * FROM c WHERE st_distance(c.a, c.b) < 1`, unsup, "function ST_DISTANCE"},
	{"aggregate with order by", `SELECT VALUE COUNT(1) FROM c ORDER BY c.a`, unsup, "ORDER BY with an aggregate"},
	{"aggregate mixed", `SELECT COUNT(1), c.a FROM c`, unsup, "aggregate mixed with non-aggregate"},
	{"aggregate in where", `SELECT * FROM c WHERE COUNT(1) > 1`, unsup, "aggregate COUNT in WHERE"},
	{"aggregate in expression", `SELECT VALUE COUNT(1) + 1 FROM c`, unsup, "aggregate COUNT inside an expression"},
	{"nested aggregate", `SELECT VALUE SUM(COUNT(1)) FROM c`, unsup, "aggregate COUNT inside an expression"},
	{"top with offset", `SELECT TOP 1 * FROM c OFFSET 0 LIMIT 1`, unsup, "TOP together with OFFSET LIMIT"},
	{"coalesce", `SELECT VALUE c.a ?? 1 FROM c`, unsup, "coalesce operator ??"},
	{"ternary", `SELECT VALUE c.a ? 1 : 2 FROM c`, unsup, "conditional operator ?:"},
	{"bitwise and", `SELECT VALUE c.a & 1 FROM c`, unsup, "bitwise operator &"},
	{"bitwise not", `SELECT VALUE ~c.a FROM c`, unsup, "bitwise operator ~"},
	{"no from", `SELECT VALUE 1`, unsup, "SELECT without FROM"},
	{"empty", ``, syntax, "expected SELECT"},
	{"missing from", `SELECT * WHERE c.a = 1`, syntax, `offset 9: expected FROM, found "WHERE"`},
	{"bad token", `SELECT * FROM c WHERE c.a = #`, syntax, "offset 28"},
	{"unterminated string", `SELECT * FROM c WHERE c.a = 'abc`, syntax, "unterminated string"},
	{"bad escape", `SELECT * FROM c WHERE c.a = '\q'`, syntax, "invalid escape"},
	{"unresolved identifier", `SELECT * FROM c WHERE d.a = 1`, syntax, `identifier "d" could not be resolved`},
	{"alias hides container name", `SELECT * FROM root r WHERE root.a = 1`, syntax, `identifier "root"`},
	{"trailing tokens", `SELECT * FROM c WHERE c.a = 1 1`, syntax, "expected end of query"},
	{"unbalanced paren", `SELECT * FROM c WHERE (c.a = 1`, syntax, "expected ')'"},
	{"limit without offset", `SELECT * FROM c LIMIT 1`, syntax, "OFFSET before LIMIT"},
	{"offset without limit", `SELECT * FROM c OFFSET 1`, syntax, "expected LIMIT"},
	{"negative top", `SELECT TOP -1 * FROM c`, syntax, "integer after TOP"},
	{"fractional limit", `SELECT * FROM c OFFSET 0 LIMIT 1.5`, syntax, "integer after LIMIT"},
	{"two tops", `SELECT TOP 1 TOP 2 * FROM c`, syntax, "one TOP"},
	{"star and list", `SELECT *, c.a FROM c`, syntax, "expected FROM"},
	{"value list", `SELECT VALUE c.a, c.b FROM c`, syntax, "SELECT VALUE takes one expression"},
	{"duplicate projection name", `SELECT c.a, c.b.a FROM c`, syntax, `name "a" is used more than once`},
	{"function arity", `SELECT * FROM c WHERE IS_DEFINED(c.a, c.b)`, syntax, "IS_DEFINED takes 1 argument(s), got 2"},
	{"count star", `SELECT COUNT(*) FROM c`, syntax, "expected an expression"},
	{"keyword as expression", `SELECT * FROM c WHERE AND`, syntax, `expected an expression, found "AND"`},
	{"empty in list", `SELECT * FROM c WHERE c.a IN ()`, syntax, "IN list"},
	{"keyword alias", `SELECT * FROM select`, syntax, "after FROM"},
	{"deep nesting", `SELECT VALUE ` + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300) + ` FROM c`, syntax, "nested more than"},
	{"missing parameter", `SELECT * FROM c WHERE c.a = @a`, paramErr, "@a is used at offset 28 but not given"},
	{"missing top parameter", `SELECT TOP @n * FROM c`, paramErr, "@n"},
}

func TestRefusals(t *testing.T) {
	for _, tt := range refusalTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cosmosql.Parse(tt.query, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse(%q) = %v, want %v", tt.query, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("Parse(%q) = %q, want it to contain %q", tt.query, err, tt.contains)
			}
		})
	}
}

func TestParameterErrors(t *testing.T) {
	tests := []struct {
		name, query string
		params      []cosmosql.Param
		contains    string
	}{
		{"duplicate", `SELECT * FROM c WHERE c.a = @a`, []cosmosql.Param{param("@a", "1"), param("@a", "2")}, "@a is given twice"},
		{"malformed value", `SELECT * FROM c WHERE c.a = @a`, []cosmosql.Param{param("@a", "{")}, "value of @a is not valid JSON"},
		{"trailing value", `SELECT * FROM c WHERE c.a = @a`, []cosmosql.Param{param("@a", "1 2")}, "value of @a"},
		{"name without at", `SELECT * FROM c`, []cosmosql.Param{param("a", "1")}, `name "a"`},
		{"bare at", `SELECT * FROM c`, []cosmosql.Param{param("@", "1")}, `name "@"`},
		{"top string", `SELECT TOP @n * FROM c`, []cosmosql.Param{param("@n", `"3"`)}, "@n used as the TOP count"},
		{"limit negative", `SELECT * FROM c OFFSET 0 LIMIT @n`, []cosmosql.Param{param("@n", `-1`)}, "LIMIT count"},
		{"offset fraction", `SELECT * FROM c OFFSET @n LIMIT 1`, []cosmosql.Param{param("@n", `0.5`)}, "OFFSET count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cosmosql.Parse(tt.query, tt.params)
			if !errors.Is(err, cosmosql.ErrParameter) {
				t.Fatalf("Parse(%q) = %v, want ErrParameter", tt.query, err)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("Parse(%q) = %q, want it to contain %q", tt.query, err, tt.contains)
			}
		})
	}
}

// TestParameterWithoutValue: a parameter sent with no value is undefined, as in Cosmos.
func TestParameterWithoutValue(t *testing.T) {
	got := run(t, `SELECT VALUE IS_DEFINED(@u) FROM c`, []cosmosql.Param{{Name: "@u"}}, []string{`{}`})
	if len(got) != 1 || got[0] != "false" {
		t.Errorf("got %q, want [false]", got)
	}
}
