package jsonscan

import (
	"encoding/json"
	"strings"
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

// BenchmarkStrip is BenchmarkStamp for Strip, which is what the store calls
// on every write.
func BenchmarkStrip(b *testing.B) {
	src := []byte(benchDoc)
	dst := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, f, err := Strip(dst[:0], src, 64)
		if err != nil || f.IDKind != KindString || f.TTLKind != KindNumber {
			b.Fatalf("Strip: %v %+v", err, f)
		}
		dst = out
	}
}

// BenchmarkStampCorpus stamps realistic documents (see corpus_test.go), 64
// of each size class taken in turn, so that the speed measured is not that
// of one document whose every branch the processor has learnt.
func BenchmarkStampCorpus(b *testing.B) {
	for _, c := range []struct {
		name   string
		lo, hi int
		pretty bool
	}{
		{"40B-200B", 40, 200, false},
		{"200B-1KiB", 200, 1024, false},
		{"1KiB-4KiB", 1024, 4096, false},
		{"indented-200B-1KiB", 200, 1024, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			docs := corpus(1, 64, c.lo, c.hi, c.pretty)
			total := 0
			for _, d := range docs {
				total += len(d)
			}
			dst := make([]byte, 0, 8192)
			b.ReportAllocs()
			b.SetBytes(int64(total / len(docs)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, _, err := Stamp(dst[:0], docs[i%len(docs)], 1700000000, benchEtag, 64)
				if err != nil {
					b.Fatal(err)
				}
				dst = out
			}
		})
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

// BenchmarkStripLongString is BenchmarkStrip for a document whose bulk is
// one long string value, as in bench's BenchmarkInsertFresh: the string
// scan's cost per byte.
func BenchmarkStripLongString(b *testing.B) {
	src := []byte(`{"id":"key-000042","value":"` + strings.Repeat("abcdefghijklmnopqrstuvwxyz", 7)[:170] + `"}`)
	dst := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, f, err := Strip(dst[:0], src, 64)
		if err != nil || f.IDKind != KindString {
			b.Fatalf("Strip: %v %+v", err, f)
		}
		dst = out
	}
}
