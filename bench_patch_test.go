package ttlstore_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore"
)

// BenchmarkPatch measures a patch of one field of a 1 KB document against
// an Upsert of the whole document and against what a caller does without
// patch: Read, decode, change, encode, ReplaceIfMatch. Issue 18's target: a
// patch costs at most 1.5x the Upsert. 10k documents, visited in a
// scattered order.
func BenchmarkPatch(b *testing.B) {
	const n = 10_000
	docs := make([][]byte, n)
	ids := make([]string, n)
	pad := strings.Repeat("lorem ipsum ", 70)
	for i := range docs {
		ids[i] = fmt.Sprintf("doc-%05d", i)
		docs[i] = fmt.Appendf(nil, `{"id":%q,"count":%d,"owner":"ada","tags":["a","b"],"text":%q}`, ids[i], i, pad)
	}
	setup := func(b *testing.B) *ttlstore.Collection {
		c := newBenchCollection(b, false)
		b.Cleanup(func() { c.Close() })
		for _, d := range docs {
			if _, err := c.Upsert(d); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		return c
	}
	at := func(i int) int { return (i * 7919) % n }
	b.Run("patch-set", func(b *testing.B) {
		c := setup(b)
		ops, _ := ttlstore.ParsePatch([]byte(`[{"op":"set","path":"/owner","value":"bob"}]`))
		for i := range b.N {
			if _, err := c.Patch(ids[at(i)], ops); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("patch-incr", func(b *testing.B) {
		c := setup(b)
		ops, _ := ttlstore.ParsePatch([]byte(`[{"op":"incr","path":"/count","value":1}]`))
		for i := range b.N {
			if _, err := c.Patch(ids[at(i)], ops); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("upsert", func(b *testing.B) {
		c := setup(b)
		for i := range b.N {
			if _, err := c.Upsert(docs[at(i)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-modify-replace", func(b *testing.B) {
		c := setup(b)
		for i := range b.N {
			d, err := c.Read(ids[at(i)])
			if err != nil {
				b.Fatal(err)
			}
			var v map[string]any
			if err := d.Decode(&v); err != nil {
				b.Fatal(err)
			}
			v["count"] = v["count"].(float64) + 1
			out, _ := json.Marshal(v)
			if _, err := c.ReplaceIfMatch(out, d.ETag()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
