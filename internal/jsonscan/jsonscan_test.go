package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const (
	testTS       = 1234
	testEtag     = "abc"
	testMaxDepth = 8
)

// stampSuffix is what Stamp appends for testTS and testEtag.
const stampSuffix = `"_ts":1234,"_etag":"abc"}`

// validCases are accepted inputs with their exact expected output for
// testTS, testEtag and testMaxDepth.
var validCases = []struct {
	name, in, want string
}{
	{"empty", `{}`, `{` + stampSuffix},
	{"empty with whitespace", " \t\r\n{ \t\r\n} \t\r\n", `{` + stampSuffix},
	{"one member", `{"a":1}`, `{"a":1,` + stampSuffix},
	{
		"whitespace everywhere",
		" \t\n\r{ \"a\" : 1 , \"b\"\t:\n[ 1 , { \"c\" : null } ] \r, \"d\":\"x y\" }\n ",
		"{\"a\" : 1,\"b\"\t:\n[ 1 , { \"c\" : null } ],\"d\":\"x y\"," + stampSuffix,
	},
	{"all kinds", `{"s":"x","n":-1.5e+3,"o":{},"a":[],"t":true,"f":false,"z":null,"e":0,"E":1E-7}`,
		`{"s":"x","n":-1.5e+3,"o":{},"a":[],"t":true,"f":false,"z":null,"e":0,"E":1E-7,` + stampSuffix},
	{"nested ttl and id not counted", `{"a":{"ttl":5,"id":"x","_ts":1},"b":[{"ttl":1}]}`,
		`{"a":{"ttl":5,"id":"x","_ts":1},"b":[{"ttl":1}],` + stampSuffix},
	{"case matters", `{"TTL":5,"ID":"x","Id":1,"_TS":2,"_Etag":"y"}`,
		`{"TTL":5,"ID":"x","Id":1,"_TS":2,"_Etag":"y",` + stampSuffix},
	{"near misses kept", `{"_ts ":1," _ts":2,"__ts":3,"_t":4,"_etags":5,"ts":6,"etag":7}`,
		`{"_ts ":1," _ts":2,"__ts":3,"_t":4,"_etags":5,"ts":6,"etag":7,` + stampSuffix},
	{"escaped id and ttl keys", `{"\u0069d":"x","t\u0074l":5}`, `{"\u0069d":"x","t\u0074l":5,` + stampSuffix},
	{"id and ttl", `{"id":"doc1","ttl":60,"v":true}`, `{"id":"doc1","ttl":60,"v":true,` + stampSuffix},
	{"_ts first", `{"_ts":1,"a":1}`, `{"a":1,` + stampSuffix},
	{"_ts middle", `{"a":1,"_ts":1,"b":2}`, `{"a":1,"b":2,` + stampSuffix},
	{"_ts last", `{"a":1,"_ts":1}`, `{"a":1,` + stampSuffix},
	{"_etag first", `{"_etag":"x","a":1}`, `{"a":1,` + stampSuffix},
	{"_etag middle", `{"a":1,"_etag":"x","b":2}`, `{"a":1,"b":2,` + stampSuffix},
	{"_etag last", `{"a":1,"_etag":"x"}`, `{"a":1,` + stampSuffix},
	{"_ts only member", `{"_ts":5}`, `{` + stampSuffix},
	{"_etag only member", `{ "_etag" : "q" }`, `{` + stampSuffix},
	{"_ts and _etag only", `{"_etag":"x","_ts":5}`, `{` + stampSuffix},
	{"duplicated _ts and _etag", `{"_ts":1,"a":1,"_ts":2,"_etag":"a","b":2,"_etag":"b","_ts":3}`,
		`{"a":1,"b":2,` + stampSuffix},
	{"escaped _ts and _etag keys", `{"\u005fts":1,"_\u0065tag":"q","a":1,"\u005F\u0074\u0073":{"x":[1]}}`,
		`{"a":1,` + stampSuffix},
	{"fully escaped _etag key", `{"a":1,"\u005f\u0065\u0074\u0061\u0067":2}`, `{"a":1,` + stampSuffix},
	{"_ts with container value", `{"_ts":{"a":[1,{"b":2}]},"id":"x","_etag":[[]]}`, `{"id":"x",` + stampSuffix},
	{"other duplicates allowed", `{"a":1,"a":2}`, `{"a":1,"a":2,` + stampSuffix},
	{"short escaped ordinary key", `{"\u0041":1,"a\/b":2,"\"":3}`, `{"\u0041":1,"a\/b":2,"\"":3,` + stampSuffix},
	{"long escaped key", `{"\u0069\u0069\u0069\u0069\u0069\u0069\u0069":1}`, `{"\u0069\u0069\u0069\u0069\u0069\u0069\u0069":1,` + stampSuffix},
	{"escapes in values", `{"id":"a\"b\\c\/d\b\f\n\r\t\u00e9\uD83D\uDE00"}`, `{"id":"a\"b\\c\/d\b\f\n\r\t\u00e9\uD83D\uDE00",` + stampSuffix},
	{"utf8 content", `{"id":"héllo ☃ 😀","ключ":"значение"}`, `{"id":"héllo ☃ 😀","ключ":"значение",` + stampSuffix},
	{"numbers", `{"a":[0,-0,1,-1,0.5,-0.5,10,1e5,1E5,1e+5,1e-5,1.25e10,123456789012345678901234567890]}`,
		`{"a":[0,-0,1,-1,0.5,-0.5,10,1e5,1E5,1e+5,1e-5,1.25e10,123456789012345678901234567890],` + stampSuffix},
	{"depth exactly maxDepth objects", `{"a":{"a":{"a":{"a":{"a":{"a":{"a":{}}}}}}}}`,
		`{"a":{"a":{"a":{"a":{"a":{"a":{"a":{}}}}}}},` + stampSuffix},
	{"depth exactly maxDepth arrays", `{"a":[[[[[[[1]]]]]]]}`, `{"a":[[[[[[[1]]]]]]],` + stampSuffix},
	{"depth exactly maxDepth mixed", `{"a":[{"b":[{"c":[{"d":[]}]}]}]}`, `{"a":[{"b":[{"c":[{"d":[]}]}]}],` + stampSuffix},
}

// invalidCases are rejected inputs with the sentinel the error must wrap,
// for testMaxDepth.
var invalidCases = []struct {
	name, in string
	want     error
}{
	{"empty", ``, ErrSyntax},
	{"whitespace only", " \t\r\n", ErrSyntax},
	{"array", `[]`, ErrNotObject},
	{"array with whitespace", ` [1, {"a":2}] `, ErrNotObject},
	{"string", `"x"`, ErrNotObject},
	{"number", `1`, ErrNotObject},
	{"negative number", ` -1.5e3 `, ErrNotObject},
	{"null", `null`, ErrNotObject},
	{"true", `true`, ErrNotObject},
	{"false", `false`, ErrNotObject},
	{"invalid non-object", `[1,]`, ErrSyntax},
	{"trailing garbage", `{} x`, ErrSyntax},
	{"trailing garbage after array", `[] x`, ErrSyntax},
	{"two objects", `{}{}`, ErrSyntax},
	{"two objects with space", `{} {}`, ErrSyntax},
	{"trailing comma in object", `{"a":1,}`, ErrSyntax},
	{"trailing comma in nested object", `{"a":{"b":1,}}`, ErrSyntax},
	{"trailing comma in array", `{"a":[1,]}`, ErrSyntax},
	{"leading comma in array", `{"a":[,1]}`, ErrSyntax},
	{"leading comma in object", `{,"a":1}`, ErrSyntax},
	{"double comma", `{"a":1,,"b":2}`, ErrSyntax},
	{"missing comma", `{"a":1 "b":2}`, ErrSyntax},
	{"missing comma in array", `{"a":[1 2]}`, ErrSyntax},
	{"missing colon", `{"a" 1}`, ErrSyntax},
	{"missing colon nested", `{"x":{"a" 1}}`, ErrSyntax},
	{"missing value", `{"a":}`, ErrSyntax},
	{"missing value nested", `{"x":{"a":}}`, ErrSyntax},
	{"single quotes", `{'a':1}`, ErrSyntax},
	{"single quoted value", `{"a":'x'}`, ErrSyntax},
	{"unquoted key", `{a:1}`, ErrSyntax},
	{"unquoted nested key", `{"a":{b:1}}`, ErrSyntax},
	{"leading zeros", `{"a":01}`, ErrSyntax},
	{"leading zeros negative", `{"a":-01}`, ErrSyntax},
	{"minus only", `{"a":-}`, ErrSyntax},
	{"minus at end", `{"a":-`, ErrSyntax},
	{"dot without fraction", `{"a":1.}`, ErrSyntax},
	{"dot without fraction at end", `{"a":1.`, ErrSyntax},
	{"bare fraction", `{"a":.5}`, ErrSyntax},
	{"exponent without digits", `{"a":1e}`, ErrSyntax},
	{"exponent sign without digits", `{"a":1e+}`, ErrSyntax},
	{"plus sign", `{"a":+1}`, ErrSyntax},
	{"NaN", `{"a":NaN}`, ErrSyntax},
	{"Infinity", `{"a":Infinity}`, ErrSyntax},
	{"negative Infinity", `{"a":-Infinity}`, ErrSyntax},
	{"hex number", `{"a":0x10}`, ErrSyntax},
	{"top-level leading zero", `01`, ErrSyntax},
	{"top-level minus", `-`, ErrSyntax},
	{"top-level 1.", `1.`, ErrSyntax},
	{"top-level .5", `.5`, ErrSyntax},
	{"top-level 1e", `1e`, ErrSyntax},
	{"top-level +1", `+1`, ErrSyntax},
	{"top-level NaN", `NaN`, ErrSyntax},
	{"top-level tru", `tru`, ErrSyntax},
	{"tru", `{"a":tru}`, ErrSyntax},
	{"truth", `{"a":truth}`, ErrSyntax},
	{"nul", `{"a":nul}`, ErrSyntax},
	{"fals at end", `{"a":fals`, ErrSyntax},
	{"True", `{"a":True}`, ErrSyntax},
	{"control char in string", "{\"a\":\"x\ny\"}", ErrSyntax},
	{"NUL in string", "{\"a\":\"\x00\"}", ErrSyntax},
	{"control char in key", "{\"a\tb\":1}", ErrSyntax},
	{"control char in nested string", "{\"a\":[\"\x1f\"]}", ErrSyntax},
	{"bad escape", `{"a":"\x"}`, ErrSyntax},
	{"bad escape in key", `{"\a":1}`, ErrSyntax},
	{"bad escape upper U", `{"a":"\U0041"}`, ErrSyntax},
	{"bad escape quote", `{"a":"\'"}`, ErrSyntax},
	{"short unicode escape", `{"a":"\u12"}`, ErrSyntax},
	{"short unicode escape at end", `{"a":"\u12`, ErrSyntax},
	{"non-hex unicode escape", `{"a":"\u12g4"}`, ErrSyntax},
	{"backslash at end", `{"a":"\`, ErrSyntax},
	{"invalid UTF-8 in string", "{\"a\":\"\xff\"}", ErrInvalidUTF8},
	{"invalid UTF-8 in key", "{\"\xc3\":1}", ErrInvalidUTF8},
	{"invalid UTF-8 outside strings", "{\"a\":1}\xff", ErrInvalidUTF8},
	{"invalid UTF-8 leading", "\xff{}", ErrInvalidUTF8},
	{"overlong UTF-8", "{\"a\":\"\xc0\xaf\"}", ErrInvalidUTF8},
	{"UTF-8 encoded surrogate", "{\"a\":\"\xed\xa0\x80\"}", ErrInvalidUTF8},
	{"truncated UTF-8", "{\"a\":\"\xe2\x82\"}", ErrInvalidUTF8},
	{"depth maxDepth+1 arrays", `{"a":[[[[[[[[1]]]]]]]]}`, ErrTooDeep},
	{"depth maxDepth+1 objects", `{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{}}}}}}}}}`, ErrTooDeep},
	{"depth maxDepth+1 empty", `{"a":[[[[[[[[]]]]]]]]}`, ErrTooDeep},
	{"depth maxDepth+1 empty object", `{"a":[[[[[[[{}]]]]]]]}`, ErrTooDeep},
	{"depth maxDepth+1 top-level array", `[[[[[[[[[]]]]]]]]]`, ErrTooDeep},
	{"duplicate id", `{"id":"a","id":"b"}`, ErrDuplicateKey},
	{"duplicate id different kinds", `{"id":1,"x":2,"id":null}`, ErrDuplicateKey},
	{"duplicate ttl", `{"ttl":1,"a":2,"ttl":1}`, ErrDuplicateKey},
	{"duplicate id via escaped key", `{"id":"a","\u0069d":"b"}`, ErrDuplicateKey},
	{"duplicate ttl via escaped key", `{"t\u0074l":1,"\u0074\u0074\u006c":2}`, ErrDuplicateKey},
	{"syntax error wins over duplicate", `{"id":1,"id":2,}`, ErrSyntax},
	{"unterminated string", `{"a":"abc`, ErrSyntax},
	{"unterminated key", `{"abc`, ErrSyntax},
	{"unterminated object", `{"a":1`, ErrSyntax},
	{"unterminated object after comma", `{"a":1,`, ErrSyntax},
	{"unterminated object after colon", `{"a":`, ErrSyntax},
	{"unterminated object after key", `{"a"`, ErrSyntax},
	{"unterminated open brace", `{`, ErrSyntax},
	{"unterminated nested object", `{"a":{"b":1}`, ErrSyntax},
	{"unterminated nested array", `{"a":[1,2}`, ErrSyntax},
	{"unterminated nested key", `{"a":{"b`, ErrSyntax},
	{"unterminated nested after key", `{"a":{"b"`, ErrSyntax},
	{"unterminated nested after colon", `{"a":{"b":`, ErrSyntax},
	{"unterminated nested after comma", `{"a":{"b":1,`, ErrSyntax},
	{"unterminated nested open", `{"a":[`, ErrSyntax},
	{"unterminated nested value", `{"a":[1`, ErrSyntax},
	{"nested number key", `{"a":{1:2}}`, ErrSyntax},
	{"nested key without value", `{"a":{"b"}}`, ErrSyntax},
	{"nested bad literal", `{"a":[tru]}`, ErrSyntax},
	{"nested bad literal at end", `{"a":[nu`, ErrSyntax},
	{"nested bad number", `{"a":[-]}`, ErrSyntax},
	{"nested bad string", "{\"a\":[\"\\q\"]}", ErrSyntax},
	{"nested bad key string", "{\"a\":{\"\\q\":1}}", ErrSyntax},
	{"mismatched brackets", `{"a":[1}]}`, ErrSyntax},
	{"mismatched close", `{"a":{]}`, ErrSyntax},
	{"close only", `}`, ErrSyntax},
	{"vertical tab whitespace", "{\v}", ErrSyntax},
	{"form feed whitespace", "{\"a\":\f1}", ErrSyntax},
	{"nbsp whitespace", "{\u00a0}", ErrSyntax},
	{"BOM", "\ufeff{}", ErrSyntax},
	{"comment", `{/*x*/}`, ErrSyntax},
	{"number key", `{1:1}`, ErrSyntax},
}

func TestStampValid(t *testing.T) {
	for _, tc := range validCases {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.in)) {
				t.Fatalf("bad test case: json.Valid rejects %q", tc.in)
			}
			src := []byte(tc.in)
			out, f, err := Stamp(nil, src, testTS, testEtag, testMaxDepth)
			if err != nil {
				t.Fatalf("Stamp(%q) error: %v", tc.in, err)
			}
			if string(out) != tc.want {
				t.Fatalf("Stamp(%q)\n got %s\nwant %s", tc.in, out, tc.want)
			}
			if string(src) != tc.in {
				t.Fatalf("Stamp modified src: %q", src)
			}
			if !json.Valid(out) {
				t.Fatalf("output is not valid JSON: %s", out)
			}
			if got := string(out[f.StampAt:]); strings.TrimPrefix(got, ",") != stampSuffix {
				t.Fatalf("out[StampAt:] = %q, want the stamp", got)
			}
			checkRestamp(t, nil, src, out, f)
		})
	}
}

// checkRestamp checks that restamping out via AppendStamp at f.StampAt gives
// the same bytes as stamping src afresh.
func checkRestamp(t *testing.T, prefix, src, out []byte, f Fields) {
	t.Helper()
	// Same ts/etag reproduces out.
	same := AppendStamp(bytes.Clone(out[:f.StampAt]), testTS, testEtag, out[f.StampAt-1] != '{')
	if !bytes.Equal(same, out) {
		t.Fatalf("AppendStamp(out[:StampAt]) = %s, want %s", same, out)
	}
	if len(prefix) == 0 && (out[f.StampAt-1] != '{') != (f.StampAt > 1) {
		t.Fatalf("StampAt = %d inconsistent with %s", f.StampAt, out)
	}
	const newTS, newEtag = -9223372036854775808, "0f1e2d3c-0000-4000-8000-abcdefabcdef"
	want, _, err := Stamp(bytes.Clone(prefix), src, newTS, newEtag, testMaxDepth)
	if err != nil {
		t.Fatalf("restamp Stamp error: %v", err)
	}
	outCopy := bytes.Clone(out)
	got := AppendStamp(out[:f.StampAt:f.StampAt], newTS, newEtag, out[f.StampAt-1] != '{')
	if !bytes.Equal(got, want) {
		t.Fatalf("restamped\n got %s\nwant %s", got, want)
	}
	if !bytes.Equal(out, outCopy) {
		t.Fatalf("restamping with a clipped slice modified out")
	}
}

func TestStampInvalid(t *testing.T) {
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			// Cross-check the expectation with encoding/json.
			switch tc.want {
			case ErrSyntax:
				if json.Valid([]byte(tc.in)) {
					t.Fatalf("bad test case: json.Valid accepts %q", tc.in)
				}
			case ErrNotObject, ErrDuplicateKey:
				if !json.Valid([]byte(tc.in)) {
					t.Fatalf("bad test case: json.Valid rejects %q", tc.in)
				}
			}
			dst := make([]byte, 3, 4)
			copy(dst, "pfx")
			out, f, err := Stamp(dst, []byte(tc.in), testTS, testEtag, testMaxDepth)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Stamp(%q) error = %v, want %v", tc.in, err, tc.want)
			}
			for _, other := range []error{ErrSyntax, ErrNotObject, ErrTooDeep, ErrInvalidUTF8, ErrDuplicateKey} {
				if other != tc.want && errors.Is(err, other) {
					t.Fatalf("Stamp(%q) error %v also wraps %v", tc.in, err, other)
				}
			}
			if !strings.HasPrefix(err.Error(), "jsonscan: offset ") {
				t.Fatalf("error %q lacks the offset prefix", err)
			}
			if len(out) != 3 || string(out) != "pfx" || &out[0] != &dst[0] {
				t.Fatalf("Stamp returned %q (len %d), want dst unchanged", out, len(out))
			}
			if !reflect.DeepEqual(f, Fields{}) {
				t.Fatalf("Fields = %+v, want zero on error", f)
			}
		})
	}
}

func TestStampErrorMessages(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"a":"\x"}`, `jsonscan: offset 7: invalid character 'x' in string escape: invalid JSON`},
		{`{"a":1,}`, `jsonscan: offset 7: invalid character '}' looking for beginning of object key string: invalid JSON`},
		{`{"a" 1}`, `jsonscan: offset 5: invalid character '1' after object key: invalid JSON`},
		{`{"a":01}`, `jsonscan: offset 6: invalid character '1' after object key:value pair: invalid JSON`},
		{`{"a":[1 2]}`, `jsonscan: offset 8: invalid character '2' after array element: invalid JSON`},
		{"{\"a\":\"\n\"}", `jsonscan: offset 6: invalid character '\n' in string literal: invalid JSON`},
		{`{"a":tru}`, `jsonscan: offset 8: invalid character '}' in literal true (expecting 'e'): invalid JSON`},
		{`{} x`, `jsonscan: offset 3: invalid character 'x' after top-level value: invalid JSON`},
		{`{"a":1`, `jsonscan: offset 6: unexpected end of JSON input: invalid JSON`},
		{``, `jsonscan: offset 0: unexpected end of JSON input: invalid JSON`},
		{` [1]`, `jsonscan: offset 1: top-level value is an array, not object: not a JSON object`},
		{`"s"`, `jsonscan: offset 0: top-level value is a string, not object: not a JSON object`},
		{`null`, `jsonscan: offset 0: top-level value is null, not object: not a JSON object`},
		{"{\"a\":é}", `jsonscan: offset 5: invalid character 'é' looking for beginning of value: invalid JSON`},
		{"{\"a\":\u00a0}", `jsonscan: offset 5: invalid character '\u00a0' looking for beginning of value: invalid JSON`},
		{"{\"a\":\"\xffx\"}", `jsonscan: offset 6: invalid UTF-8 byte 0xff: invalid UTF-8`},
		{`{"id":1,"\u0069d":2}`, `jsonscan: offset 8: duplicate key "\u0069d": duplicate member`},
		{`{"a":[[[[[[[[1]]]]]]]]}`, `jsonscan: offset 12: exceeded maximum nesting depth 8: nesting too deep`},
	}
	for _, tc := range tests {
		_, _, err := Stamp(nil, []byte(tc.in), testTS, testEtag, testMaxDepth)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Stamp(%q) error\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func TestStampFields(t *testing.T) {
	type want struct {
		idKind    Kind
		idRaw     string // raw id value; "" when absent
		idContent string // out[IDStart:IDEnd] for a string id
		idEscaped bool
		ttlKind   Kind
		ttlRaw    string
	}
	tests := []struct {
		in   string
		head string // expected out[:StampAt] relative to the dst prefix
		want want
	}{
		{`{}`, `{`, want{}},
		{`{"_ts":1,"_etag":"x"}`, `{`, want{}},
		{`{"a":1}`, `{"a":1`, want{}},
		{`{"a":1,"_ts":5}`, `{"a":1`, want{}},
		{`{"id":"abc"}`, `{"id":"abc"`, want{idKind: KindString, idRaw: `"abc"`, idContent: "abc"}},
		{`{ "id" : "" }`, `{"id" : ""`, want{idKind: KindString, idRaw: `""`, idContent: ""}},
		{`{"x":1, "id" :  "a\nb" ,"y":2}`, `{"x":1,"id" :  "a\nb","y":2`, want{idKind: KindString, idRaw: `"a\nb"`, idContent: `a\nb`, idEscaped: true}},
		{`{"\u0069d":"h\u00e9"}`, `{"\u0069d":"h\u00e9"`, want{idKind: KindString, idRaw: `"h\u00e9"`, idContent: `h\u00e9`, idEscaped: true}},
		{`{"id":"héllo"}`, `{"id":"héllo"`, want{idKind: KindString, idRaw: `"héllo"`, idContent: "héllo"}},
		{`{"id":42}`, `{"id":42`, want{idKind: KindNumber, idRaw: `42`}},
		{`{"id":-1.5e3}`, `{"id":-1.5e3`, want{idKind: KindNumber, idRaw: `-1.5e3`}},
		{`{"id":{"a":1}}`, `{"id":{"a":1}`, want{idKind: KindObject, idRaw: `{"a":1}`}},
		{`{"id":[ 1 ]}`, `{"id":[ 1 ]`, want{idKind: KindArray, idRaw: `[ 1 ]`}},
		{`{"id":true}`, `{"id":true`, want{idKind: KindTrue, idRaw: `true`}},
		{`{"id":false}`, `{"id":false`, want{idKind: KindFalse, idRaw: `false`}},
		{`{"id":null}`, `{"id":null`, want{idKind: KindNull, idRaw: `null`}},
		{`{"ttl":10}`, `{"ttl":10`, want{ttlKind: KindNumber, ttlRaw: `10`}},
		{`{"ttl":-1}`, `{"ttl":-1`, want{ttlKind: KindNumber, ttlRaw: `-1`}},
		{`{"ttl":1.5}`, `{"ttl":1.5`, want{ttlKind: KindNumber, ttlRaw: `1.5`}},
		{`{"ttl":"10"}`, `{"ttl":"10"`, want{ttlKind: KindString, ttlRaw: `"10"`}},
		{`{"ttl":null}`, `{"ttl":null`, want{ttlKind: KindNull, ttlRaw: `null`}},
		{`{"ttl":{}}`, `{"ttl":{}`, want{ttlKind: KindObject, ttlRaw: `{}`}},
		{`{"t\u0074l":true}`, `{"t\u0074l":true`, want{ttlKind: KindTrue, ttlRaw: `true`}},
		{`{"_ts":1,"ttl":3600,"_etag":"x","id":"doc-1","v":[{"id":2,"ttl":3}]}`, `{"ttl":3600,"id":"doc-1","v":[{"id":2,"ttl":3}]`,
			want{idKind: KindString, idRaw: `"doc-1"`, idContent: "doc-1", ttlKind: KindNumber, ttlRaw: `3600`}},
		{`{"a":1,"b":[2],"id":"xyz","c":3}`, `{"a":1,"b":[2],"id":"xyz","c":3`, want{idKind: KindString, idRaw: `"xyz"`, idContent: "xyz"}},
		{`{"_ts":0,"a":1,"b":[2], "id":"xyz","_etag":"","ttl":5}`, `{"a":1,"b":[2],"id":"xyz","ttl":5`,
			want{idKind: KindString, idRaw: `"xyz"`, idContent: "xyz", ttlKind: KindNumber, ttlRaw: "5"}},
		{`{"a":{"id":"x","ttl":1},"TTL":2,"Id":3}`, `{"a":{"id":"x","ttl":1},"TTL":2,"Id":3`, want{}},
	}
	for _, prefix := range []string{"", "PREFIX"} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("prefix=%q/%s", prefix, tc.in), func(t *testing.T) {
				src := []byte(tc.in)
				out, f, err := Stamp([]byte(prefix), src, testTS, testEtag, testMaxDepth)
				if err != nil {
					t.Fatalf("Stamp error: %v", err)
				}
				if !strings.HasPrefix(string(out), prefix) {
					t.Fatalf("output %q lost the dst prefix", out)
				}
				w := tc.want
				if f.IDKind != w.idKind || f.TTLKind != w.ttlKind {
					t.Fatalf("kinds = id %v, ttl %v; want id %v, ttl %v", f.IDKind, f.TTLKind, w.idKind, w.ttlKind)
				}
				checkRaw(t, "IDRaw", f.IDRaw, w.idRaw, w.idKind, src)
				checkRaw(t, "TTLRaw", f.TTLRaw, w.ttlRaw, w.ttlKind, src)
				if w.idKind == KindString {
					if got := string(out[f.IDStart:f.IDEnd]); got != w.idContent {
						t.Fatalf("out[IDStart:IDEnd] = %q, want %q", got, w.idContent)
					}
					if out[f.IDStart-1] != '"' || out[f.IDEnd] != '"' {
						t.Fatalf("IDStart/IDEnd = %d/%d do not sit inside quotes in %s", f.IDStart, f.IDEnd, out)
					}
				} else if f.IDStart != 0 || f.IDEnd != 0 {
					t.Fatalf("IDStart/IDEnd = %d/%d for a non-string id", f.IDStart, f.IDEnd)
				}
				if f.IDEscaped != w.idEscaped {
					t.Fatalf("IDEscaped = %v, want %v", f.IDEscaped, w.idEscaped)
				}
				if got := string(out[len(prefix):f.StampAt]); got != tc.head {
					t.Fatalf("out[:StampAt] = %s, want %s (out %s)", got, tc.head, out)
				}
				checkRestamp(t, []byte(prefix), src, out, f)
			})
		}
	}
}

func checkRaw(t *testing.T, name string, got []byte, want string, kind Kind, src []byte) {
	t.Helper()
	if kind == KindNone {
		if got != nil {
			t.Fatalf("%s = %q, want nil", name, got)
		}
		return
	}
	if string(got) != want {
		t.Fatalf("%s = %q, want %q", name, got, want)
	}
	if cap(got) != len(got) {
		t.Fatalf("%s has spare capacity %d", name, cap(got)-len(got))
	}
	// It must be a sub-slice of src.
	if len(got) > 0 {
		p := &got[0]
		found := false
		for i := range src {
			if &src[i] == p {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s is not a sub-slice of src", name)
		}
	}
}

func TestStampDepth(t *testing.T) {
	nest := func(depth int, open, close string) string {
		// A top-level object holding depth-1 nested containers.
		return `{"a":` + strings.Repeat(open, depth-1) + `1` + strings.Repeat(close, depth-1) + `}`
	}
	for _, maxDepth := range []int{1, 2, 5, 64, 65, 100, 1000, 10000} {
		for _, kind := range []struct{ name, open, close string }{
			{"arrays", "[", "]"},
			{"objects", `{"k":`, "}"},
		} {
			t.Run(fmt.Sprintf("%s/%d", kind.name, maxDepth), func(t *testing.T) {
				ok := nest(maxDepth, kind.open, kind.close)
				if maxDepth == 1 {
					ok = `{"a":1}`
				}
				if _, _, err := Stamp(nil, []byte(ok), 1, "e", maxDepth); err != nil {
					t.Fatalf("depth %d rejected: %v", maxDepth, err)
				}
				deep := nest(maxDepth+1, kind.open, kind.close)
				if _, _, err := Stamp(nil, []byte(deep), 1, "e", maxDepth); !errors.Is(err, ErrTooDeep) {
					t.Fatalf("depth %d with maxDepth %d: error %v, want ErrTooDeep", maxDepth+1, maxDepth, err)
				}
				arr := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
				if _, _, err := Stamp(nil, []byte(arr), 1, "e", maxDepth); !errors.Is(err, ErrNotObject) {
					t.Fatalf("top-level array of depth %d: error %v, want ErrNotObject", maxDepth, err)
				}
				arr = "[" + arr + "]"
				if _, _, err := Stamp(nil, []byte(arr), 1, "e", maxDepth); !errors.Is(err, ErrTooDeep) {
					t.Fatalf("top-level array of depth %d: error %v, want ErrTooDeep", maxDepth+1, err)
				}
			})
		}
	}
	for _, maxDepth := range []int{0, -1} {
		if _, _, err := Stamp(nil, []byte(`{}`), 1, "e", maxDepth); !errors.Is(err, ErrTooDeep) {
			t.Errorf("maxDepth %d: error %v, want ErrTooDeep", maxDepth, err)
		}
	}
	// Very deep invalid input must fail cleanly (no recursion).
	huge := strings.Repeat("[", 1<<20)
	if _, _, err := Stamp(nil, []byte(`{"a":`+huge), 1, "e", 1<<21); !errors.Is(err, ErrSyntax) {
		t.Errorf("huge unterminated input: error %v, want ErrSyntax", err)
	}
}

func TestStampDst(t *testing.T) {
	src := []byte(`{"id":"x","_ts":1}`)
	// dst with spare capacity is extended in place.
	buf := make([]byte, 2, 256)
	copy(buf, "ab")
	out, _, err := Stamp(buf, src, 5, "e", 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := `ab{"id":"x","_ts":5,"_etag":"e"}`; string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
	if &out[0] != &buf[0] {
		t.Fatalf("Stamp reallocated although dst had capacity")
	}
	// dst without capacity keeps its prefix.
	small := []byte("ab")
	out, _, err = Stamp(small[:2:2], src, 5, "e", 4)
	if err != nil || string(out) != `ab{"id":"x","_ts":5,"_etag":"e"}` {
		t.Fatalf("got %s, %v", out, err)
	}
}

func TestStampAllocs(t *testing.T) {
	src := []byte(benchDoc)
	dst := make([]byte, 0, len(src)+len(benchEtag)+39) // the documented minimum
	n := testing.AllocsPerRun(100, func() {
		if _, _, err := Stamp(dst[:0], src, 1700000000, benchEtag, 64); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("Stamp allocated %v times per run with a large enough dst", n)
	}
	esc := []byte(`{"\u0069d":"x","\u005f\u0065\u0074\u0061\u0067":1,"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`)
	n = testing.AllocsPerRun(100, func() {
		if _, _, err := Stamp(dst[:0], esc, 1, "e", 64); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("Stamp allocated %v times per run for escaped keys and nesting", n)
	}
}

func TestAppendStamp(t *testing.T) {
	tests := []struct {
		dst       string
		ts        int64
		etag      string
		needComma bool
		want      string
	}{
		{"{", 0, "", false, `{"_ts":0,"_etag":""}`},
		{`{"a":1`, 1700000000, "e-1", true, `{"a":1,"_ts":1700000000,"_etag":"e-1"}`},
		{"", -9223372036854775808, "x", false, `"_ts":-9223372036854775808,"_etag":"x"}`},
		{"", 9223372036854775807, "x", true, `,"_ts":9223372036854775807,"_etag":"x"}`},
	}
	for _, tc := range tests {
		if got := string(AppendStamp([]byte(tc.dst), tc.ts, tc.etag, tc.needComma)); got != tc.want {
			t.Errorf("AppendStamp(%q, %d, %q, %v) = %s, want %s", tc.dst, tc.ts, tc.etag, tc.needComma, got, tc.want)
		}
	}
	// The longest stamp fits in the space Stamp reserves.
	if n := len(AppendStamp(nil, -9223372036854775808, "", true)); n != maxStampLen {
		t.Errorf("longest stamp is %d bytes, maxStampLen is %d", n, maxStampLen)
	}
}

func TestKindString(t *testing.T) {
	want := map[Kind]string{
		KindNone: "absent", KindString: "string", KindNumber: "number", KindObject: "object",
		KindArray: "array", KindTrue: "true", KindFalse: "false", KindNull: "null", Kind(99): "Kind(99)",
	}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), s)
		}
	}
}

// unquoteCases are valid string literals.
var unquoteCases = []string{
	`""`,
	`"abc"`,
	`"\"\\\/\b\f\n\r\t"`,
	`"\u0041\u0062"`,
	`"\u00e9\u00E9"`,
	`"\u20AC"`,
	`"\u0000"`,
	`"\uD83D\uDE00"`,
	`"\ud83d\ude00"`,
	`"x\ud83d\ude00y"`,
	`"\ud83d"`,
	`"\ud83dx"`,
	`"\ude00"`,
	`"\ude00\ud83d"`,
	`"\ud83d\ud83d\ude00"`,
	`"\ud83d\u0041"`,
	`"\ud83d\n"`,
	`"\ud83d\\ude00"`,
	`"\uDBFF\uDFFF"`,
	`"\uD800\uDC00"`,
	`"\uFFFD\uFFFE\uFFFF"`,
	`"héllo ☃ 😀"`,
	"\"\xff\"",
	"\"a\xc3\"",
	"\"\xed\xa0\x80\"",
	"\"\\u0041\xff\"",
	"\"\x7f\"",
}

func TestUnquote(t *testing.T) {
	for _, raw := range unquoteCases {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("bad test case %q: %v", raw, err)
		}
		got, err := Unquote([]byte(raw))
		if err != nil {
			t.Errorf("Unquote(%q) error: %v", raw, err)
			continue
		}
		if got != want {
			t.Errorf("Unquote(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestUnquoteInvalid(t *testing.T) {
	for _, raw := range []string{
		``, `"`, `abc`, `"abc`, `"a"b"`, `"a" `, ` "a"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"\"`,
		"\"\x01\"", "\"a\nb\"", `'a'`, `1`, `null`, `"a""`,
	} {
		if s, err := Unquote([]byte(raw)); !errors.Is(err, ErrSyntax) {
			t.Errorf("Unquote(%q) = %q, %v; want ErrSyntax", raw, s, err)
		}
	}
}
