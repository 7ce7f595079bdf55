package wal

// This file reads the format specified in doc.go and applies its rules for
// torn tails and corruption; they are judged here and nowhere else.

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// readBufferSize is the size of a Reader's read-ahead buffer (less for a
// smaller file). Records that fit in it are returned without being copied.
const readBufferSize = 1 << 20

// scratchSize is the size of the buffer used to check that a tail is zero.
const scratchSize = 64 << 10

// zeros is a block of zero bytes, read only.
var zeros [4096]byte

// Reader reads the records of one file in order, judging where the good
// data ends. Create one with NewReader and call Next until it returns an
// error: io.EOF at the end of the good data (a clean end or a torn tail, as
// Torn tells), or another error.
//
// A Reader is not safe for concurrent use. The io.ReaderAt it reads must not
// change while the Reader is in use; the Reader never writes to it.
type Reader struct {
	sr   *io.SectionReader // the first size bytes of the file
	br   *bufio.Reader     // reads sr in order; its position is pos
	pos  int64             // offset of br's next byte
	size int64             // the file size given to NewReader
	max  uint64            // the largest payload length accepted
	off  int64             // end of the last good record or of the header; 0 if no valid header
	torn int64             // bytes after off judged torn, once err is io.EOF
	zero bool              // those bytes are all zero (rules 2 and 3)
	lost int64             // the size of the blocks a crash may have lost (LostBlocks); 0: none
	end  int64             // where the record being judged ends, by its length (or its header's end)
	err  error             // sticky: io.EOF at the end, or the error that stopped Next
	buf  []byte            // holds a record too big for br's buffer
	scr  []byte            // scratch for reading a tail that should be zero
}

// NewReader returns a Reader of the first size bytes of r (anything after
// them is ignored): a file of the given kind whose payloads are at most
// maxPayload bytes long. NewReader reads and checks the file header.
//
// If the file has no header, because it is shorter than HeaderSize or is all
// zero bytes, NewReader returns a Reader whose Next returns io.EOF at once,
// whose Offset is 0 and whose Torn is size: the caller must truncate the file
// to zero bytes and write a new header (AppendHeader) before any record. An
// empty file is this case with Torn 0.
//
// If the header is damaged, or is that of another kind, NewReader returns a
// *CorruptError at offset 0. If reading fails it returns the error of r,
// wrapped; if r holds fewer than size bytes, an error wrapping
// io.ErrUnexpectedEOF.
//
// maxPayload bounds what a Reader allocates: a length above it is corrupt
// (and is never allocated), and a Reader holds at most one record, or the
// part of one that is in the file, besides its read-ahead buffer of up to
// 1 MiB. A maxPayload above MaxPayload acts as MaxPayload. NewReader panics
// if size or maxPayload is negative or kind is not KindLog or KindSnapshot.
func NewReader(r io.ReaderAt, size int64, kind Kind, maxPayload int) (*Reader, error) {
	switch {
	case size < 0:
		panic(fmt.Sprintf("wal: NewReader: negative size %d", size))
	case !kind.valid():
		panic(fmt.Sprintf("wal: NewReader: invalid kind %d", uint8(kind)))
	case maxPayload < 0:
		panic(fmt.Sprintf("wal: NewReader: negative maxPayload %d", maxPayload))
	}
	rd := &Reader{
		sr:   io.NewSectionReader(r, 0, size),
		size: size,
		// The last bound keeps RecordHeaderSize+length within an int on
		// 32-bit platforms.
		max: min(uint64(maxPayload), MaxPayload, uint64(math.MaxInt-RecordHeaderSize)),
	}
	if size < HeaderSize {
		rd.tornTail()
		return rd, nil
	}
	rd.br = bufio.NewReaderSize(rd.sr, int(min(size, readBufferSize)))
	h, err := rd.take(HeaderSize)
	if err != nil {
		return nil, err
	}
	if isZero(h) {
		nz, err := rd.firstNonZero(HeaderSize)
		if err != nil {
			return nil, err
		}
		if nz >= 0 {
			return nil, corrupt(0, "zeroed header followed by a non-zero byte at offset %d", nz)
		}
		rd.tornTail()
		return rd, nil
	}
	if err := checkHeader(h, kind); err != nil {
		return nil, err
	}
	rd.off = HeaderSize
	return rd, nil
}

// checkHeader returns a *CorruptError if h, a full header that is not all
// zero, is not a valid header of kind.
func checkHeader(h []byte, kind Kind) error {
	switch {
	case string(h[:8]) != magic:
		return corrupt(0, "bad magic %q", h[:8])
	case le.Uint32(h[12:16]) != crc32.Checksum(h[:12], castagnoli):
		return corrupt(0, "header crc mismatch")
	case h[9] != version:
		return corrupt(0, "unknown version %d", h[9])
	case Kind(h[8]) != kind:
		return corrupt(0, "file kind %v, want %v", Kind(h[8]), kind)
	case h[10] != 0 || h[11] != 0:
		return corrupt(0, "reserved bytes %#04x, want 0", le.Uint16(h[10:12]))
	}
	return nil
}

// Next returns the next record: its type (never 0) and its payload, which
// may be empty. The payload is valid only until the next call to Next, and
// the caller must copy what it keeps.
//
// At the end of the good data Next returns io.EOF, both at a clean end and
// at a torn tail; Torn tells them apart and Offset says where the good data
// ends. If a record is corrupt, Next returns a *CorruptError whose Offset is
// the record's start; if reading fails, the error of the io.ReaderAt,
// wrapped (io.ErrUnexpectedEOF if it holds fewer bytes than the size given
// to NewReader). Once Next has returned an error it returns the same error
// on every later call.
func (r *Reader) Next() (typ byte, payload []byte, err error) {
	if r.err != nil {
		return 0, nil, r.err
	}
	typ, payload, err = r.next()
	if ce, ok := err.(*CorruptError); ok && r.lost > 0 {
		switch lost, rerr := r.overlapsLost(ce.Offset, r.end); {
		case rerr != nil:
			err = rerr
		case lost:
			err = r.tornTail()
		}
	}
	if err != nil {
		r.err = err
	}
	return typ, payload, err
}

// LostBlocks tells r that a crash may have lost blocks of size bytes (at
// offsets that are multiples of size) anywhere in the file's unsynced end,
// which then read as zero bytes while later blocks kept their data: what a
// power loss can leave of a file appended through a shared memory mapping
// of its preallocated tail, whose dirty pages the kernel writes back in any
// order. From then on a record that Next would call corrupt is instead the
// start of a torn tail when it overlaps a block whose bytes are all zero
// from the record's start or from the block's (to the end of the file, for
// the last block; a block that was written back before, with the synced
// end of the file in it, keeps its zero bytes after that end): everything
// from the first lost block on was not synced, so what follows it, whole
// records included, is torn too. The cost is that damage of that one
// shape, zero bytes up to a block's end, in the part of the file that was
// synced reads as a torn tail rather than corruption; any other damage is
// still corrupt. It panics if size is not positive.
func (r *Reader) LostBlocks(size int) {
	if size <= 0 {
		panic(fmt.Sprintf("wal: LostBlocks: size %d", size))
	}
	r.lost = int64(size)
}

// overlapsLost reports whether the record from off to end (clipped to the
// file) overlaps a lost block: its bytes from off to the next multiple of
// r.lost are zero, or those of a whole block after off are; to the end of
// the file, for the last block.
func (r *Reader) overlapsLost(off, end int64) (bool, error) {
	end = min(max(end, off+RecordHeaderSize), r.size)
	for b := off; b < end; b += r.lost - b%r.lost {
		nz, err := r.firstNonZeroIn(b, min(b+r.lost-b%r.lost, r.size))
		if err != nil {
			return false, err
		}
		if nz < 0 {
			return true, nil
		}
	}
	return false, nil
}

// next reads and judges the record at r.off, which br is positioned at.
// The rule numbers are those of the package documentation.
func (r *Reader) next() (byte, []byte, error) {
	rest := r.size - r.off
	if rest == 0 { // Rule 1.
		return 0, nil, io.EOF
	}
	if rest < RecordHeaderSize { // Rule 2.
		h, err := r.peek(int(rest))
		if err != nil {
			return 0, nil, err
		}
		r.zero = isZero(h)
		return 0, nil, r.tornTail()
	}
	h, err := r.peek(RecordHeaderSize)
	if err != nil {
		return 0, nil, err
	}
	r.end = r.off + RecordHeaderSize
	if isZero(h) { // Rule 3.
		nz, err := r.firstNonZero(r.off + RecordHeaderSize)
		if err != nil {
			return 0, nil, err
		}
		if nz >= 0 {
			return 0, nil, corrupt(r.off, "zeroed record header followed by a non-zero byte at offset %d", nz)
		}
		r.zero = true
		return 0, nil, r.tornTail()
	}
	n, typ, sum := le.Uint32(h[0:4]), h[4], le.Uint32(h[5:9])
	if uint64(n) > r.max { // Rule 4.
		return 0, nil, corrupt(r.off, "length %d exceeds the limit %d", n, r.max)
	}
	end := r.off + RecordHeaderSize + int64(n)
	r.end = end
	if end > r.size { // Rule 5. rest < RecordHeaderSize+n, so it is bounded too.
		part, err := r.take(int(rest))
		if err != nil {
			return 0, nil, err
		}
		return 0, nil, r.damaged(end, part[RecordHeaderSize:],
			fmt.Sprintf("length %d runs past the end of the file at offset %d", n, r.size))
	}
	rec, err := r.take(RecordHeaderSize + int(n))
	if err != nil {
		return 0, nil, err
	}
	payload := rec[RecordHeaderSize:]
	if recordCRC(rec[:5], payload) != sum { // Rule 6.
		return 0, nil, r.damaged(end, payload, "crc mismatch")
	}
	if typ == 0 { // Rule 7.
		return 0, nil, corrupt(r.off, "record type 0")
	}
	r.off = end // Rule 8.
	return typ, payload, nil
}

// damaged judges the record at r.off that cannot be returned because it runs
// past the end of the file (rule 5) or its CRC does not match (rule 6): it
// returns io.EOF, having recorded a torn tail, or a *CorruptError. end is
// where the record's length says it ends, and body holds the file's bytes
// from after the record header up to end or to the end of the file.
func (r *Reader) damaged(end int64, body []byte, reason string) error {
	if end < r.size {
		nz, err := r.firstNonZero(end)
		if err != nil {
			return err
		}
		if nz >= 0 {
			return corrupt(r.off, "%s", reason)
		}
	}
	// Every byte after body is now known to be zero.
	switch p := r.findIntact(r.off+RecordHeaderSize, body); {
	case p >= 0:
		return corrupt(r.off, "%s, and an intact record follows at offset %d", reason, p)
	case p == searchAborted:
		return corrupt(r.off, "%s, and too many record headers follow it to tell a torn write from damage", reason)
	}
	return r.tornTail()
}

// searchAborted is what findIntact returns when it gives up.
const searchAborted = -2

// searchBudget bounds the work of findIntact, in bytes checksummed, for b
// bytes searched. Ordinary payloads seldom contain a byte sequence that
// passes for a record header up to the CRC check, so the search costs about
// one pass over b; a payload made of such sequences could make it quadratic.
func searchBudget(b int) int64 { return 16*int64(b) + 1<<20 }

// findIntact returns the offset of the first intact record that starts in
// b, which holds the file's bytes from offset base, or -1 if there is none,
// or searchAborted if finding out would exceed searchBudget. Every byte of
// the file after b must be zero.
func (r *Reader) findIntact(base int64, b []byte) int64 {
	var h [RecordHeaderSize]byte
	budget := searchBudget(len(b))
	for i := range b {
		clear(h[:])
		copy(h[:], b[i:])
		if h[4] == 0 {
			continue
		}
		pos := base + int64(i)
		n := le.Uint32(h[0:4])
		if uint64(n) > r.max || pos+RecordHeaderSize+int64(n) > r.size {
			continue
		}
		if budget -= int64(n); budget < 0 {
			return searchAborted
		}
		from := min(i+RecordHeaderSize, len(b))
		to := int(min(int64(i)+RecordHeaderSize+int64(n), int64(len(b))))
		crc := recordCRC(h[:5], b[from:to])
		for left := int64(n) - int64(to-from); left > 0; {
			k := min(left, int64(len(zeros)))
			crc = crc32.Update(crc, castagnoli, zeros[:k])
			left -= k
		}
		if crc == le.Uint32(h[5:9]) {
			return pos
		}
	}
	return -1
}

// tornTail records that the bytes after r.off are a torn tail and returns
// io.EOF.
func (r *Reader) tornTail() error {
	r.torn = r.size - r.off
	r.err = io.EOF
	return io.EOF
}

// firstNonZero returns the offset of the first non-zero byte of the file at
// or after from, or -1 if there is none. It reads with ReadAt, so slices
// returned by peek and take stay valid.
func (r *Reader) firstNonZero(from int64) (int64, error) {
	return r.firstNonZeroIn(from, r.size)
}

// firstNonZeroIn is firstNonZero for the bytes from from up to to.
func (r *Reader) firstNonZeroIn(from, to int64) (int64, error) {
	for from < to {
		if r.scr == nil {
			r.scr = make([]byte, min(r.size-from, scratchSize))
		}
		chunk := r.scr[:min(to-from, int64(len(r.scr)))]
		if m, err := r.sr.ReadAt(chunk, from); m < len(chunk) {
			return 0, r.readErr(from+int64(m), err)
		}
		for len(chunk) > 0 {
			k := min(len(chunk), len(zeros))
			if !bytes.Equal(chunk[:k], zeros[:k]) {
				for i, c := range chunk[:k] {
					if c != 0 {
						return from + int64(i), nil
					}
				}
			}
			chunk = chunk[k:]
			from += int64(k)
		}
	}
	return -1, nil
}

// peek returns the next n bytes of the file without consuming them; n must
// not exceed br's buffer size. The slice is valid until the next read.
func (r *Reader) peek(n int) ([]byte, error) {
	b, err := r.br.Peek(n)
	if err != nil {
		return nil, r.readErr(r.pos+int64(len(b)), err)
	}
	return b, nil
}

// take consumes and returns the next n bytes of the file, from br's buffer
// when they fit in it, else copied into r.buf. The slice is valid until the
// next read. The caller has checked n against the limit and the file size.
func (r *Reader) take(n int) ([]byte, error) {
	if n <= r.br.Size() {
		b, err := r.peek(n)
		if err != nil {
			return nil, err
		}
		r.br.Discard(n) // b stays valid: Discard does not refill the buffer.
		r.pos += int64(n)
		return b, nil
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if m, err := io.ReadFull(r.br, b); err != nil {
		return nil, r.readErr(r.pos+int64(m), err)
	}
	r.pos += int64(n)
	return b, nil
}

// readErr wraps err, from a read that stopped at offset pos.
func (r *Reader) readErr(pos int64, err error) error {
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("wal: file ends at offset %d, before its size %d: %w", pos, r.size, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("wal: read at offset %d: %w", pos, err)
}

// isZero reports whether every byte of b is zero.
func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Offset returns the offset where the good data read so far ends: the end of
// the last record Next returned, or of the header before the first. After
// Next has returned io.EOF it is where a writer truncates the file and
// appends (see TrimTorn). It is 0 when the file has no valid header, and
// then the caller must truncate the file to zero bytes and write a new
// header. After Next has returned a *CorruptError it is the start of the
// damaged record, the error's Offset.
func (r *Reader) Offset() int64 { return r.off }

// Torn returns the number of bytes after Offset that were judged a torn tail,
// once Next has returned io.EOF; Offset()+Torn() is then the file size. It is
// 0 at a clean end, before Next has returned io.EOF, and after any other
// error.
func (r *Reader) Torn() int64 { return r.torn }

// ZeroTail reports whether the torn tail Torn counts, after a record
// header or a record, is made of zero bytes only (rules 2 and 3): what a
// crash leaves when a file system persisted a file's size before its data,
// and also the preallocated end of a file appended through a memory
// mapping, which a reader of such files takes for the end of the data, not
// for damage. It is false when Torn is 0, and for a file without a header.
func (r *Reader) ZeroTail() bool { return r.zero }
