package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// HeaderSize is the size in bytes of the file header.
const HeaderSize = 16

// RecordHeaderSize is the size in bytes of a record's header (length, type
// and CRC); a record takes RecordHeaderSize plus its payload length.
const RecordHeaderSize = 9

// MaxPayload is the largest payload length the format can express.
const MaxPayload = math.MaxUint32

// magic opens every file.
const magic = "ttlstore"

// version is the format version this package writes and reads.
const version = 1

// castagnoli is the CRC-32C table used for headers and records.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// le is the byte order of every integer in the format.
var le = binary.LittleEndian

// Kind says what a file holds; it is written in the file header, and a
// Reader checks it.
type Kind uint8

// Kinds of files.
const (
	// KindLog is an append-only log.
	KindLog Kind = 1
	// KindSnapshot is a snapshot.
	KindSnapshot Kind = 2
)

// String returns "log", "snapshot", or "Kind(N)" for any other value.
func (k Kind) String() string {
	switch k {
	case KindLog:
		return "log"
	case KindSnapshot:
		return "snapshot"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// valid reports whether k is a kind this version defines.
func (k Kind) valid() bool { return k == KindLog || k == KindSnapshot }

// AppendHeader appends the HeaderSize-byte file header for kind to dst and
// returns the extended slice. It does not allocate when dst has room. It
// panics if kind is neither KindLog nor KindSnapshot.
func AppendHeader(dst []byte, kind Kind) []byte {
	if !kind.valid() {
		panic(fmt.Sprintf("wal: AppendHeader: invalid kind %d", uint8(kind)))
	}
	start := len(dst)
	dst = append(dst, magic...)
	dst = append(dst, byte(kind), version, 0, 0)
	return le.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// AppendRecord appends one record of type typ carrying payload to dst and
// returns the extended slice. It does not allocate when dst has room for
// RecordHeaderSize+len(payload) more bytes. An empty or nil payload is a
// valid record of RecordHeaderSize bytes.
//
// AppendRecord panics if typ is 0 or if payload is longer than MaxPayload:
// both are programmer errors.
func AppendRecord(dst []byte, typ byte, payload []byte) []byte {
	checkRecord(typ, uint64(len(payload)))
	dst = slices.Grow(dst, RecordHeaderSize+len(payload))
	dst, start := BeginRecord(dst)
	dst = append(dst, payload...)
	return EndRecord(dst, start, typ)
}

// BeginRecord starts a record in place: it appends room for a record header
// to dst and returns the extended slice and the offset start where the
// record begins. The caller then appends the payload directly to the
// returned slice and calls EndRecord with start, which fills in the header.
// This encodes a payload without copying it. BeginRecord does not allocate
// when dst has room for RecordHeaderSize more bytes.
func BeginRecord(dst []byte) (out []byte, start int) {
	start = len(dst)
	return append(dst, 0, 0, 0, 0, 0, 0, 0, 0, 0), start
}

// EndRecord finishes the record that BeginRecord started at offset start of
// dst: everything in dst after the record header is its payload. It writes
// the header in place and returns dst.
//
// EndRecord panics if typ is 0, if the payload is longer than MaxPayload, or
// if dst is shorter than start+RecordHeaderSize (start did not come from
// BeginRecord on this buffer).
func EndRecord(dst []byte, start int, typ byte) []byte {
	if start < 0 || start > len(dst)-RecordHeaderSize {
		panic(fmt.Sprintf("wal: EndRecord: start %d out of range for a buffer of %d bytes", start, len(dst)))
	}
	rec := dst[start:]
	payload := rec[RecordHeaderSize:]
	checkRecord(typ, uint64(len(payload)))
	le.PutUint32(rec[0:4], uint32(len(payload)))
	rec[4] = typ
	le.PutUint32(rec[5:9], recordCRC(rec[:5], payload))
	return dst
}

// checkRecord panics if typ and a payload of n bytes cannot form a record.
func checkRecord(typ byte, n uint64) {
	if typ == 0 {
		panic("wal: record type 0 is reserved")
	}
	if n > MaxPayload {
		panic(fmt.Sprintf("wal: payload of %d bytes exceeds the format's limit of %d", n, uint64(MaxPayload)))
	}
}

// recordCRC returns the CRC of a record whose first 5 header bytes (length
// and type) are lenType. The 5 bytes go through the table a byte at a time,
// inline and unrolled: a call of crc32.Checksum for them cost about 50
// instructions a record more (2 records a durable insert).
func recordCRC(lenType, payload []byte) uint32 {
	tab, h := castagnoli, lenType[:5]
	crc := ^uint32(0)
	crc = tab[byte(crc)^h[0]] ^ crc>>8
	crc = tab[byte(crc)^h[1]] ^ crc>>8
	crc = tab[byte(crc)^h[2]] ^ crc>>8
	crc = tab[byte(crc)^h[3]] ^ crc>>8
	crc = tab[byte(crc)^h[4]] ^ crc>>8
	return crc32.Update(^crc, tab, payload)
}
