package jsonscan

import (
	"encoding/binary"
	"slices"
	"strconv"
)

// maxStampLen is the length of the stamp AppendStamp writes, not counting
// the etag: `,"_ts":` + up to 20 bytes of ts + `,"_etag":"` + `"}`.
const maxStampLen = len(`,"_ts":`) + 20 + len(`,"_etag":"`) + len(`"}`)

// AppendStamp appends to dst the stamp that Stamp writes at Fields.StampAt
// and returns the extended slice: a ',' if needComma, then
// `"_ts":<ts>,"_etag":"<etag>"}`. etag is written verbatim; the caller
// guarantees that it needs no escaping.
//
// needComma must be true exactly when the stamped object kept at least one
// member, which for an output out of Stamp is out[Fields.StampAt-1] != '{'
// (equivalently Fields.StampAt > 1 when Stamp was given an empty dst).
// Stamp itself uses AppendStamp, so
//
//	AppendStamp(out[:f.StampAt:f.StampAt], ts, etag, out[f.StampAt-1] != '{')
//
// yields the same bytes as stamping the original document with ts and etag.
// (The three-index slice keeps the append from overwriting out.)
//
// Every write stamps a document and every read of a whole document
// restamps it, with a ts of ten digits (Unix seconds from 2001 to 2286), so
// that case is written with a few word stores (see appendStamp10);
// other values of ts take strconv.
func AppendStamp(dst []byte, ts int64, etag string, needComma bool) []byte {
	if 1e9 <= ts && ts < 1e10 {
		return appendStamp10(dst, uint64(ts), etag, needComma)
	}
	if needComma {
		dst = append(dst, `,"_ts":`...)
	} else {
		dst = append(dst, `"_ts":`...)
	}
	dst = strconv.AppendInt(dst, ts, 10)
	dst = append(dst, `,"_etag":"`...)
	dst = append(dst, etag...)
	return append(dst, `"}`...)
}

// Parts of the stamp as little-endian words, written with one store each.
const (
	wordTSKey  = '"' | '_'<<8 | 't'<<16 | 's'<<24 | '"'<<32 | ':'<<40 // `"_ts":`, 6 bytes
	wordEtagK1 = ',' | '"'<<8 | '_'<<16 | 'e'<<24 | 't'<<32 | 'a'<<40 | 'g'<<48 | '"'<<56
	wordEtagK2 = ':' | '"'<<8 // `,"_etag"` then `:"`
	wordEnd    = '"' | '}'<<8 // `"}`
)

// appendStamp10 is AppendStamp for 1e9 <= ts < 1e10. It grows dst once if
// it has not room for the stamp, then writes it in place: the optional
// comma, `"_ts":` and the first two digits in one word, the other eight
// digits in another (eightDigits), the etag key in two, the etag and `"}`.
func appendStamp10(dst []byte, ts uint64, etag string, needComma bool) []byte {
	n := len(dst)
	size := len(`,"_ts":`) + 10 + len(`,"_etag":"`) + len(etag) + len(`"}`)
	if cap(dst)-n < size {
		dst = slices.Grow(dst, size)
	}
	d := dst[n : n+size]
	d[0] = ',' // overwritten by `"_ts":` when there is no comma
	k := 0
	if needComma {
		k = 1
	}
	hi := ts / 1e8 // the first two digits, 10 to 99
	binary.LittleEndian.PutUint64(d[k:], wordTSKey|('0'+hi/10)<<48|('0'+hi%10)<<56)
	binary.LittleEndian.PutUint64(d[k+8:], eightDigits(ts%1e8))
	binary.LittleEndian.PutUint64(d[k+16:], wordEtagK1)
	binary.LittleEndian.PutUint16(d[k+24:], wordEtagK2)
	copy(d[k+26:], etag)
	binary.LittleEndian.PutUint16(d[k+26+len(etag):], wordEnd)
	return dst[:n+k+size-1]
}

// eightDigits returns the eight decimal digits of x < 1e8, leading zeros
// included, in ASCII as a little-endian word: the first digit in the
// lowest byte, ready to be stored.
//
// It splits x in lanes of one word, each step halving the lane width:
// into two 4-digit numbers in 32-bit lanes, each of those into two 2-digit
// numbers in 16-bit lanes, and each of those into two digits in bytes. A
// lane's quotient is computed for all lanes at once by a multiplication
// and a shift: (y*10486)>>20 == y/100 for every y < 10000, and
// (y*103)>>10 == y/10 for every y < 100 (TestEightDigits checks both for
// every y). The products fit in their lanes (10000*10486 < 1<<32 and
// 100*103 < 1<<16), so no lane spills into the next, and the mask drops
// the low bits of the next lane's product that the shift brings down.
func eightDigits(x uint64) uint64 {
	v := x/10000 | x%10000<<32 // lane 0 holds the first four digits
	q := v * 10486 >> 20 & (0x7f | 0x7f<<32)
	v = q | (v-q*100)<<16
	q = v * 103 >> 10 & 0x000f_000f_000f_000f
	v = q | (v-q*10)<<8
	return v | '0'*lsb
}
