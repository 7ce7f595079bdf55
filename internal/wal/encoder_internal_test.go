package wal

import (
	"hash/crc32"
	"testing"
)

// TestCheckRecordLimit checks the payload limit without allocating 4 GiB.
func TestCheckRecordLimit(t *testing.T) {
	tests := []struct {
		name  string
		typ   byte
		n     uint64
		panic bool
	}{
		{"empty", 1, 0, false},
		{"at the limit", 255, MaxPayload, false},
		{"past the limit", 1, MaxPayload + 1, true},
		{"type 0", 0, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover() != nil; got != tt.panic {
					t.Fatalf("panicked: %v, want %v", got, tt.panic)
				}
			}()
			checkRecord(tt.typ, tt.n)
		})
	}
}

// recordCRC is the CRC-32C of the 5 header bytes followed by the payload,
// for payloads of every length up to 600 (the SSE4.2 path's alignments and
// its 3-way split included).
func TestRecordCRC(t *testing.T) {
	b := make([]byte, 605)
	for i := range b {
		b[i] = byte(i*131 + i>>3)
	}
	for n := 0; n <= 600; n++ {
		want := crc32.Checksum(b[:5+n], crc32.MakeTable(crc32.Castagnoli))
		if got := recordCRC(b[:5], b[5:5+n]); got != want {
			t.Fatalf("payload of %d bytes: %#x, want %#x", n, got, want)
		}
	}
}
