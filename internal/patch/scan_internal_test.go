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
