package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// A generator of realistic documents, for the benchmarks and for the
// differential tests of the fast path: objects of a given size with an id,
// usually a ttl, often the stale _ts and _etag a stored document carries,
// and members of every kind, including strings with escapes and non-ASCII
// text, numbers of every form, and nested objects and arrays.

// corpusWords are the ASCII words strings are made of.
var corpusWords = []string{
	"alpha", "beta", "gamma", "user", "order", "item", "status", "active",
	"pending", "London", "Paris", "example.com", "2024-05-01T12:00:00Z",
	"a", "b", "x", "N1", "GB", "de_DE", "https://example.com/p?q=1",
}

// corpusText are strings that need escaping or are not ASCII.
var corpusText = []string{
	`line one\nline two`, `say \"hi\"`, `C:\\path\\to`, `tab\tsep`,
	`caf\u00e9`, `\ud83d\ude00`, "Zürich", "東京都", "emoji 😀", "naïve café",
	"Ελληνικά", "привет мир", `\/slash`,
}

// corpusKeys are member names.
var corpusKeys = []string{
	"name", "email", "tags", "score", "active", "address", "city", "zip",
	"createdAt", "updatedAt", "items", "qty", "price", "meta", "note",
	"description", "owner", "geo", "lat", "lng", "v", "k", "count",
}

type corpusGen struct {
	r *rand.Rand
}

func (g corpusGen) str(b []byte) []byte {
	b = append(b, '"')
	switch g.r.IntN(8) {
	case 0:
		b = append(b, corpusText[g.r.IntN(len(corpusText))]...)
	case 1: // long
		for k := 0; k < 8+g.r.IntN(16); k++ {
			if k > 0 {
				b = append(b, ' ')
			}
			b = append(b, corpusWords[g.r.IntN(len(corpusWords))]...)
		}
	default:
		b = append(b, corpusWords[g.r.IntN(len(corpusWords))]...)
		if g.r.IntN(3) == 0 {
			b = append(b, '-')
			b = strconv.AppendInt(b, g.r.Int64N(1e6), 10)
		}
	}
	return append(b, '"')
}

func (g corpusGen) number(b []byte) []byte {
	switch g.r.IntN(7) {
	case 0:
		return strconv.AppendInt(b, -g.r.Int64N(1000), 10)
	case 1:
		return strconv.AppendFloat(b, g.r.Float64()*1000, 'f', 2, 64)
	case 2:
		return strconv.AppendFloat(b, g.r.NormFloat64()*1e-5, 'g', -1, 64)
	case 3:
		return append(b, '0')
	case 4:
		return strconv.AppendInt(b, 1_600_000_000+g.r.Int64N(1e8), 10)
	default:
		return strconv.AppendInt(b, g.r.Int64N(100), 10)
	}
}

func (g corpusGen) value(b []byte, depth int) []byte {
	k := g.r.IntN(20)
	if depth >= 4 && k >= 16 {
		k = 0
	}
	switch {
	case k < 8:
		return g.str(b)
	case k < 12:
		return g.number(b)
	case k == 12:
		return append(b, "true"...)
	case k == 13:
		return append(b, "false"...)
	case k == 14:
		return append(b, "null"...)
	case k == 15 || k == 16:
		b = append(b, '[')
		for j := range g.r.IntN(5) {
			if j > 0 {
				b = append(b, ',')
			}
			b = g.value(b, depth+1)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for j := range g.r.IntN(5) {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, corpusKeys[g.r.IntN(len(corpusKeys))])
			b = append(b, ':')
			b = g.value(b, depth+1)
		}
		return append(b, '}')
	}
}

// doc returns a compact document of about size bytes (at least the id,
// ttl and stamp members), or an indented one if pretty.
func (g corpusGen) doc(size int, pretty bool) []byte {
	b := fmt.Appendf(nil, `{"id":"doc-%d"`, g.r.IntN(1e6))
	if g.r.IntN(4) != 0 {
		b = fmt.Appendf(b, `,"ttl":%d`, g.r.IntN(86400))
	}
	stamp := g.r.IntN(2) == 0
	tail := 0
	if stamp {
		tail = len(`,"_ts":1700000000,"_etag":"00000000-0000-0000-0000-000000000000"`)
	}
	for len(b)+tail+1 < size {
		b = append(b, ',')
		b = strconv.AppendQuote(b, corpusKeys[g.r.IntN(len(corpusKeys))])
		b = append(b, ':')
		b = g.value(b, 1)
	}
	if stamp {
		b = fmt.Appendf(b, `,"_ts":%d,"_etag":"%08x-0000-0000-0000-000000000000"`, 1_700_000_000+g.r.IntN(1e6), g.r.Uint32())
	}
	b = append(b, '}')
	if pretty {
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", "  "); err != nil {
			panic(err)
		}
		b = out.Bytes()
	}
	return b
}

// corpus returns n documents of sizes spread evenly between lo and hi bytes,
// the same for the same seed.
func corpus(seed uint64, n, lo, hi int, pretty bool) [][]byte {
	g := corpusGen{rand.New(rand.NewPCG(seed, 0x6a736f6e))}
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = g.doc(lo+g.r.IntN(hi-lo+1), pretty)
		if !json.Valid(docs[i]) {
			panic(fmt.Sprintf("corpus: invalid document %q", docs[i]))
		}
	}
	return docs
}
