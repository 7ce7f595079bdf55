package wal_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ttlstore/ttlstore/internal/wal"
)

// fuzzMaxPayload is the payload limit FuzzReader reads with.
const fuzzMaxPayload = 1 << 12

// readChecked reads data as a log, as readAll does, and checks what must hold
// of any input: every record returned is exactly the bytes of the file where
// it was read, Offset never passes the size, and the end is io.EOF with
// Offset+Torn equal to the size, or a *CorruptError at Offset.
func readChecked(t *testing.T, data []byte) result {
	t.Helper()
	size := int64(len(data))
	r, err := wal.NewReader(bytes.NewReader(data), size, wal.KindLog, fuzzMaxPayload)
	if err != nil {
		var ce *wal.CorruptError
		if !errors.As(err, &ce) || ce.Offset != 0 {
			t.Fatalf("NewReader: %v, want a *CorruptError at offset 0", err)
		}
		return result{err: err}
	}
	var res result
	for {
		before := r.Offset()
		typ, p, err := r.Next()
		if r.Offset() > size || r.Offset()+r.Torn() > size {
			t.Fatalf("Offset %d, Torn %d past the size %d", r.Offset(), r.Torn(), size)
		}
		if err != nil {
			res.err, res.offset, res.torn = err, r.Offset(), r.Torn()
			var ce *wal.CorruptError
			switch {
			case err == io.EOF:
				if res.offset+res.torn != size {
					t.Fatalf("io.EOF with Offset %d + Torn %d != size %d", res.offset, res.torn, size)
				}
			case errors.As(err, &ce):
				if ce.Offset != res.offset || res.offset != before || res.torn != 0 {
					t.Fatalf("%v with Offset %d (was %d), Torn %d", err, res.offset, before, res.torn)
				}
			default:
				t.Fatalf("Next: %v", err)
			}
			return res
		}
		if typ == 0 {
			t.Fatalf("record of type 0 at offset %d", before)
		}
		if len(p) > fuzzMaxPayload {
			t.Fatalf("record of %d bytes at offset %d, past the limit", len(p), before)
		}
		enc := wal.AppendRecord(nil, typ, p)
		if r.Offset() != before+int64(len(enc)) || !bytes.Equal(enc, data[before:r.Offset()]) {
			t.Fatalf("record at offset %d re-encodes to %x, file has %x", before, enc, data[before:r.Offset()])
		}
		res.recs = append(res.recs, rec{typ, slices.Clone(p)})
	}
}

// sameResult checks that two reads of the same input agree.
func sameResult(t *testing.T, a, b result) {
	t.Helper()
	checkRecords(t, a.recs, b.recs)
	if a.offset != b.offset || a.torn != b.torn || a.err.Error() != b.err.Error() {
		t.Fatalf("second read ended %v at %d+%d, first %v at %d+%d", b.err, b.offset, b.torn, a.err, a.offset, a.torn)
	}
}

func FuzzReader(f *testing.F) {
	// More seeds are in testdata/fuzz/FuzzReader.
	rng := rand.New(rand.NewPCG(11, 12))
	data, ends := build(wal.KindLog, randomRecords(rng, 8, 40))
	f.Add(data)
	f.Add(data[:len(data)-3])
	f.Add(append(slices.Clone(data), make([]byte, 30)...))
	f.Add(setLength(data, ends[3], 1<<11))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := readChecked(t, data)
		sameResult(t, res, readChecked(t, data))
		if res.err != io.EOF {
			return
		}
		// Cutting the torn tail leaves a file that ends cleanly, and to
		// which records can be appended, as a writer does.
		cut := slices.Clone(data[:res.offset])
		if res.offset == 0 {
			cut = wal.AppendHeader(cut, wal.KindLog)
		}
		wantEnd(t, readChecked(t, cut), res.recs, int64(len(cut)), 0)
		cut = wal.AppendRecord(cut, 42, []byte("appended"))
		wantEnd(t, readChecked(t, cut), append(res.recs, rec{42, []byte("appended")}), int64(len(cut)), 0)
	})
}

// FuzzTruncateAndFlip generates a log, cuts it and flips one bit in what is
// left, and checks the Reader's verdict against what was done.
func FuzzTruncateAndFlip(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint32(1000), uint32(0), false)
	f.Add(uint64(2), uint8(20), uint32(5000), uint32(777), true)
	f.Add(uint64(3), uint8(3), uint32(40), uint32(130), true)
	f.Add(uint64(4), uint8(0), uint32(10), uint32(3), true)
	f.Fuzz(func(t *testing.T, seed uint64, count uint8, cut, flip uint32, doFlip bool) {
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		recs := randomRecords(rng, int(count%32), 1+rng.IntN(600))
		maxPayload := 600
		if seed&1 != 0 {
			maxPayload = 1 << 30
		}
		data, ends := build(wal.KindLog, recs)
		begin := starts(ends)
		c := int64(cut % uint32(len(data)+1))
		d := slices.Clone(data[:c])
		n := 0 // records complete before the cut
		for n < len(ends) && ends[n] <= c {
			n++
		}
		res := readAll(t, d, wal.KindLog, maxPayload)
		if !doFlip || c == 0 {
			if c < wal.HeaderSize {
				wantEnd(t, res, nil, 0, c)
			} else {
				wantEnd(t, res, recs[:n], begin[n], c-begin[n])
			}
			return
		}
		bit := int64(flip % uint32(c*8))
		i := bit / 8
		d[i] ^= 1 << (bit % 8)
		res = readAll(t, d, wal.KindLog, maxPayload)
		switch {
		case c < wal.HeaderSize:
			wantEnd(t, res, nil, 0, c)
		case i < wal.HeaderSize:
			wantCorrupt(t, res, nil, 0, "")
		default:
			k, _ := slices.BinarySearch(ends, i+1) // the record holding byte i
			if k+1 < n {
				// A complete record follows the damaged one.
				wantCorrupt(t, res, recs[:k], begin[k], "")
			} else if res.err == io.EOF {
				wantEnd(t, res, recs[:k], begin[k], c-begin[k])
			} else {
				wantCorrupt(t, res, recs[:k], begin[k], "")
			}
		}
	})
}
