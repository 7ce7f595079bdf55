package patch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/ttlstore/ttlstore/internal/patch"
)

// The generators draw from small sets so that paths often hit what the
// document has, and numbers sit where exactness matters: beyond 2^53, at
// the int64 limits, near the float64 maximum.
var (
	genKeys   = []string{"a", "b", "c", "id", "ttl", "tenant", "-", "0", "1", "a/b", "m~n", "", "é", "_ts", `"q`, `\`}
	genSegs   = []string{"0", "1", "2", "3", "-", "01", "x", "9999999999999999999"}
	genInts   = []string{"0", "1", "-1", "42", "9007199254740993", "9223372036854775807", "-9223372036854775808", "9223372036854775806"}
	genFloats = []string{"1.5", "0.1", "-2.25", "1e2", "1.7e308", "1.0", "9223372036854775808", "-0", "2.50", "1E-7"}
	genProt   = [][]string{nil, nil, nil, nil, {"/tenant"}, {"/a/b"}, {"/a"}, {"/a~1b", "/c/0"}}
)

// genWS draws the whitespace between two tokens: mostly none.
func genWS(t *rapid.T) string {
	return rapid.SampledFrom([]string{"", "", "", "", " ", "\n\t"}).Draw(t, "ws")
}

// genNumber draws a JSON number.
func genNumber(t *rapid.T) string {
	if rapid.Bool().Draw(t, "int") {
		return rapid.SampledFrom(genInts).Draw(t, "intv")
	}
	return rapid.SampledFrom(genFloats).Draw(t, "float")
}

// genValue draws a JSON value as text, nested at most depth deep.
func genValue(t *rapid.T, depth int) string {
	kinds := 6
	if depth > 0 {
		kinds = 8
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0, 1:
		return genNumber(t)
	case 2:
		b, _ := json.Marshal(rapid.SampledFrom(genKeys).Draw(t, "str"))
		return string(b)
	case 3:
		return "true"
	case 4:
		return "false"
	case 5:
		return "null"
	case 6:
		return genObject(t, depth-1, 4)
	default:
		n := rapid.IntRange(0, 4).Draw(t, "len")
		var b strings.Builder
		b.WriteString("[" + genWS(t))
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString("," + genWS(t))
			}
			b.WriteString(genValue(t, depth-1) + genWS(t))
		}
		return b.String() + "]"
	}
}

// genObject draws a JSON object with up to max members (a name may repeat).
func genObject(t *rapid.T, depth, max int) string {
	n := rapid.IntRange(0, max).Draw(t, "members")
	var b strings.Builder
	b.WriteString("{" + genWS(t))
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("," + genWS(t))
		}
		k, _ := json.Marshal(rapid.SampledFrom(genKeys).Draw(t, "key"))
		b.WriteString(string(k) + genWS(t) + ":" + genWS(t) + genValue(t, depth) + genWS(t))
	}
	return b.String() + "}"
}

// escapeSegment writes a member name as a path segment.
func escapeSegment(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// genPath draws a path: mostly a walk down what doc has, sometimes
// anything.
func genPath(t *rapid.T, doc any) string {
	var segs []string
	cur := doc
	for {
		if rapid.IntRange(0, 3).Draw(t, "stop") == 0 && len(segs) > 0 {
			break
		}
		var next any
		switch c := cur.(type) {
		case *object:
			if len(c.keys) > 0 && rapid.IntRange(0, 4).Draw(t, "existing") > 0 {
				k := rapid.SampledFrom(c.keys).Draw(t, "member")
				segs, next = append(segs, k), c.vals[k]
			} else {
				segs = append(segs, rapid.SampledFrom(genKeys).Draw(t, "name"))
			}
		case *array:
			if len(c.elems) > 0 && rapid.IntRange(0, 3).Draw(t, "existing") > 0 {
				i := rapid.IntRange(0, len(c.elems)-1).Draw(t, "index")
				segs, next = append(segs, strconv.Itoa(i)), c.elems[i]
			} else {
				segs = append(segs, rapid.SampledFrom(genSegs).Draw(t, "seg"))
			}
		default: // below a scalar: sometimes, to see it fail
			if len(segs) == 0 || rapid.IntRange(0, 5).Draw(t, "below scalar") == 0 {
				segs = append(segs, rapid.SampledFrom(append(genKeys, genSegs...)).Draw(t, "any"))
			}
			next = nil
		}
		if next == nil || len(segs) > 4 {
			break
		}
		cur = next
	}
	var b strings.Builder
	for _, s := range segs {
		b.WriteString("/" + escapeSegment(s))
	}
	return b.String()
}

// genOps draws up to five operations, mostly well formed.
func genOps(t *rapid.T, doc any) []patch.Op {
	n := rapid.SampledFrom([]int{1, 1, 2, 2, 3, 5}).Draw(t, "ops")
	ops := make([]patch.Op, n)
	for i := range ops {
		o := patch.Op{Kind: patch.Kind(rapid.IntRange(1, 6).Draw(t, "op")), Path: genPath(t, doc)}
		switch o.Kind {
		case patch.Incr:
			if rapid.IntRange(0, 9).Draw(t, "number") > 0 {
				o.Value = json.RawMessage(genNumber(t))
			} else {
				o.Value = json.RawMessage(genValue(t, 1))
			}
		case patch.Move:
			o.From = genPath(t, doc)
		case patch.Remove:
		default:
			o.Value = json.RawMessage(genWS(t) + genValue(t, 2) + genWS(t))
		}
		if rapid.IntRange(0, 30).Draw(t, "malformed") == 0 {
			o.Value = json.RawMessage(`{"x":`)
		}
		ops[i] = o
	}
	return ops
}

// TestApplyMatchesReference applies random operation lists to random
// documents with Apply and with the reference implementation; both must
// fail on the same operation with the same sentinel, or both succeed with
// the same document, member order and numbers included; and a compact
// document stays compact. It runs rapid's
// check 40 times over (4,000 cases with rapid's default -rapid.checks of
// 100, about a third of them successful patches; 400 under -short).
func TestApplyMatchesReference(t *testing.T) {
	parts := 40
	if testing.Short() {
		parts = 4
	}
	for part := range parts {
		t.Run(strconv.Itoa(part), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				doc := []byte(genWS(t) + genObject(t, 3, 6) + genWS(t))
				decoded, err := refDecode(doc)
				if err != nil {
					t.Fatalf("generated an invalid document %s: %v", doc, err)
				}
				ops := genOps(t, decoded)
				protected := rapid.SampledFrom(genProt).Draw(t, "protected")
				checkAgainstReference(t, doc, ops, protected)
			})
		})
	}
}

// checkAgainstReference compares Apply with refApply on one input.
func checkAgainstReference(t interface {
	Helper()
	Fatalf(string, ...any)
}, doc []byte, ops []patch.Op, protected []string) {
	t.Helper()
	got, err := patch.Apply(doc, ops, protected...)
	if !json.Valid(doc) || !utf8.Valid(doc) {
		return // Apply does not validate the document; the caller vouches for it
	}
	want, wantIndex, wantErr := refApply(doc, ops, protected)
	if errors.Is(wantErr, errSkip) {
		return
	}
	if wantErr != nil {
		var e *patch.Error
		if got != nil || !errors.Is(err, wantErr) || !errors.As(err, &e) || e.Index != wantIndex {
			t.Fatalf("doc %s\nops %s\nprotected %q\nApply = %s, %v\nwant the error %v at operation %d", doc, showOps(ops), protected, got, err, wantErr, wantIndex)
		}
		return
	}
	if err != nil {
		t.Fatalf("doc %s\nops %s\nprotected %q\nApply: %v\nwant %s", doc, showOps(ops), protected, err, show(want))
	}
	// What Apply writes is compact: from a compact document comes a
	// compact document.
	var compactDoc, compactGot bytes.Buffer
	if err := json.Compact(&compactGot, got); err != nil {
		t.Fatalf("doc %s\nops %s\nApply = %s: not JSON (%v)", doc, showOps(ops), got, err)
	}
	_ = json.Compact(&compactDoc, doc)
	if bytes.Equal(compactDoc.Bytes(), doc) && !bytes.Equal(compactGot.Bytes(), got) {
		t.Fatalf("doc %s\nops %s\nApply = %s: not compact", doc, showOps(ops), got)
	}
	gotDecoded, err := refDecode(got)
	if err != nil || !refEqual(gotDecoded, want) {
		t.Fatalf("doc %s\nops %s\nprotected %q\nApply = %s\nwant    %s", doc, showOps(ops), protected, got, show(want))
	}
}

func showOps(ops []patch.Op) string {
	var b strings.Builder
	for _, o := range ops {
		b.WriteString("\n  " + o.Kind.String() + " " + strconv.Quote(o.Path))
		if o.From != "" {
			b.WriteString(" from " + strconv.Quote(o.From))
		}
		if o.Value != nil {
			b.WriteString(" " + string(o.Value))
		}
	}
	return b.String()
}

// show writes a decoded value back as JSON, for messages.
func show(v any) string {
	switch v := v.(type) {
	case *object:
		var b strings.Builder
		b.WriteString("{")
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(",")
			}
			kb, _ := json.Marshal(k)
			b.WriteString(string(kb) + ":" + show(v.vals[k]))
		}
		return b.String() + "}"
	case *array:
		parts := make([]string, len(v.elems))
		for i, e := range v.elems {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case json.Number:
		return string(v)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
