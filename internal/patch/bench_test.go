package patch_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/patch"
)

// benchDoc returns a document of 1 KB of compact JSON, of the shape of a
// session or profile: strings, numbers, a nested object, arrays.
func benchDoc() []byte {
	var b strings.Builder
	b.WriteString(`{"id":"user-0012345","tenant":"acme","name":"Ada Lovelace","email":"ada@example.com",`)
	b.WriteString(`"status":"active","visits":41,"score":12.5,"createdAt":"2026-01-02T03:04:05Z",`)
	b.WriteString(`"address":{"street":"12 Analytical Engine Road","city":"London","zip":"N1 7AA","country":"GB"},`)
	b.WriteString(`"prefs":{"theme":"dark","lang":"en-GB","notifications":{"email":true,"sms":false,"push":true}},`)
	b.WriteString(`"tags":["admin","beta","early-adopter","mathematics","poetry"],`)
	b.WriteString(`"counters":{"views":1024,"likes":77,"shares":3},`)
	b.WriteString(`"history":[`)
	for i := 0; i < 6; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"at":"2026-01-0%dT10:00:00Z","what":"login from 192.0.2.%d","ok":true}`, i+1, i+10)
	}
	b.WriteString(`],"note":"`)
	for b.Len() < 1024-2 {
		b.WriteString("x")
	}
	b.WriteString(`"}`)
	return []byte(b.String())
}

// BenchmarkApply1KB measures a patch of one field of a 1 KB document: the
// engine alone (way=apply), against an Upsert of the same document into a
// collection (way=upsert, the write a patch will cost on top of the
// engine) and against what a caller does without patch, decoding into a
// map, changing it and encoding again (way=decode-encode). The cases: a
// string member near the front (set), a number (incr), a number one level
// down (nested-incr), a member the document does not have (set-absent),
// and set again on a document holding a backslash, which makes every
// lookup walk its whole object (set-escaped). Compare the ways with
// ../shared/tools/interleave peers -pkg ./internal/patch
// -bench BenchmarkApply1KB -a way=apply -b way=upsert.
func BenchmarkApply1KB(b *testing.B) {
	doc := benchDoc()
	if len(doc) != 1024 || !json.Valid(doc) {
		b.Fatalf("benchDoc: %d bytes, valid %v", len(doc), json.Valid(doc))
	}
	// The same document with one escape in its last string: no shortcut
	// (see lookupMember), every lookup walks its whole object.
	escaped := bytes.Replace(doc, []byte(`xx"}`), []byte(`\n"}`), 1)
	cases := []struct {
		name string
		doc  []byte
		ops  []patch.Op
		edit func(map[string]any)
	}{
		{"set", doc, []patch.Op{{Kind: patch.Set, Path: "/status", Value: json.RawMessage(`"away"`)}},
			func(m map[string]any) { m["status"] = "away" }},
		{"incr", doc, []patch.Op{{Kind: patch.Incr, Path: "/visits", Value: json.RawMessage(`1`)}},
			func(m map[string]any) { m["visits"] = m["visits"].(float64) + 1 }},
		{"nested-incr", doc, []patch.Op{{Kind: patch.Incr, Path: "/counters/views", Value: json.RawMessage(`1`)}},
			func(m map[string]any) { c := m["counters"].(map[string]any); c["views"] = c["views"].(float64) + 1 }},
		{"set-absent", doc, []patch.Op{{Kind: patch.Set, Path: "/away", Value: json.RawMessage(`true`)}},
			func(m map[string]any) { m["away"] = true }},
		{"set-escaped", escaped, []patch.Op{{Kind: patch.Set, Path: "/status", Value: json.RawMessage(`"away"`)}},
			func(m map[string]any) { m["status"] = "away" }},
	}
	for _, tc := range cases {
		doc := tc.doc
		b.Run(tc.name+"/way=apply", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for range b.N {
				if _, err := patch.Apply(doc, tc.ops, "/tenant"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/way=upsert", func(b *testing.B) {
			c, err := ttlstore.New(ttlstore.Options{SweepInterval: ttlstore.ManualSweep})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for range b.N {
				if _, err := c.Upsert(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/way=decode-encode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for range b.N {
				var m map[string]any
				if err := json.Unmarshal(doc, &m); err != nil {
					b.Fatal(err)
				}
				tc.edit(m)
				if _, err := json.Marshal(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
