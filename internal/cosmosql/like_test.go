package cosmosql_test

import "testing"

func TestLike(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"'apple' LIKE 'a%'", "true"},
		{"'apple' LIKE 'A%'", "false"},
		{"'apple' LIKE '%pl%'", "true"},
		{"'apple' LIKE '%e'", "true"},
		{"'apple' LIKE '%x%'", "false"},
		{"'apple' LIKE 'a_ple'", "true"},
		{"'apple' LIKE 'a_le'", "false"},
		{"'apple' LIKE 'apple'", "true"},
		{"'apple' LIKE 'appl'", "false"},
		{"'' LIKE '%'", "true"},
		{"'' LIKE '_'", "false"},
		{"'aXb' LIKE 'a[XYZ]b'", "true"},
		{"'aQb' LIKE 'a[XYZ]b'", "false"},
		{"'a5b' LIKE 'a[0-9]b'", "true"},
		{"'a5b' LIKE 'a[^0-9]b'", "false"},
		{"'a[b' LIKE 'a[b'", "true"},
		{"'50%' LIKE '50!%' ESCAPE '!'", "true"},
		{"'501' LIKE '50!%' ESCAPE '!'", "false"},
		{"'é€x' LIKE '__x'", "true"},
		{"'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab' LIKE '%a%a%a%a%a%a%a%c'", "false"},
		{"'apple' NOT LIKE 'b%'", "true"},
		{"1 LIKE '1'", "undefined"},
		{"c.u LIKE '%'", "undefined"},
		{"c.u NOT LIKE '%'", "undefined"},
		{"c.id LIKE c.id", "true"},
		{"c.id LIKE 1", "undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			if got := value(t, tt.expr, `{"id":"x%"}`); got != tt.want {
				t.Errorf("%s = %s, want %s", tt.expr, got, tt.want)
			}
		})
	}
	if got := ids(t, `c.s LIKE "%an%"`); got != "b" {
		t.Errorf(`WHERE c.s LIKE "%%an%%" kept %q, want "b"`, got)
	}
}
