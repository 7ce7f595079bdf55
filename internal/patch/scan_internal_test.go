package patch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// scanCorpus is a set of inputs on both sides of the JSON and UTF-8 rules.
var scanCorpus = []string{
	`{}`, `[]`, `0`, `-0`, `1`, `-1`, `1.5`, `-1.5e10`, `1E+2`, `1e-2`, `123456789012345678901234567890`,
	`"a"`, `""`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u00e9"`, `"\uD83D\uDE00"`, `"\ud800"`, `"é"`, `"😀"`,
	`true`, `false`, `null`, ` { "a" : [ 1 , 2 ] } `, `{"a":{"b":{"c":[[[]]]}}}`, `[1,"a",{"b":null},[true,false]]`,
	`{"a":1,"a":2}`, `{"":0}`, "{\"a\":1}\n",
	// invalid
	``, ` `, `{`, `}`, `[`, `]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a" 1}`, `{a:1}`,
	`01`, `-`, `+1`, `1.`, `.5`, `1e`, `1e+`, `0x10`, `1 2`, `NaN`, `Infinity`, `-Infinity`, `tru`, `nul`, `falsey`,
	`"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"\x01\"", "\"\x1f\"", "\"\t\"", "\"\xff\"", "\"\xc3\"", "\"\xed\xa0\x80\"", "\"\xc0\xaf\"",
	`[1]]`, `{"a":1}}`, `[{]}`, `[}`, `{]`, `{"a":[}`, `"a"b`, `{"a":1 "b":2}`, `[1 2]`, "\x00", "[\x00]", `{"a":1}x`,
	strings.Repeat("[", 100) + strings.Repeat("]", 100), strings.Repeat("[", 100) + strings.Repeat("]", 99),
	strings.Repeat(`{"a":`, 50) + `1` + strings.Repeat("}", 50),
	`"` + strings.Repeat("abcdefgh", 10) + `"`, `"` + strings.Repeat("abcdefg\"", 3) + `"`,
	`"` + strings.Repeat("é", 20) + `"`, `"` + strings.Repeat("a", 7) + "\xff" + `"`,
}

// validJSON is the scanner's specification: encoding/json's grammar, and
// valid UTF-8 everywhere.
func validJSON(b []byte) bool { return json.Valid(b) && utf8.Valid(b) }

func TestScanWholeMatchesEncodingJSON(t *testing.T) {
	for _, s := range scanCorpus {
		checkScan(t, []byte(s))
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range scanCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}

// checkScan checks scanWhole and appendCompact on b against encoding/json.
func checkScan(t *testing.T, b []byte) {
	t.Helper()
	v, ws, err := scanWhole(b)
	if want := validJSON(b); (err == nil) != want {
		t.Fatalf("scanWhole(%q): err = %v, want valid = %v", b, err, want)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(v, bytes.TrimSpace(b)) && !bytes.Equal(v, bytes.Trim(b, " \t\r\n")) {
		t.Fatalf("scanWhole(%q) = %q, want it without surrounding whitespace", b, v)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, b); err != nil {
		t.Fatal(err)
	}
	got := appendCompact(nil, v)
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("appendCompact(%q) = %q, want %q", v, got, want.Bytes())
	}
	if hasWS := !bytes.Equal(v, want.Bytes()); ws != hasWS {
		t.Fatalf("scanWhole(%q): ws = %v, want %v", b, ws, hasWS)
	}
}

func TestStopBytes(t *testing.T) {
	// Every byte value in every position of a word of otherwise plain bytes
	// is flagged exactly when a string scan must stop at it.
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			m := stopBytes(uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56)
			stop := c < 0x20 || c == '"' || c == '\\' || c >= 0x80
			lowest := -1
			for i := 0; i < 8; i++ {
				if m>>(8*i+7)&1 != 0 {
					lowest = i
					break
				}
			}
			if stop && lowest != pos || !stop && m != 0 {
				t.Fatalf("byte %#x at %d: mask %#x", c, pos, m)
			}
		}
	}
}

// The skipping functions Apply walks documents with must find the end of
// every valid value exactly, and on any bytes at all must stay in bounds
// and move forward.
func checkSkip(t *testing.T, b []byte) {
	t.Helper()
	for i := range b {
		end := skipValue(b, i)
		if end != -1 && (end <= i || end > len(b)) {
			t.Fatalf("skipValue(%q, %d) = %d", b, i, end)
		}
	}
	v, _, err := scanWhole(b)
	if err != nil {
		return
	}
	if end := skipValue(v, 0); end != len(v) {
		t.Fatalf("skipValue(%q, 0) = %d, want %d", v, end, len(v))
	}
	if v[0] == '{' {
		p, f := rootOf(v)
		if f != nil {
			t.Fatalf("rootOf(%q): %v", v, f.detail)
		}
		// Every member found by name is the last of that name, with or
		// without the shortcut that counts quoted names; a name no member
		// has is absent.
		members := listMembers(v)
		last := map[string]int{}
		for _, m := range members {
			last[m.name] = m.key
		}
		for name, want := range last {
			s, f := lookupMember(v, p, name)
			if f != nil || s.dups == 0 || s.found.key != want {
				t.Fatalf("lookupMember(%q, %q) = %+v, %v; want the member at %d", v, name, s, f, want)
			}
		}
		for _, name := range []string{"zz", "a\"", ""} {
			if _, ok := last[name]; ok {
				continue
			}
			if s, f := lookupMember(v, p, name); f != nil || s.dups != 0 || s.after != len(v)-1-trailingWS(v[:len(v)-1]) {
				t.Fatalf("lookupMember(%q, %q) = %+v, %v; want it absent", v, name, s, f)
			}
		}
	}
}

// trailingWS counts the whitespace bytes at the end of b.
func trailingWS(b []byte) int {
	n := 0
	for n < len(b) && isWS(b[len(b)-1-n]) {
		n++
	}
	return n
}

type testMember struct {
	key  int // offset of the key's opening quote
	name string
}

// listMembers lists the members of the valid object v with the validating
// scanner, which shares nothing with lookupMember.
func listMembers(v []byte) []testMember {
	var out []testMember
	i := skipWS(v, 1)
	for i < len(v) && v[i] == '"' {
		end, esc, _ := scanString(v, i)
		name, _ := stringValue(v[i:end], esc)
		out = append(out, testMember{i, name})
		j := skipWS(v, skipWS(v, end)+1)
		end, _, _ = scanValue(v, j)
		if i = skipWS(v, end); v[i] == ',' {
			i = skipWS(v, i+1)
		}
	}
	return out
}

func TestSkip(t *testing.T) {
	for _, s := range scanCorpus {
		checkSkip(t, []byte(s))
	}
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":"\"a\"","a":3}`, `{"x":"\"a\"","a":3}`, `{"a":{"a":1},"b":2}`, `{"":1,"":2}`} {
		checkSkip(t, []byte(s))
	}
}

func FuzzSkip(f *testing.F) {
	for _, s := range scanCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkSkip(t, b) })
}
