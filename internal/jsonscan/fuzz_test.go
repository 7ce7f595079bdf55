package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"
)

// fuzzMaxDepth is the maximum depth used by the fuzz tests.
const fuzzMaxDepth = 64

// oracleMember is a top-level member as encoding/json sees it.
type oracleMember struct {
	key    string // decoded key
	member []byte // src from the key's opening quote to the end of the value
	value  []byte // raw value
}

// oracleMembers lists the top-level members of src, which must be a valid
// JSON object, using encoding/json's streaming decoder.
func oracleMembers(t *testing.T, src []byte) []oracleMember {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(src))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("oracle: first token %v, %v", tok, err)
	}
	var members []oracleMember
	for dec.More() {
		prev := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("oracle: key token: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			t.Fatalf("oracle: key token %T %v", tok, tok)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("oracle: value: %v", err)
		}
		end := int(dec.InputOffset())
		// Between the previous value and the key there are only whitespace
		// and the comma, so the first quote opens the key.
		start := prev + bytes.IndexByte(src[prev:], '"')
		if !bytes.HasSuffix(src[:end], raw) {
			t.Fatalf("oracle: value %q does not end at offset %d", raw, end)
		}
		members = append(members, oracleMember{key: key, member: src[start:end], value: raw})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		t.Fatalf("oracle: last token %v, %v", tok, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("oracle: trailing data: %v", err)
	}
	return members
}

// oracleDepth returns the maximum nesting depth of the valid JSON src.
func oracleDepth(src []byte) int {
	depth, maxDepth := 0, 0
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			maxDepth = max(maxDepth, depth)
		case '}', ']':
			depth--
		}
	}
	return maxDepth
}

// oracleKind returns the kind of the valid raw JSON value v.
func oracleKind(v []byte) Kind {
	switch v[0] {
	case '"':
		return KindString
	case '{':
		return KindObject
	case '[':
		return KindArray
	case 't':
		return KindTrue
	case 'f':
		return KindFalse
	case 'n':
		return KindNull
	}
	return KindNumber
}

// decodeMap decodes the valid JSON object src with encoding/json.
func decodeMap(t *testing.T, src []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %q: %v", src, err)
	}
	return m
}

func isSentinel(err error, sentinels ...error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func FuzzStamp(f *testing.F) {
	for _, tc := range validCases {
		f.Add([]byte(tc.in), int64(testTS))
	}
	for _, tc := range invalidCases {
		f.Add([]byte(tc.in), int64(-1))
	}
	for _, raw := range unquoteCases {
		f.Add([]byte(`{"id":`+raw+`,"ttl":`+raw+`}`), int64(0))
	}
	f.Add([]byte(benchDoc), int64(1700000000))
	f.Fuzz(func(t *testing.T, src []byte, ts int64) {
		const etag = "etag-1"
		prefix := []byte("PFX")
		srcCopy := bytes.Clone(src)
		dst := make([]byte, len(prefix), len(prefix)+int(ts&63)) // sometimes enough capacity
		copy(dst, prefix)

		out, fields, err := Stamp(dst, src, ts, etag, fuzzMaxDepth)

		if !bytes.Equal(src, srcCopy) {
			t.Fatalf("Stamp modified src")
		}

		// Strip is Stamp without the stamp: the same error, or the same
		// output up to StampAt and then '}', with the same Fields.
		sdst := make([]byte, len(prefix), len(prefix)+int(ts>>6&255))
		copy(sdst, prefix)
		sout, sfields, serr := Strip(sdst, src, fuzzMaxDepth)
		switch {
		case (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error():
			t.Fatalf("Strip error %v, Stamp error %v", serr, err)
		case err != nil:
			if !bytes.Equal(sout, prefix) {
				t.Fatalf("Strip failed but changed dst: %q", sout)
			}
		case !reflect.DeepEqual(sfields, fields):
			t.Fatalf("Strip fields %+v, Stamp fields %+v", sfields, fields)
		case string(sout) != string(out[:fields.StampAt])+"}":
			t.Fatalf("Strip = %q, want %q", sout, string(out[:fields.StampAt])+"}")
		case len(sout)-len(prefix) > len(src):
			t.Fatalf("Strip output %d bytes, longer than the %d of src", len(sout)-len(prefix), len(src))
		}

		// Work out what must happen.
		var wantErr error // nil: must succeed
		var allowed []error
		var members []oracleMember
		switch {
		case !utf8.Valid(src):
			wantErr = ErrInvalidUTF8
		case !json.Valid(src):
			wantErr = ErrSyntax
			allowed = []error{ErrSyntax, ErrTooDeep}
		default:
			depth := oracleDepth(src)
			trimmed := bytes.TrimLeft(src, " \t\r\n")
			if trimmed[0] != '{' {
				wantErr = ErrNotObject
				if depth > fuzzMaxDepth {
					allowed = []error{ErrNotObject, ErrTooDeep}
				}
				break
			}
			if depth > fuzzMaxDepth {
				wantErr = ErrTooDeep
				break
			}
			members = oracleMembers(t, src)
			nID, nTTL := 0, 0
			for _, m := range members {
				switch m.key {
				case "id":
					nID++
				case "ttl":
					nTTL++
				}
			}
			if nID > 1 || nTTL > 1 {
				wantErr = ErrDuplicateKey
			}
		}

		if wantErr != nil {
			if allowed == nil {
				allowed = []error{wantErr}
			}
			if !isSentinel(err, allowed...) {
				t.Fatalf("Stamp(%q) error = %v, want %v", src, err, allowed)
			}
			if len(out) != len(prefix) || !bytes.Equal(out, prefix) {
				t.Fatalf("on error Stamp returned %q, want dst unchanged", out)
			}
			if !reflect.DeepEqual(fields, Fields{}) {
				t.Fatalf("on error Fields = %+v, want zero", fields)
			}
			return
		}
		if err != nil {
			t.Fatalf("Stamp(%q) error: %v", src, err)
		}

		// Exact output: prefix, '{', kept members, stamp.
		want := bytes.Clone(prefix)
		want = append(want, '{')
		kept := 0
		var id, ttl *oracleMember
		for i := range members {
			m := &members[i]
			switch m.key {
			case "_ts", "_etag":
				continue
			case "id":
				id = m
			case "ttl":
				ttl = m
			}
			if kept > 0 {
				want = append(want, ',')
			}
			kept++
			want = append(want, m.member...)
		}
		stamp := fmt.Sprintf(`"_ts":%d,"_etag":"%s"}`, ts, etag)
		if kept > 0 {
			stamp = "," + stamp
		}
		want = append(want, stamp...)
		if !bytes.Equal(out, want) {
			t.Fatalf("Stamp(%q)\n got %q\nwant %q", src, out, want)
		}
		obj := out[len(prefix):]
		if !json.Valid(obj) {
			t.Fatalf("output %q is not valid JSON", obj)
		}

		// Semantically: src minus _ts/_etag plus the stamp.
		wantMap := decodeMap(t, src)
		delete(wantMap, "_ts")
		delete(wantMap, "_etag")
		wantMap["_ts"] = json.Number(strconv.FormatInt(ts, 10))
		wantMap["_etag"] = etag
		if gotMap := decodeMap(t, obj); !reflect.DeepEqual(gotMap, wantMap) {
			t.Fatalf("decoded output %v, want %v", gotMap, wantMap)
		}

		// Fields.
		if id == nil {
			if fields.IDKind != KindNone || fields.IDRaw != nil || fields.IDStart != 0 || fields.IDEnd != 0 || fields.IDEscaped {
				t.Fatalf("no id, but Fields = %+v", fields)
			}
		} else {
			if k := oracleKind(id.value); fields.IDKind != k || !bytes.Equal(fields.IDRaw, id.value) {
				t.Fatalf("id: got %v %q, want %v %q", fields.IDKind, fields.IDRaw, k, id.value)
			}
			if fields.IDKind == KindString {
				var s string
				if err := json.Unmarshal(id.value, &s); err != nil {
					t.Fatal(err)
				}
				u, err := Unquote(fields.IDRaw)
				if err != nil || u != s {
					t.Fatalf("Unquote(%q) = %q, %v; want %q", fields.IDRaw, u, err, s)
				}
				if fields.IDEscaped != (bytes.IndexByte(id.value, '\\') >= 0) {
					t.Fatalf("IDEscaped = %v for %q", fields.IDEscaped, id.value)
				}
				if content := out[fields.IDStart:fields.IDEnd]; !bytes.Equal(content, id.value[1:len(id.value)-1]) {
					t.Fatalf("out[IDStart:IDEnd] = %q, want %q", content, id.value[1:len(id.value)-1])
				}
				if !fields.IDEscaped && string(out[fields.IDStart:fields.IDEnd]) != s {
					t.Fatalf("out[IDStart:IDEnd] = %q, want %q", out[fields.IDStart:fields.IDEnd], s)
				}
			} else if fields.IDStart != 0 || fields.IDEnd != 0 || fields.IDEscaped {
				t.Fatalf("non-string id, but Fields = %+v", fields)
			}
		}
		if ttl == nil {
			if fields.TTLKind != KindNone || fields.TTLRaw != nil {
				t.Fatalf("no ttl, but Fields = %+v", fields)
			}
		} else if k := oracleKind(ttl.value); fields.TTLKind != k || !bytes.Equal(fields.TTLRaw, ttl.value) {
			t.Fatalf("ttl: got %v %q, want %v %q", fields.TTLKind, fields.TTLRaw, k, ttl.value)
		}

		// StampAt and restamping.
		if got := string(out[fields.StampAt:]); got != stamp {
			t.Fatalf("out[StampAt:] = %q, want %q", got, stamp)
		}
		const etag2 = "etag-2-longer"
		want2, _, err := Stamp(bytes.Clone(prefix), src, ts^1, etag2, fuzzMaxDepth)
		if err != nil {
			t.Fatalf("second Stamp: %v", err)
		}
		got2 := AppendStamp(out[:fields.StampAt:fields.StampAt], ts^1, etag2, out[fields.StampAt-1] != '{')
		if !bytes.Equal(got2, want2) {
			t.Fatalf("restamp\n got %q\nwant %q", got2, want2)
		}
	})
}

func FuzzUnquote(f *testing.F) {
	for _, raw := range unquoteCases {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := Unquote(raw)
		var want string
		jsonErr := json.Unmarshal(raw, &want)
		isLiteral := len(raw) > 0 && raw[0] == '"' && raw[len(raw)-1] == '"'
		switch {
		case jsonErr == nil && isLiteral:
			if err != nil || got != want {
				t.Fatalf("Unquote(%q) = %q, %v; want %q", raw, got, err, want)
			}
		case err == nil:
			t.Fatalf("Unquote(%q) = %q, want error (encoding/json: %v)", raw, got, jsonErr)
		case !errors.Is(err, ErrSyntax):
			t.Fatalf("Unquote(%q) error %v does not wrap ErrSyntax", raw, err)
		}
	})
}
