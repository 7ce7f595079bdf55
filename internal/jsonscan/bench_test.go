package jsonscan

import (
	"encoding/json"
	"testing"
)

// benchDoc is a realistic ~200-byte document with stale stamps.
const benchDoc = `{"id":"user-000123","ttl":3600,"name":"Ada Lovelace","email":"ada@example.com","tags":["a","b"],"score":12.5,"active":true,"address":{"city":"London","zip":"N1"},"_ts":1,"_etag":"x"}`

const benchEtag = "00000000-0000-0000-0000-000000000000"

func BenchmarkStamp(b *testing.B) {
	src := []byte(benchDoc)
	dst := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, f, err := Stamp(dst[:0], src, 1700000000, benchEtag, 64)
		if err != nil || f.IDKind != KindString || f.TTLKind != KindNumber {
			b.Fatalf("Stamp: %v %+v", err, f)
		}
		dst = out
	}
}

// BenchmarkRestamp measures rewriting only the stamp of a stored document.
func BenchmarkRestamp(b *testing.B) {
	out, f, err := Stamp(nil, []byte(benchDoc), 1700000000, benchEtag, 64)
	if err != nil {
		b.Fatal(err)
	}
	out = append(out, make([]byte, 64)...)[:len(out)]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out = AppendStamp(out[:f.StampAt], int64(i), benchEtag, true)
	}
}

// BenchmarkJSONValidBaseline is encoding/json's Valid on the same document,
// for comparison: validation alone, without stamping.
func BenchmarkJSONValidBaseline(b *testing.B) {
	src := []byte(benchDoc)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if !json.Valid(src) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkUnquote(b *testing.B) {
	raw := []byte(`"user-\u00e9\ud83d\ude00-000123"`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Unquote(raw); err != nil {
			b.Fatal(err)
		}
	}
}
