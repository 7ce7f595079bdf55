package wal_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore/internal/wal"
)

// rec is a record as a test sees it.
type rec struct {
	typ     byte
	payload []byte
}

// build returns a file of kind holding recs, and the end offset of each
// record (the start of record i is ends[i-1], or HeaderSize for i == 0).
func build(kind wal.Kind, recs []rec) (data []byte, ends []int64) {
	data = wal.AppendHeader(nil, kind)
	for _, r := range recs {
		data = wal.AppendRecord(data, r.typ, r.payload)
		ends = append(ends, int64(len(data)))
	}
	return data, ends
}

// starts returns the start offset of each record, given their ends, and
// then the end of the last: starts(ends)[n] is where the good data ends
// after n records.
func starts(ends []int64) []int64 {
	return append([]int64{wal.HeaderSize}, ends...)
}

// randomRecords returns n records with random types and payloads of 0 to
// maxLen bytes, some of them empty.
func randomRecords(rng *rand.Rand, n, maxLen int) []rec {
	recs := make([]rec, n)
	for i := range recs {
		size := rng.IntN(maxLen + 1)
		if rng.IntN(8) == 0 {
			size = 0
		}
		p := make([]byte, size)
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		recs[i] = rec{typ: byte(1 + rng.IntN(255)), payload: p}
	}
	return recs
}

// result is everything a Reader said about a file.
type result struct {
	recs   []rec
	err    error // what stopped it: io.EOF, or the error of NewReader or Next
	offset int64 // Offset at the end
	torn   int64 // Torn at the end
}

// readAll reads data as a file of kind to its end.
func readAll(t testing.TB, data []byte, kind wal.Kind, maxPayload int) result {
	t.Helper()
	r, err := wal.NewReader(bytes.NewReader(data), int64(len(data)), kind, maxPayload)
	if err != nil {
		return result{err: err}
	}
	var res result
	for {
		typ, p, err := r.Next()
		if err != nil {
			res.err, res.offset, res.torn = err, r.Offset(), r.Torn()
			if typ != 0 || p != nil {
				t.Fatalf("Next returned type %d and %d bytes with error %v", typ, len(p), err)
			}
			if _, _, again := r.Next(); again != err {
				t.Fatalf("Next after %v returned %v", err, again)
			}
			// ZeroTail: a torn tail after a header, of zero bytes only.
			tail := data[min(res.offset, int64(len(data))):]
			zero := err == io.EOF && res.offset > 0 && res.torn > 0 && !slices.ContainsFunc(tail, func(b byte) bool { return b != 0 })
			if r.ZeroTail() != zero {
				t.Fatalf("ZeroTail %v with Offset %d, Torn %d, error %v", r.ZeroTail(), res.offset, res.torn, err)
			}
			return res
		}
		res.recs = append(res.recs, rec{typ, slices.Clone(p)})
	}
}

// wantEnd checks that res read want and then ended with io.EOF at offset
// with torn bytes after it.
func wantEnd(t *testing.T, res result, want []rec, offset, torn int64) {
	t.Helper()
	if res.err != io.EOF {
		t.Fatalf("ended with %v, want io.EOF", res.err)
	}
	checkRecords(t, res.recs, want)
	if res.offset != offset || res.torn != torn {
		t.Fatalf("Offset %d, Torn %d; want %d, %d", res.offset, res.torn, offset, torn)
	}
}

// wantCorrupt checks that res read want and then ended with a
// *CorruptError at offset whose reason contains reason.
func wantCorrupt(t *testing.T, res result, want []rec, offset int64, reason string) {
	t.Helper()
	var ce *wal.CorruptError
	if !errors.As(res.err, &ce) || !errors.Is(res.err, wal.ErrCorrupt) {
		t.Fatalf("ended with %v, want a *CorruptError", res.err)
	}
	checkRecords(t, res.recs, want)
	if ce.Offset != offset {
		t.Fatalf("corrupt at offset %d, want %d (%v)", ce.Offset, offset, ce)
	}
	if !strings.Contains(ce.Reason, reason) {
		t.Fatalf("reason %q does not contain %q", ce.Reason, reason)
	}
	if res.torn != 0 || (offset > 0 && res.offset != offset) {
		t.Fatalf("after %v: Offset %d, Torn %d", ce, res.offset, res.torn)
	}
}

// checkRecords checks that got and want are the same records.
func checkRecords(t *testing.T, got, want []rec) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].typ != want[i].typ || !bytes.Equal(got[i].payload, want[i].payload) {
			t.Fatalf("record %d: type %d, %d bytes; want type %d, %d bytes", i,
				got[i].typ, len(got[i].payload), want[i].typ, len(want[i].payload))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 3<<20/2) // larger than the read buffer
	for i := range big {
		big[i] = byte(i*7 + 1)
	}
	tests := []struct {
		name string
		kind wal.Kind
		recs []rec
	}{
		{"header only", wal.KindLog, nil},
		{"one empty payload", wal.KindLog, []rec{{1, nil}}},
		{"empty payloads", wal.KindSnapshot, []rec{{1, nil}, {255, []byte{}}, {7, nil}}},
		{"every type", wal.KindLog, func() []rec {
			var recs []rec
			for typ := 1; typ <= 255; typ++ {
				recs = append(recs, rec{byte(typ), []byte{byte(typ)}})
			}
			return recs
		}()},
		{"random small", wal.KindLog, randomRecords(rng, 2000, 300)},
		{"random large", wal.KindSnapshot, randomRecords(rng, 100, 70000)},
		{"larger than the buffer", wal.KindLog, []rec{{1, []byte("a")}, {2, big}, {3, nil}, {4, big[:1<<20]}, {5, []byte("z")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, _ := build(tt.kind, tt.recs)
			res := readAll(t, data, tt.kind, len(big))
			wantEnd(t, res, tt.recs, int64(len(data)), 0)
		})
	}
}

func TestBeginEndRecord(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"one byte", []byte("x")},
		{"700 bytes", bytes.Repeat([]byte("payload"), 100)},
	}
	for _, tt := range tests {
		payload := tt.payload
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("prefix")
			want := wal.AppendRecord(slices.Clone(prefix), 9, payload)
			dst, start := wal.BeginRecord(slices.Clone(prefix))
			if start != len(prefix) {
				t.Fatalf("start %d, want %d", start, len(prefix))
			}
			dst = append(dst, payload...)
			if got := wal.EndRecord(dst, start, 9); !bytes.Equal(got, want) {
				t.Fatalf("BeginRecord+EndRecord = %x, AppendRecord = %x", got, want)
			}
			if len(want) != len(prefix)+wal.RecordHeaderSize+len(payload) {
				t.Fatalf("record of %d bytes for a payload of %d", len(want)-len(prefix), len(payload))
			}
		})
	}
}

func TestEncodingDoesNotAllocate(t *testing.T) {
	payload := bytes.Repeat([]byte("p"), 250)
	buf := make([]byte, 0, 4096)
	tests := []struct {
		name string
		fn   func()
	}{
		{"AppendHeader", func() { buf = wal.AppendHeader(buf[:0], wal.KindLog) }},
		{"AppendRecord", func() { buf = wal.AppendRecord(buf[:0], 1, payload) }},
		{"BeginRecord+EndRecord", func() {
			dst, start := wal.BeginRecord(buf[:0])
			buf = wal.EndRecord(append(dst, payload...), start, 1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.fn); n != 0 {
				t.Fatalf("%v allocations, want 0", n)
			}
		})
	}
}

func TestMisusePanics(t *testing.T) {
	tests := []struct {
		name string
		fn   func()
	}{
		{"AppendRecord type 0", func() { wal.AppendRecord(nil, 0, nil) }},
		{"EndRecord type 0", func() {
			dst, start := wal.BeginRecord(nil)
			wal.EndRecord(dst, start, 0)
		}},
		{"EndRecord start past the buffer", func() { wal.EndRecord(make([]byte, 8), 0, 1) }},
		{"EndRecord negative start", func() { wal.EndRecord(make([]byte, 20), -1, 1) }},
		{"AppendHeader kind 0", func() { wal.AppendHeader(nil, 0) }},
		{"AppendHeader kind 3", func() { wal.AppendHeader(nil, 3) }},
		{"NewReader kind 0", func() { _, _ = wal.NewReader(bytes.NewReader(nil), 0, 0, 10) }},
		{"NewReader negative size", func() { _, _ = wal.NewReader(bytes.NewReader(nil), -1, wal.KindLog, 10) }},
		{"NewReader negative maxPayload", func() { _, _ = wal.NewReader(bytes.NewReader(nil), 0, wal.KindLog, -1) }},
		{"TrimTorn before the end", func() {
			data, _ := build(wal.KindLog, nil)
			r, _ := wal.NewReader(bytes.NewReader(data), int64(len(data)), wal.KindLog, 10)
			_ = wal.TrimTorn(&fakeFile{}, r)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("did not panic")
				}
			}()
			tt.fn()
		})
	}
}

// header returns a header of kind with byte i set to v, and its CRC
// recomputed when fixCRC is set.
func header(kind wal.Kind, i int, v byte, fixCRC bool) []byte {
	h := wal.AppendHeader(nil, kind)
	h[i] = v
	if fixCRC {
		sum := crc32c(h[:12])
		h[12], h[13], h[14], h[15] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
	}
	return h
}

func TestHeader(t *testing.T) {
	valid := wal.AppendHeader(nil, wal.KindLog)
	oneRecord, _ := build(wal.KindLog, []rec{{1, []byte("x")}})
	zeros := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		name   string
		data   []byte
		torn   bool   // no header, torn: Offset 0, Torn len(data)
		reason string // else corrupt at offset 0 with this reason
	}{
		{"empty file", nil, true, ""},
		{"1 byte of header", valid[:1], true, ""},
		{"15 bytes of header", valid[:15], true, ""},
		{"short garbage", []byte("hello"), true, ""},
		{"15 zero bytes", zeros(15), true, ""},
		{"16 zero bytes", zeros(16), true, ""},
		{"zero blocks", zeros(8192), true, ""},
		{"zero header then a non-zero byte", append(zeros(100), 1), false, "zeroed header followed by a non-zero byte at offset 100"},
		{"zero header then a record", append(zeros(16), oneRecord[16:]...), false, "zeroed header"},
		{"bad magic", header(wal.KindLog, 0, 'T', true), false, "bad magic"},
		{"bad crc", header(wal.KindLog, 15, valid[15]^0x40, false), false, "header crc mismatch"},
		{"flipped kind", header(wal.KindLog, 8, 2, false), false, "header crc mismatch"},
		{"unknown version", header(wal.KindLog, 9, 2, true), false, "unknown version 2"},
		{"version 0", header(wal.KindLog, 9, 0, true), false, "unknown version 0"},
		{"snapshot read as a log", wal.AppendHeader(nil, wal.KindSnapshot), false, "file kind snapshot, want log"},
		{"unknown kind", header(wal.KindLog, 8, 7, true), false, "file kind Kind(7), want log"},
		{"reserved bytes", header(wal.KindLog, 11, 1, true), false, "reserved bytes 0x0100, want 0"},
		{"bad magic then records", append(header(wal.KindLog, 3, 0, true), oneRecord[16:]...), false, "bad magic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, tt.data, wal.KindLog, 100)
			if tt.torn {
				wantEnd(t, res, nil, 0, int64(len(tt.data)))
				return
			}
			wantCorrupt(t, res, nil, 0, tt.reason)
			if msg := res.err.Error(); !strings.HasPrefix(msg, "wal: corrupt header at offset 0: ") {
				t.Fatalf("message %q", msg)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		wantEnd(t, readAll(t, valid, wal.KindLog, 100), nil, wal.HeaderSize, 0)
		snap := wal.AppendHeader(nil, wal.KindSnapshot)
		wantEnd(t, readAll(t, snap, wal.KindSnapshot, 100), nil, wal.HeaderSize, 0)
	})
}

// crc32c is CRC-32C, computed bit by bit so as not to share code with the
// package.
func crc32c(b []byte) uint32 {
	crc := ^uint32(0)
	for _, c := range b {
		crc ^= uint32(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82f63b78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

func TestCRCIsCastagnoli(t *testing.T) {
	// The check value of CRC-32C, and a record checked by hand.
	if got := crc32c([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("reference CRC-32C = %#x", got)
	}
	r := wal.AppendRecord(nil, 3, []byte("abc"))
	want := crc32c(append(slices.Clone(r[:5]), "abc"...))
	if got := uint32(r[5]) | uint32(r[6])<<8 | uint32(r[7])<<16 | uint32(r[8])<<24; got != want {
		t.Fatalf("record CRC %#x, want %#x", got, want)
	}
	if !bytes.Equal(r[:5], []byte{3, 0, 0, 0, 3}) {
		t.Fatalf("record header %x", r[:5])
	}
	h := wal.AppendHeader(nil, wal.KindSnapshot)
	if !bytes.Equal(h[:12], []byte("ttlstore\x02\x01\x00\x00")) || !bytes.Equal(h, header(wal.KindSnapshot, 0, 't', true)) {
		t.Fatalf("header %q", h)
	}
}

// TestTruncated cuts a log at every byte offset: the Reader returns the
// records complete before the cut, then io.EOF with the rest torn.
func TestTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := randomRecords(rng, 12, 120)
	recs = append(recs, rec{1, nil}, rec{2, bytes.Repeat([]byte{0}, 40)}, rec{3, []byte("last")})
	data, ends := build(wal.KindLog, recs)
	for _, maxPayload := range []int{200, 1 << 30} {
		for cut := 0; cut <= len(data); cut++ {
			t.Run(fmt.Sprintf("max=%d/cut=%d", maxPayload, cut), func(t *testing.T) {
				n := 0
				for n < len(ends) && ends[n] <= int64(cut) {
					n++
				}
				off := int64(wal.HeaderSize)
				if n > 0 {
					off = ends[n-1]
				}
				if cut < wal.HeaderSize {
					off = 0
				}
				res := readAll(t, data[:cut], wal.KindLog, maxPayload)
				wantEnd(t, res, recs[:n], off, int64(cut)-off)
			})
		}
	}
}

// TestZeroTail checks that zero bytes after the records, or over their end,
// are a torn tail.
func TestZeroTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := randomRecords(rng, 6, 100)
	recs = append(recs, rec{4, bytes.Repeat([]byte{0xff}, 30)}, rec{5, []byte("the end")})
	data, ends := build(wal.KindLog, recs)
	size := int64(len(data))
	for _, n := range []int{1, 8, 9, 10, 100, 4096, 1<<20 + 5} {
		t.Run(fmt.Sprintf("append %d", n), func(t *testing.T) {
			res := readAll(t, append(slices.Clone(data), make([]byte, n)...), wal.KindLog, 200)
			wantEnd(t, res, recs, size, int64(n))
		})
	}
	for _, n := range []int{9, 1000, 1<<20 + 5} {
		t.Run(fmt.Sprintf("append %d then garbage", n), func(t *testing.T) {
			d := append(slices.Clone(data), make([]byte, n)...)
			d = append(d, 'x')
			want := fmt.Sprintf("zeroed record header followed by a non-zero byte at offset %d", len(d)-1)
			wantCorrupt(t, readAll(t, d, wal.KindLog, 200), recs, size, want)
		})
	}
	// Overwrite the last k bytes with zeros, as a crash may leave blocks
	// that were allocated but not written.
	first := ends[len(ends)-4] // zero into the last three records
	for k := 1; k <= len(data)-int(first); k++ {
		t.Run(fmt.Sprintf("zero last %d", k), func(t *testing.T) {
			d := slices.Clone(data)
			clear(d[len(d)-k:])
			n := 0 // records untouched
			for n < len(ends) && bytes.Equal(d[:ends[n]], data[:ends[n]]) {
				n++
			}
			off := int64(wal.HeaderSize)
			if n > 0 {
				off = ends[n-1]
			}
			res := readAll(t, d, wal.KindLog, 200)
			wantEnd(t, res, recs[:n], off, size-off)
		})
	}
	t.Run("appended zeros then a record", func(t *testing.T) {
		d := append(slices.Clone(data), make([]byte, 20)...)
		d = wal.AppendRecord(d, 1, []byte("after the gap"))
		wantCorrupt(t, readAll(t, d, wal.KindLog, 200), recs, size, "zeroed record header")
	})
}

// TestDamagedLastRecord checks the judgement of a last record whose CRC does
// not match: torn if nothing but zeros follows, else corrupt.
func TestDamagedLastRecord(t *testing.T) {
	recs := []rec{{1, []byte("first")}, {2, []byte("second")}, {3, []byte("third record")}}
	data, ends := build(wal.KindLog, recs)
	last := ends[1]
	damage := func(d []byte) []byte { d[len(data)-3] ^= 0x10; return d }
	tests := []struct {
		name   string
		data   []byte
		reason string // "" for torn
	}{
		{"at the end", damage(slices.Clone(data)), ""},
		{"followed by zeros", append(damage(slices.Clone(data)), make([]byte, 50)...), ""},
		{"followed by garbage", append(damage(slices.Clone(data)), 0, 0, 1), "crc mismatch"},
		{"followed by a record", wal.AppendRecord(damage(slices.Clone(data)), 4, []byte("x")), "crc mismatch"},
		{"type zeroed", func() []byte { d := slices.Clone(data); d[last+4] = 0; return d }(), ""},
		{"type zeroed then zeros", func() []byte {
			d := slices.Clone(data)
			clear(d[last+4:])
			return append(d, make([]byte, 5)...)
		}(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, tt.data, wal.KindLog, 100)
			if tt.reason == "" {
				wantEnd(t, res, recs[:2], last, int64(len(tt.data))-last)
				return
			}
			wantCorrupt(t, res, recs[:2], last, tt.reason)
		})
	}
}

// withType returns the record r with its type byte set to typ and its CRC
// recomputed.
func withType(r []byte, typ byte) []byte {
	r = slices.Clone(r)
	r[4] = typ
	sum := crc32c(append(slices.Clone(r[:5]), r[9:]...))
	r[5], r[6], r[7], r[8] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
	return r
}

func TestTypeZero(t *testing.T) {
	head, ends := build(wal.KindLog, []rec{{1, []byte("ok")}})
	zero := withType(wal.AppendRecord(nil, 1, []byte("zero")), 0)
	tail := wal.AppendRecord(nil, 2, []byte("after"))
	tests := []struct {
		name string
		data []byte
	}{
		{"in the middle", slices.Concat(head, zero, tail)},
		{"at the end", slices.Concat(head, zero)},
		{"followed by zeros", slices.Concat(head, zero, make([]byte, 30))},
		{"empty payload", slices.Concat(head, withType(wal.AppendRecord(nil, 1, nil), 0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, tt.data, wal.KindLog, 100)
			wantCorrupt(t, res, []rec{{1, []byte("ok")}}, ends[0], "record type 0")
		})
	}
}

// TestBitFlips flips every bit of a log in turn. A flip in the header or in
// a record followed by another is corrupt at the start of the damaged
// record; a flip in the last record is torn or corrupt there. A damaged
// record is never returned.
func TestBitFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	recs := randomRecords(rng, 10, 60)
	recs = append(recs, rec{9, nil}, rec{10, []byte("tail")})
	data, ends := build(wal.KindLog, recs)
	for _, maxPayload := range []int{100, 1 << 30} {
		t.Run(fmt.Sprintf("max=%d", maxPayload), func(t *testing.T) {
			testBitFlips(t, data, recs, ends, maxPayload)
		})
	}
}

// testBitFlips flips every bit of data, a log of recs, in turn.
func testBitFlips(t *testing.T, data []byte, recs []rec, ends []int64, maxPayload int) {
	t.Helper()
	begin := starts(ends)
	for bit := 0; bit < len(data)*8; bit++ {
		d := slices.Clone(data)
		d[bit/8] ^= 1 << (bit % 8)
		res := readAll(t, d, wal.KindLog, maxPayload)
		i := int64(bit / 8)
		if i < wal.HeaderSize {
			var ce *wal.CorruptError
			if !errors.As(res.err, &ce) || ce.Offset != 0 {
				t.Fatalf("bit %d: %v, want corrupt header", bit, res.err)
			}
			continue
		}
		k, _ := slices.BinarySearch(ends, i+1) // the record holding byte i
		if len(res.recs) != k {
			t.Fatalf("bit %d in record %d: read %d records (%v)", bit, k, len(res.recs), res.err)
		}
		checkRecords(t, res.recs, recs[:k])
		var ce *wal.CorruptError
		switch {
		case errors.As(res.err, &ce):
			if ce.Offset != begin[k] || res.offset != begin[k] {
				t.Fatalf("bit %d in record %d at %d: %v, Offset %d", bit, k, begin[k], ce, res.offset)
			}
		case res.err == io.EOF && k == len(recs)-1:
			if res.offset != begin[k] || res.torn != int64(len(d))-begin[k] {
				t.Fatalf("bit %d in the last record: Offset %d Torn %d", bit, res.offset, res.torn)
			}
		default:
			t.Fatalf("bit %d in record %d of %d: %v, want corrupt", bit, k, len(recs), res.err)
		}
	}
}

// setLength returns a copy of data with the length of the record at off set
// to n.
func setLength(data []byte, off int64, n uint32) []byte {
	d := slices.Clone(data)
	d[off], d[off+1], d[off+2], d[off+3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return d
}

// TestAbsurdLength checks that lengths past the limit are corrupt wherever
// they are, that lengths past the end of the file are judged by what follows,
// and that the Reader never allocates for a length it has not checked.
func TestAbsurdLength(t *testing.T) {
	recs := []rec{{1, []byte("one")}, {2, []byte("two")}, {3, []byte("three")}}
	data, ends := build(wal.KindLog, recs)
	begin := starts(ends)
	tests := []struct {
		name       string
		data       []byte
		maxPayload int
		n          int    // records read
		reason     string // "" for torn at begin[n]
	}{
		{"max uint32 in the middle", setLength(data, begin[1], math.MaxUint32), 1 << 20, 1, "length 4294967295 exceeds the limit 1048576"},
		{"max uint32 at the end", setLength(data, begin[2], math.MaxUint32), 1 << 20, 2, "length 4294967295 exceeds the limit 1048576"},
		{"limit+1 at the end", setLength(data, begin[2], 101), 100, 2, "length 101 exceeds the limit 100"},
		{"max uint32 under the largest limit", setLength(data, begin[2], math.MaxUint32), math.MaxInt, 2, ""},
		{"2 GiB at the end", setLength(data, begin[2], 1<<31), math.MaxInt, 2, ""},
		{"2 GiB in the middle", setLength(data, begin[1], 1<<31), math.MaxInt, 1,
			fmt.Sprintf("length 2147483648 runs past the end of the file at offset %d, and an intact record follows at offset %d", len(data), begin[2])},
		{"2 GiB header only", slices.Concat(data, []byte{0, 0, 0, 0x80, 1, 2, 3, 4, 5}), math.MaxInt, 3, ""},
		{"2 GiB header with a bad limit", slices.Concat(data, []byte{0, 0, 0, 0x80, 1, 2, 3, 4, 5}), 1 << 30, 3, "exceeds the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, tt.data, wal.KindLog, tt.maxPayload)
			if tt.reason == "" {
				wantEnd(t, res, recs[:tt.n], begin[tt.n], int64(len(tt.data))-begin[tt.n])
			} else {
				wantCorrupt(t, res, recs[:tt.n], begin[tt.n], tt.reason)
			}
			// The read buffer is the size of the file, so everything the
			// Reader allocates is a small multiple of it.
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 10 {
				readAll(t, tt.data, wal.KindLog, tt.maxPayload)
			}
			runtime.ReadMemStats(&after)
			if perRead := (after.TotalAlloc - before.TotalAlloc) / 10; perRead > 64<<10 {
				t.Fatalf("a read of %d bytes allocated %d bytes", len(tt.data), perRead)
			}
		})
	}
}

// TestDamagedLength checks rules 5 and 6 when a record's length field is
// damaged so that the record seems to end elsewhere: the records it swallows
// show the damage.
func TestDamagedLength(t *testing.T) {
	a := rec{1, []byte("middle record")}
	b := rec{2, append([]byte("zero padded"), make([]byte, 40)...)}
	data, ends := build(wal.KindLog, []rec{a, b})
	la := uint32(len(a.payload))
	tests := []struct {
		name   string
		length uint32
		reason string // "" for torn
	}{
		{"shorter", la - 1, "crc mismatch"},
		{"zero", 0, "crc mismatch"},
		// Ends among the zeros of b: everything after is zero, but b is
		// intact if the zeros after the claimed end are counted.
		{"into the zeros of the next record", la + wal.RecordHeaderSize + 20,
			fmt.Sprintf("crc mismatch, and an intact record follows at offset %d", ends[0])},
		{"to the end of the file", la + wal.RecordHeaderSize + uint32(len(b.payload)),
			fmt.Sprintf("crc mismatch, and an intact record follows at offset %d", ends[0])},
		{"past the end of the file", la + 1000,
			fmt.Sprintf("runs past the end of the file at offset %d, and an intact record follows at offset %d", len(data), ends[0])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, setLength(data, wal.HeaderSize, tt.length), wal.KindLog, 1<<20)
			wantCorrupt(t, res, nil, wal.HeaderSize, tt.reason)
		})
	}
	t.Run("last record into zeros", func(t *testing.T) {
		// The same damage to the last record, with only zeros after it:
		// nothing shows it is not a torn write.
		d := append(slices.Clone(data), make([]byte, 100)...)
		d = setLength(d, ends[0], uint32(len(b.payload))+50)
		wantEnd(t, readAll(t, d, wal.KindLog, 1<<20), []rec{a}, ends[0], int64(len(d))-ends[0])
	})
}

// TestSearchBudget checks that a torn record whose bytes pass for record
// headers by the thousand does not make the search for intact records
// quadratic: the Reader gives up and calls it corrupt.
func TestSearchBudget(t *testing.T) {
	// Every 8 bytes a header of type 1 and length 65535, within the file.
	unit := []byte{0xff, 0xff, 0, 0, 1, 0, 0, 0}
	data := wal.AppendRecord(nil, 1, bytes.Repeat(unit, 4<<20/len(unit)))
	data = setLength(data, 0, 8<<20) // and cut short
	data = append(wal.AppendHeader(nil, wal.KindLog), data...)
	res := readAll(t, data, wal.KindLog, 16<<20)
	wantCorrupt(t, res, nil, wal.HeaderSize, "too many record headers follow it")
}

// failingReader fails every read at or after offset at.
type failingReader struct {
	data []byte
	at   int64
	err  error
}

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) <= f.at {
		return copy(p, f.data[off:]), nil
	}
	n := 0
	if off < f.at {
		n = copy(p, f.data[off:f.at])
	}
	return n, f.err
}

var errInjected = errors.New("injected")

func TestReadErrors(t *testing.T) {
	recs := []rec{{1, []byte("one")}, {2, bytes.Repeat([]byte("two"), 100)}, {3, []byte("three")}}
	data, ends := build(wal.KindLog, recs)
	tests := []struct {
		name    string
		at      int64 // reads fail from here
		err     error
		n       int // records read
		wantErr error
	}{
		{"header", 3, errInjected, 0, errInjected},
		{"second record", ends[0] + 20, errInjected, 1, errInjected},
		{"shorter than its size", ends[1] + 2, io.EOF, 2, io.ErrUnexpectedEOF},
		{"shorter than its size in the header", 10, io.EOF, 0, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ra := failingReader{data, tt.at, tt.err}
			r, err := wal.NewReader(ra, int64(len(data)), wal.KindLog, 1000)
			var got []rec
			for err == nil {
				var typ byte
				var p []byte
				typ, p, err = r.Next()
				if err == nil {
					got = append(got, rec{typ, slices.Clone(p)})
				}
			}
			checkRecords(t, got, recs[:tt.n])
			if !errors.Is(err, tt.wantErr) || errors.Is(err, wal.ErrCorrupt) || err == io.EOF {
				t.Fatalf("error %v, want one wrapping %v", err, tt.wantErr)
			}
			if r != nil {
				if _, _, again := r.Next(); again != err {
					t.Fatalf("Next after %v returned %v", err, again)
				}
			}
		})
	}
	t.Run("zero tail unreadable", func(t *testing.T) {
		d := append(slices.Clone(data), make([]byte, 100)...)
		r, err := wal.NewReader(failingReader{d, int64(len(d)) - 10, errInjected}, int64(len(d)), wal.KindLog, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, _, err = r.Next()
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("error %v, want the injected one", err)
		}
	})
}

func TestCorruptError(t *testing.T) {
	err := error(&wal.CorruptError{Offset: 1234, Reason: "crc mismatch"})
	if got, want := err.Error(), "wal: corrupt record at offset 1234: crc mismatch"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("%s: %w", "log.0001", err)
	var ce *wal.CorruptError
	if !errors.Is(wrapped, wal.ErrCorrupt) || !errors.As(wrapped, &ce) || ce.Offset != 1234 {
		t.Fatalf("%v does not match ErrCorrupt and *CorruptError", wrapped)
	}
	if errors.Is(io.EOF, wal.ErrCorrupt) {
		t.Fatal("io.EOF matches ErrCorrupt")
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[wal.Kind]string{wal.KindLog: "log", wal.KindSnapshot: "snapshot", 0: "Kind(0)", 9: "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
}

// fakeFile records truncations.
type fakeFile struct {
	sizes []int64
	err   error
}

func (f *fakeFile) Truncate(size int64) error {
	f.sizes = append(f.sizes, size)
	return f.err
}

func TestTrimTorn(t *testing.T) {
	recs := []rec{{1, []byte("one")}, {2, []byte("two")}}
	data, ends := build(wal.KindLog, recs)
	tests := []struct {
		name    string
		data    []byte
		cut     []int64 // truncations expected
		wantErr error
	}{
		{"clean", data, nil, nil},
		{"torn", data[:len(data)-1], []int64{ends[0]}, nil},
		{"zero tail", append(slices.Clone(data), 0, 0, 0), []int64{ends[1]}, nil},
		{"no header", make([]byte, 10), []int64{0}, nil},
		{"empty", nil, nil, nil},
		{"corrupt", wal.AppendRecord(setLength(data, ends[0], 2), 3, nil), nil, wal.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := wal.NewReader(bytes.NewReader(tt.data), int64(len(tt.data)), wal.KindLog, 100)
			if err != nil {
				t.Fatal(err)
			}
			for err == nil {
				_, _, err = r.Next()
			}
			f := &fakeFile{}
			if err := wal.TrimTorn(f, r); !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("TrimTorn: %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(f.sizes, tt.cut) {
				t.Fatalf("truncated to %v, want %v", f.sizes, tt.cut)
			}
		})
	}
	t.Run("truncate fails", func(t *testing.T) {
		d := data[:len(data)-1]
		r, _ := wal.NewReader(bytes.NewReader(d), int64(len(d)), wal.KindLog, 100)
		for _, _, err := r.Next(); err == nil; _, _, err = r.Next() {
		}
		if err := wal.TrimTorn(&fakeFile{err: errInjected}, r); !errors.Is(err, errInjected) {
			t.Fatalf("TrimTorn: %v, want the injected error", err)
		}
	})
	t.Run("os.File", func(t *testing.T) {
		name := filepath.Join(t.TempDir(), "log")
		torn := append(data[:len(data)-2:len(data)-2], 0, 0, 0, 0)
		if err := os.WriteFile(name, torn, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(name, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := wal.NewReader(f, int64(len(torn)), wal.KindLog, 100)
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, _, err = r.Next()
		}
		if err != io.EOF || r.Torn() != int64(len(torn))-ends[0] {
			t.Fatalf("%v, Torn %d", err, r.Torn())
		}
		if err := wal.TrimTorn(f, r); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(wal.AppendRecord(nil, 7, []byte("again"))); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		wantEnd(t, readAll(t, got, wal.KindLog, 100), []rec{recs[0], {7, []byte("again")}}, int64(len(got)), 0)
	})
}
