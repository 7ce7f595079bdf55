package jsonscan

import (
	"bytes"
	"errors"
	"testing"
)

// checkLocate checks Locate against Strip for src: for a valid src already
// in stored form (Strip's output is src), Locate must find the same Fields;
// for any other valid src, it must decline. (Locate trusts its input: what
// it makes of invalid JSON is not specified.)
func checkLocate(t *testing.T, src []byte, maxDepth int) {
	t.Helper()
	out, want, err := Strip(nil, src, maxDepth)
	got, ok := Locate(src, maxDepth)
	switch {
	case err != nil:
		// Invalid, or too deep: Locate must decline what is too deep.
		if ok && errors.Is(err, ErrTooDeep) {
			t.Fatalf("Locate(%q) ok, Strip: %v", src, err)
		}
	case !bytes.Equal(out, src):
		if ok {
			t.Fatalf("Locate(%q) ok, but its stored form is %q", src, out)
		}
	case !ok:
		t.Fatalf("Locate(%q) declined a document in stored form", src)
	case got.IDKind != want.IDKind || !bytes.Equal(got.IDRaw, want.IDRaw) || got.IDStart != want.IDStart ||
		got.IDEnd != want.IDEnd || got.IDEscaped != want.IDEscaped || got.TTLKind != want.TTLKind ||
		!bytes.Equal(got.TTLRaw, want.TTLRaw) || got.StampAt != want.StampAt:
		t.Fatalf("Locate(%q) = %+v, Strip's Fields %+v", src, got, want)
	}
}

// TestLocateAgrees checks Locate against Strip on the test cases, on the
// corpus and on the corpus's stored forms.
func TestLocateAgrees(t *testing.T) {
	for _, tc := range validCases {
		checkLocate(t, []byte(tc.in), fuzzMaxDepth)
		if out, _, err := Strip(nil, []byte(tc.in), fuzzMaxDepth); err == nil {
			checkLocate(t, out, fuzzMaxDepth)
		}
	}
	for _, tc := range invalidCases {
		checkLocate(t, []byte(tc.in), fuzzMaxDepth)
	}
	for _, pretty := range []bool{false, true} {
		for _, doc := range corpus(7, 300, 2, 3000, pretty) {
			checkLocate(t, doc, fuzzMaxDepth)
			out, _, err := Strip(nil, doc, fuzzMaxDepth)
			if err != nil {
				t.Fatalf("corpus document refused: %v", err)
			}
			checkLocate(t, out, fuzzMaxDepth)
			for d := 1; d <= 4; d++ {
				checkLocate(t, out, d) // the depth limit, either side of the document's
			}
		}
	}
	for _, src := range []string{
		`{}`, `{"id":"a"}`, `{"id":"a\"b","ttl":5}`, `{"id":"a\\","ttl":null}`, `{"\u0069d":"x"}`,
		`{"a":"\\\"","id":"\\"}`, `{"a":{"b":[1,{"c":"}"}]},"ttl":"10"}`, `{"_ts":1}`, `{"x":1,"\u005fetag":"e"}`,
		`{"id":"a","id":"b"}`, `{"ttl":1,"ttl":2}`, `{"a":1 }`, `{"a": 1}`, `{"a":1,}`, `{"a"`, `{"a":"`, `{"a":[1,2}`,
		`{"a":[[[[1]]]]}`, ` {"a":1}`,
	} {
		for d := 1; d <= 6; d++ {
			checkLocate(t, []byte(src), d)
		}
	}
}

// FuzzLocate checks Locate against Strip on arbitrary input and on its
// stored form.
func FuzzLocate(f *testing.F) {
	for _, tc := range validCases {
		f.Add([]byte(tc.in), uint8(fuzzMaxDepth))
	}
	f.Add([]byte(`{"id":"a\"b","ttl":5,"n":{"x":["}"]}}`), uint8(3))
	f.Fuzz(func(t *testing.T, src []byte, depth uint8) {
		d := int(depth%12) + 1
		checkLocate(t, src, d)
		if out, _, err := Strip(nil, src, d); err == nil {
			checkLocate(t, out, d)
		}
	})
}

// TestValidValue checks ValidValue against Strip on a member's value.
func TestValidValue(t *testing.T) {
	for _, v := range []string{`1`, ` "a" `, `{"a":[1,2]}`, `null`, `true`, `-0.5e3`, `""`, `"\u00e9"`,
		``, ` `, `01`, `{"a":}`, `"a`, `tru`, `1 2`, "\"\xff\"", `[1,]`, `{"a":1}x`} {
		_, _, err := Strip(nil, []byte(`{"v":`+v+`}`), 4)
		if got, want := ValidValue([]byte(v), 4), err == nil; got != want {
			t.Errorf("ValidValue(%q) = %v, Strip of it as a member: %v", v, got, err)
		}
	}
}
