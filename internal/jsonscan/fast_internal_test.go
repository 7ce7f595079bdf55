package jsonscan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fast path (fast.go) must agree with the reference scanner
// (scanObject) on every input: reject what it rejects, and for what it
// accepts produce the same bytes and the same Fields. It may decline valid
// input only when it nests deeper than maxFastDepth. These tests check that
// by running both on the same input, with no other oracle needed.

// refStamp is Stamp without the fast path: what Stamp did before it had one.
func refStamp(dst, src []byte, ts int64, etag string, maxDepth int) ([]byte, Fields, error) {
	out, f, err := scanObject(dst, src, maxDepth, maxStampLen+len(etag))
	if err != nil {
		if !utf8.Valid(src) {
			err = errInvalidUTF8(src)
		}
		return dst, Fields{}, err
	}
	return AppendStamp(out, ts, etag, f.StampAt > len(dst)+1), f, nil
}

// sameSlice reports whether a and b are both nil, or the same bytes of
// memory with the same capacity.
func sameSlice(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return len(a) == len(b) && cap(a) == cap(b) && (len(a) == 0 || &a[0] == &b[0])
}

// checkFast runs fastScan and the reference scanner on src and fails t if
// they disagree. It also checks that Stamp and Strip give exactly what the
// reference gives, errors included.
func checkFast(t *testing.T, src []byte, maxDepth int) {
	t.Helper()
	const prefix = "PFX"
	rout, rf, rerr := scanObject([]byte(prefix), src, maxDepth, 0)
	var ff Fields
	fout, ok := fastScan([]byte(prefix), src, maxDepth, 0, &ff)
	switch {
	case rerr != nil && ok:
		t.Fatalf("maxDepth %d: fastScan accepted %q, which the reference rejects: %v", maxDepth, src, rerr)
	case rerr == nil && !ok:
		if oracleDepth(src) <= maxFastDepth {
			t.Fatalf("maxDepth %d: fastScan declined valid %q", maxDepth, src)
		}
	case ok:
		if !bytes.Equal(fout, rout) {
			t.Fatalf("maxDepth %d: fastScan(%q)\n got %q\nwant %q", maxDepth, src, fout, rout)
		}
		if ff.IDKind != rf.IDKind || !sameSlice(ff.IDRaw, rf.IDRaw) || ff.IDStart != rf.IDStart ||
			ff.IDEnd != rf.IDEnd || ff.IDEscaped != rf.IDEscaped || ff.TTLKind != rf.TTLKind ||
			!sameSlice(ff.TTLRaw, rf.TTLRaw) || ff.StampAt != rf.StampAt {
			t.Fatalf("maxDepth %d: fastScan(%q) Fields\n got %+v\nwant %+v", maxDepth, src, ff, rf)
		}
	}

	// The public functions, against the reference.
	const ts, etag = 1700000000, "etag-1"
	wout, wf, werr := refStamp([]byte(prefix), src, ts, etag, maxDepth)
	out, f, err := Stamp([]byte(prefix), src, ts, etag, maxDepth)
	if fmt.Sprint(err) != fmt.Sprint(werr) || !bytes.Equal(out, wout) || fmt.Sprint(f) != fmt.Sprint(wf) {
		t.Fatalf("maxDepth %d: Stamp(%q) = %q, %+v, %v\nwant %q, %+v, %v", maxDepth, src, out, f, err, wout, wf, werr)
	}
	sout, sf, serr := Strip([]byte(prefix), src, maxDepth)
	if fmt.Sprint(serr) != fmt.Sprint(werr) || fmt.Sprint(sf) != fmt.Sprint(wf) ||
		(werr == nil && string(sout) != string(wout[:wf.StampAt])+"}") {
		t.Fatalf("maxDepth %d: Strip(%q) = %q, %+v, %v; Stamp gives %q, %v", maxDepth, src, sout, sf, serr, wout, werr)
	}
}

// fastSeeds are inputs for the fast path tests besides those of the other
// tests: one for each thing it handles in its own way.
var fastSeeds = []string{
	`{"id":"x"}`, `{"ttl":1}`, `{"_ts":1}`, `{"_etag":"e"}`, `{"i":1}`, `{"ttl":1,"id":2}`,
	`{"idx":1,"ttlx":1,"_tsx":1,"_etagx":1,"xid":1,"iD":1}`,
	`{"id":"0123456789abcdef","ttl":"0123456789abcdef"}`,
	`{"a":1,"_ts":2,"b":3}`, `{"a":1 ,"b":2}`, `{"a":1, "b":2}`, `{ "a":1,"b":2 }`,
	`{"a" : 1}`, `{"a":-1,"b":0,"c":-0.5e+3,"d":10.25,"e":1E5,"f":123456789012345678}`,
	`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`, `{"a":+1}`, `{"a":0x1}`,
	`{"a":[]}`, `{"a":{}}`, `{"a":[ ]}`, `{"a":{ }}`, `{"a":[}`, `{"a":{]}`, `{"a":[1,]}`, `{"a":{"b":1,}}`,
	`{"a":[1 2]}`, `{"a":{"b" 1}}`, `{"a":{"b":}}`, `{"a":{1:2}}`, `{"a":[[[]]]}`, `{"a":[{"b":[{}]}]}`,
	`{"a":tru}`, `{"a":nul}`, `{"a":fals}`, `{"a":true}`, `{"a":false}`, `{"a":null}`, `{"a":truex}`,
	`{"a":[true,false,null]}`, `{"a":"\u00e9\n\"\\\/\b\f\r\t"}`, `{"\u0069\u0064":1}`,
	"{\"a\":\"caf\xc3\xa9 \xe6\x9d\xb1 \xf0\x9f\x98\x80\"}", "{\"a\":\"\xc3\"}", "{\"a\":\"\xc0\x80\"}",
	"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xef\xbf\xbd\"}", "{\"a\":\"\x1f\"}", "{\"a\":\"\x7f\"}",
	"{\"a\":1}\n", "\t{\"a\":1}", `{"a":1}}`, `{"a":1}]`, `{"a":1} x`,
	`{"aaaaaaa":1,"aaaaaaaa":2,"aaaaaaaaa":3}`, `{"a":"aaaaaaa","b":"aaaaaaaa","c":"aaaaaaaaa"}`,
	`{"id":"a","id":"b"}`, `{"ttl":1,"ttl":2}`, `{"id":1,"_ts":2,"id":3}`,
}

// mutate returns variants of doc: truncated, with a byte replaced, inserted
// or deleted, at positions chosen by r.
func mutate(r *rand.Rand, doc []byte, n int) [][]byte {
	special := []byte("{}[]:,\"\\ \t\n\r0123456789-+.eEtfnul\x00\x1f\x7f\x80\xc3\xe2\xff")
	var out [][]byte
	for range n {
		if len(doc) == 0 {
			break
		}
		p := r.IntN(len(doc))
		c := special[r.IntN(len(special))]
		switch r.IntN(4) {
		case 0:
			out = append(out, doc[:p])
		case 1:
			m := bytes.Clone(doc)
			m[p] = c
			out = append(out, m)
		case 2:
			out = append(out, append(append(bytes.Clone(doc[:p]), c), doc[p:]...))
		default:
			out = append(out, append(bytes.Clone(doc[:p]), doc[p+1:]...))
		}
	}
	return out
}

// nestedSeeds returns fastSeeds and, for each seed {"a":X} whose value X
// ends before its last byte, the same value nested: in an array, in an
// object, and in both, since nested values are scanned by other code
// (skipNested) than top-level ones.
func nestedSeeds() []string {
	var seeds []string
	for _, s := range fastSeeds {
		seeds = append(seeds, s)
		if v, ok := strings.CutPrefix(s, `{"a":`); ok && strings.HasSuffix(v, "}") {
			v = v[:len(v)-1]
			seeds = append(seeds, `{"a":[`+v+`]}`, `{"a":[0,`+v+`,1]}`, `{"a":{"b":`+v+`}}`,
				`{"a":{"b":`+v+`,"c":1}}`, `{"a":[{"b":[`+v+`]}]}`)
		}
	}
	return seeds
}

func TestFastScanAgrees(t *testing.T) {
	var inputs [][]byte
	for _, s := range nestedSeeds() {
		inputs = append(inputs, []byte(s))
	}
	for _, tc := range validCases {
		inputs = append(inputs, []byte(tc.in))
	}
	for _, tc := range invalidCases {
		inputs = append(inputs, []byte(tc.in))
	}
	inputs = append(inputs, []byte(benchDoc))
	inputs = append(inputs, corpus(2, 100, 40, 400, false)...)
	inputs = append(inputs, corpus(3, 20, 400, 4096, false)...)
	inputs = append(inputs, corpus(4, 20, 40, 1024, true)...)

	r := rand.New(rand.NewPCG(5, 6))
	all := inputs
	for _, in := range inputs {
		all = append(all, mutate(r, in, 20)...)
	}
	for _, in := range all {
		for _, maxDepth := range []int{0, 1, 2, 3, 64} {
			checkFast(t, in, maxDepth)
		}
	}
}

func TestFastScanDepth(t *testing.T) {
	for _, depth := range []int{1, 2, maxFastDepth - 1, maxFastDepth, maxFastDepth + 1, 200} {
		for _, open := range []string{"[", `{"k":`} {
			close := map[string]string{"[": "]", `{"k":`: "}"}[open]
			inner := "1"
			if depth < 2 {
				inner = "1"
			}
			doc := `{"a":` + repeat(open, depth-2) + inner + repeat(close, depth-2) + `}`
			if depth == 1 {
				doc = `{"a":1}`
			}
			for _, maxDepth := range []int{depth - 1, depth, depth + 1, 1000} {
				checkFast(t, []byte(doc), maxDepth)
			}
		}
	}
}

func repeat(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return string(bytes.Repeat([]byte(s), n))
}

func TestFastScanAllocs(t *testing.T) {
	docs := corpus(7, 20, 40, 4096, false)
	dst := make([]byte, 0, 8192)
	for _, doc := range docs {
		if n := testing.AllocsPerRun(10, func() {
			if _, _, err := Stamp(dst[:0], doc, 1, benchEtag, 64); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Fatalf("Stamp allocated %v times for %q", n, doc)
		}
	}
}

func FuzzFastScan(f *testing.F) {
	for _, s := range nestedSeeds() {
		f.Add([]byte(s), uint8(64))
	}
	for _, tc := range validCases {
		f.Add([]byte(tc.in), uint8(testMaxDepth))
	}
	for _, tc := range invalidCases {
		f.Add([]byte(tc.in), uint8(testMaxDepth))
	}
	f.Add([]byte(benchDoc), uint8(64))
	for i, doc := range corpus(8, 30, 40, 1024, false) {
		f.Add(doc, uint8(i))
	}
	for _, doc := range corpus(9, 5, 40, 1024, true) {
		f.Add(doc, uint8(64))
	}
	f.Fuzz(func(t *testing.T, src []byte, maxDepth uint8) {
		checkFast(t, src, int(maxDepth))
	})
}

// TestStampGrowsOnce checks that Stamp and Strip allocate no more than the
// reference scanner alone (which grows a dst without room once): the fast
// path's growing of dst is not repeated when it gives up, as it does for
// the deep document.
func TestStampGrowsOnce(t *testing.T) {
	deep := `{"a":` + repeat("[", 100) + repeat("]", 100) + `}`
	for _, doc := range []string{benchDoc, deep} {
		src := []byte(doc)
		want := testing.AllocsPerRun(20, func() {
			if _, _, err := refStamp(nil, src, 1700000000, benchEtag, 200); err != nil {
				t.Fatal(err)
			}
		})
		if n := testing.AllocsPerRun(20, func() {
			if _, _, err := Stamp(nil, src, 1700000000, benchEtag, 200); err != nil {
				t.Fatal(err)
			}
		}); n > want {
			t.Errorf("Stamp allocated %v times for %.20q, the reference %v", n, doc, want)
		}
		if n := testing.AllocsPerRun(20, func() {
			if _, _, err := Strip(nil, src, 200); err != nil {
				t.Fatal(err)
			}
		}); n > want {
			t.Errorf("Strip allocated %v times for %.20q, the reference %v", n, doc, want)
		}
	}
}
