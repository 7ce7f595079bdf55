// Package wal is the on-disk framing of ttlstore's durable mode, shared by
// its append-only log and its snapshot files: a file header, then a sequence
// of checksummed records, each a type byte and an opaque payload.
//
// The package does not know what records mean, and it does no I/O of its
// own beyond reading through an [io.ReaderAt]: callers encode records into a
// []byte with [AppendRecord] (or [BeginRecord] and [EndRecord]), write and
// sync them themselves, and read files back with a [Reader]. The Reader is
// the one place that tells a torn tail (the unfinished end a crash leaves)
// from corruption (damage to data that was once written whole); [TrimTorn]
// cuts a torn tail off so that appending can continue.
//
// # File format
//
// All integers are little-endian. CRC-32C is the CRC-32 with the Castagnoli
// polynomial, as hash/crc32 computes it with crc32.MakeTable(crc32.Castagnoli).
//
//	file   = header record*
//	header = magic[8] kind[1] version[1] reserved[2] crc[4]    16 bytes
//	record = length[4] type[1] crc[4] payload[length]          9+length bytes
//
// The header:
//
//   - magic: the 8 ASCII bytes "ttlstore".
//   - kind: 1 for a log ([KindLog]), 2 for a snapshot ([KindSnapshot]).
//   - version: 1.
//   - reserved: 2 zero bytes.
//   - crc: CRC-32C of the first 12 bytes of the header, as a uint32.
//
// Each record:
//
//   - length: the payload length in bytes, as a uint32.
//   - type: 1 to 255, chosen by the caller. 0 is never a valid type, so that
//     zero-filled space is never mistaken for a record.
//   - crc: CRC-32C of the 4 length bytes, the type byte and the payload, in
//     that order, as a uint32.
//   - payload: length bytes, opaque to this package.
//
// Records follow one another without padding or alignment, and the file
// ends right after the last one: there is no trailer. A snapshot that must be
// known complete ends with a record of the caller's that says so.
//
// # Torn tails and corruption
//
// A crash in the middle of an append may leave the end of the file short, or
// holding zero bytes where data was not yet written. That torn tail only ever
// holds data that was never synced, so a Reader reports it as the end of the
// file: [Reader.Next] returns io.EOF, [Reader.Offset] says where the good data
// ends (where the writer truncates and continues) and [Reader.Torn] how many
// bytes after it were judged torn. Damage that a crash cannot explain (a bad
// record followed by valid data, a length beyond the limit, a bad header) is
// corruption: a [*CorruptError], which matches [ErrCorrupt]. A damaged
// record is never returned as a record.
//
// [NewReader] judges the header:
//
//  1. A file shorter than the 16-byte header, whatever its bytes, or of 16
//     bytes or more that are all zero (a crash right after the file was
//     created), has no header and a torn tail: Offset is 0 and Torn is the file size. The caller must
//     truncate the file to zero bytes and write a new header before any
//     record. An empty file is the same case with Torn 0.
//  2. A zero header followed by any non-zero byte is corrupt.
//  3. A full header with the wrong magic, a bad CRC, a version other than 1,
//     the wrong kind (not the one passed to NewReader) or non-zero reserved
//     bytes is corrupt.
//
// [Reader.Next] judges the bytes at the current offset, off, the end of the
// last good record, with rest = size-off bytes left:
//
//  1. rest is 0: the clean end.
//  2. rest is 1 to 8 (too short for a record header): torn.
//  3. The 9 header bytes are all zero: torn if every byte to the end of the
//     file is zero too (zero-filled blocks after a crash), else corrupt.
//     A tail of zero bytes only, here or under rule 2, is also how a file
//     preallocated ahead of its appends ends (a log appended through a
//     memory mapping); [Reader.ZeroTail] tells such a tail from others.
//  4. length is above the Reader's maxPayload: corrupt, wherever the record
//     is, even at the end of the file. Nothing is allocated for it.
//  5. The record runs past the end of the file: torn, unless an intact
//     record starts after its header, which shows that its length field is
//     damaged: then corrupt.
//  6. The CRC does not match: torn if the record ends exactly at the end of
//     the file or every byte after it is zero, and no intact record starts
//     after its header; else corrupt. (A type byte of 0 under a CRC that does
//     not match is just a CRC mismatch: a crash may have zeroed it.)
//  7. The CRC matches but type is 0: corrupt. The writer never writes type
//     0 and a crash does not forge a CRC.
//  8. Otherwise the record is good and is returned.
//
// A Reader told that a crash may have lost blocks of a file's unsynced end
// ([Reader.LostBlocks]) takes a record that rules 3 to 7 call corrupt for
// the start of a torn tail when the record overlaps zero bytes that run to
// a block boundary from the record's start or from a block's: a page a
// mapping dirtied that never reached the disk.
//
// An intact record, in rules 5 and 6, is a record header with a non-zero
// type and a length within maxPayload, whose record ends within the file
// (bytes beyond the damaged record count as zero, which rule 6 has checked)
// and whose CRC matches. The chance that a torn record holds one by accident
// is that of a CRC-32C collision. The search runs only when a record is
// damaged, and costs about one pass over it. A payload made of bytes that
// pass for record headers could make it quadratic, so it gives up after
// checksumming 16 times the bytes searched (plus 1 MiB) and calls the record
// corrupt, as it cannot show that it is torn.
//
// So, barring a CRC-32C collision and that limit, any prefix of a valid file
// reads as its complete records and a torn tail, never as corrupt; so does a
// valid file extended with zero bytes, or whose records' end is overwritten
// with zero bytes. And a flipped bit in a record that is followed by a
// complete record is always reported as corrupt (CRC-32C detects every
// single-bit error).
//
// The Offset of a [CorruptError] is the start of the damaged record (the end
// of the last good one, which [Reader.Offset] also returns), or 0 for the
// header. It is not where the damaged byte is: the format cannot locate that.
//
// Rule 6 cannot tell a crash that persisted a later part of an unsynced write
// but not an earlier part from damage to synced data; it calls that corrupt.
// A caller that knows how much of the file was synced may decide otherwise.
//
// The rules are the same for both kinds. A snapshot is normally written whole
// and synced before it is used, so a caller should treat a snapshot with a
// torn tail (Torn() > 0, or Offset() == 0) as incomplete rather than repair
// it.
//
// # Concurrency
//
// The encoding functions are pure and may be called from any goroutine on
// distinct buffers. A Reader is used by one goroutine at a time, and the
// io.ReaderAt it reads must not change under it.
package wal
