package wal_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ttlstore/ttlstore/internal/wal"
)

// readLost reads data as a log whose unsynced end may have lost blocks of
// block bytes (Reader.LostBlocks), as readAll reads a file.
func readLost(t *testing.T, data []byte, block int) result {
	t.Helper()
	r, err := wal.NewReader(bytes.NewReader(data), int64(len(data)), wal.KindLog, 1000)
	if err != nil {
		return result{err: err}
	}
	r.LostBlocks(block)
	var res result
	for {
		typ, p, err := r.Next()
		if err != nil {
			res.err, res.offset, res.torn = err, r.Offset(), r.Torn()
			return res
		}
		res.recs = append(res.recs, rec{typ, slices.Clone(p)})
	}
}

// goodBefore returns how many of the records whose ends are ends lie wholly
// before offset z, and where they end.
func goodBefore(ends []int64, z int64) (int, int64) {
	n, off := 0, int64(wal.HeaderSize)
	for n < len(ends) && ends[n] <= z {
		off = ends[n]
		n++
	}
	return n, off
}

// TestLostBlocks checks what a power loss can leave of a file appended
// through a mapping: zero bytes up to a block's end, where the kernel had
// not written the page back, with later blocks written. With LostBlocks the
// file reads as the records before the hole and a torn tail; without, as
// corrupt. Other damage is corrupt either way.
func TestLostBlocks(t *testing.T) {
	const block = 512
	rng := rand.New(rand.NewPCG(11, 12))
	recs := randomRecords(rng, 60, 300)
	for i := range recs {
		if len(recs[i].payload) == 0 {
			recs[i].payload = []byte{1} // no run of zero bytes but the holes
		}
		for j := range recs[i].payload {
			recs[i].payload[j] |= 1
		}
	}
	data, ends := build(wal.KindLog, recs)
	size := int64(len(data))
	for b := int64(block); b < size-block; b += block {
		t.Run(fmt.Sprintf("block at %d", b), func(t *testing.T) {
			d := slices.Clone(data)
			clear(d[b : b+block])
			n, off := goodBefore(ends, b)
			wantEnd(t, readLost(t, d, block), recs[:n], off, size-off)
			var ce *wal.CorruptError
			if res := readAll(t, d, wal.KindLog, 1000); !errors.As(res.err, &ce) {
				t.Fatalf("without LostBlocks: %v, want corrupt", res.err)
			}
		})
	}
	// A block written back with the synced end in it keeps zero bytes
	// from that end, a record's, to the block's end.
	for i, e := range ends[:len(ends)-3] {
		if e%block == 0 {
			continue
		}
		d := slices.Clone(data)
		clear(d[e : e-e%block+block])
		wantEnd(t, readLost(t, d, block), recs[:i+1], e, size-e)
	}
	t.Run("other damage is corrupt", func(t *testing.T) {
		for _, e := range ends[5:20] {
			d := slices.Clone(data)
			d[e+3] ^= 0x40 // in the record after e
			wantCorrupt(t, readLost(t, d, block), recsUpTo(recs, ends, e), e, "")
			// Zero bytes that reach no block's end (the byte before it
			// is not zero: a record header may end in zero bytes).
			d = slices.Clone(data)
			if to := e - e%block + block - 1; to > e+9 && d[to] != 0 {
				clear(d[e:to])
				wantCorrupt(t, readLost(t, d, block), recsUpTo(recs, ends, e), e, "")
			}
		}
	})
	t.Run("zero tail", func(t *testing.T) {
		d := append(slices.Clone(data), make([]byte, 3*block)...)
		res := readLost(t, d, block)
		if res.err != io.EOF || res.offset != size || len(res.recs) != len(recs) {
			t.Fatalf("got %v at %d after %d records, want io.EOF at %d after %d", res.err, res.offset, len(res.recs), size, len(recs))
		}
	})
}

// recsUpTo returns the records that end at or before e.
func recsUpTo(recs []rec, ends []int64, e int64) []rec {
	n, _ := goodBefore(ends, e)
	return recs[:n]
}
