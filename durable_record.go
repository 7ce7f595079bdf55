package ttlstore

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/ttlstore/ttlstore/internal/wal"
)

// The records of a durable collection's files. Framing (file header,
// length, type, CRC-32C) is internal/wal's; this file defines the payloads.
// All integers are little-endian.
//
// Log files (NNNNNNNNNNNNNNNN.log, wal.KindLog) hold, in the order the writes
// happened, the records below. A log written by this version starts with
// recLogInfo and is a sequence of commit groups: the records of one commit
// copied through the log's mapping, or that one write(2) took to the file,
// followed by the recCommit that closes them. Replay applies a group only
// once it has read its recCommit, so a group that a full disk or a crash
// cut short is never applied, even if some of its records are whole: its
// writers were told it failed, or were told nothing. Such a tail counts as
// torn (Stats.TornBytes) and is cut. Zero bytes after the last record are
// not torn: they are the preallocated tail of a log appended through a
// mapping (vfs.Appender) that was not closed; they are cut too. Logs
// without recLogInfo (written before commit groups existed) apply each
// record as it comes.
//
//	recLogInfo (12) format uint32 [| path]
//	                The first record of a log with commit groups; format
//	                is logFormatGroups (2), or logFormatPartitions (3) in
//	                the log of a collection with a partition key, whose
//	                PartitionKeyPath, path, follows. A directory holds the
//	                logs of one path: Open refuses another.
//	recCommit (4)   count uint32 | seq uint64
//	                Closes the group of the count records before it (since
//	                recLogInfo or the previous recCommit); seq is the
//	                sequence number of the last of them. Sequence numbers
//	                count every record appended, one each, and go on across
//	                restarts and compactions.
//	recExpire (5)   (len uint16 | id)*
//	                A sweep removed these expired documents: replay removes
//	                them again, so a restart neither brings them back nor
//	                reports them to OnExpire a second time.
//	recPut (1)      ts int64 | etag uint64 | ttl int32 | idOff uint32 |
//	                idLen uint32 | n uint32 | data
//	                A document as stored: its _ts, _etag and own ttl (0 for
//	                none), then data, the stored JSON without _ts and _etag
//	                (n bytes, starting '{' and ending '}') followed, when
//	                the id was written with escapes, by the unescaped id;
//	                the id is data[idOff:idOff+idLen]. Written by Create,
//	                Upsert, Replace and Touch.
//	recPutPK (6)    ts int64 | etag uint64 | ttl int32 | idOff uint32 |
//	                idLen uint32 | n uint32 | pkLen uint16 | data
//	                recPut in a collection with a partition key (format
//	                3): data is the stored JSON followed by the document's
//	                key, data[idOff:idOff+idLen], which is its partition
//	                key's encoding (pkLen bytes; see partition.go) and then
//	                its id.
//	recDelete (2)   id
//	                The live document with this id was deleted. In a
//	                partitioned collection, here and in recExpire, "id" is
//	                the document's key: its partition key's encoding and
//	                its id.
//	recPurge (7)    pk
//	                DeletePartition of the partition whose encoding is pk:
//	                replay removes every document of it there and then.
//	recDefault (3)  old int32 | new int32 | at int64
//	                SetDefaultTTL from old to new (0 for off) at second at:
//	                replay removes what had expired at `at` under old (R13),
//	                then applies new.
//	recFeed (13)    at int64 | (op uint8 | flags uint8 | prevEtag uint64
//	                [| keyLen uvarint | key])*
//	                The change feed's view of its group, the last record
//	                before the recCommit of every group a collection with
//	                a change feed writes (feed_durable.go): the group's
//	                second, then a change each, in order: its ChangeOp,
//	                flags (1: an expiry; 2: it stores the group's next
//	                recPut, in order), the _etag of the version it
//	                replaced or removed (0 for none), and, when it stores
//	                no document, the document's key. Replay skips it.
//
// Snapshot files (NNNNNNNNNNNNNNNN.snap, wal.KindSnapshot) hold the live
// documents when log NNNNNNNNNNNNNNNN began, give or take the writes that
// log also holds (replaying them again is harmless: each record states a
// whole outcome):
//
//	recSnapInfo (10) def int32 | etag uint64 [| seq uint64 [| path]]
//	                 The DefaultTTL, the last _etag issued and the sequence
//	                 number of the last record before log NNNNNNNNNNNNNNNN
//	                 (absent in snapshots written before commit groups),
//	                 and the PartitionKeyPath of a partitioned collection.
//	recPut (1)       one per document, as in a log (recPutPK in a
//	                 partitioned collection).
//	recSnapEnd (11)  count uint64
//	                 The number of recPut records: a snapshot without it,
//	                 or with another count, is corrupt.
//
// Expiry is never written down: it follows from _ts, ttl and the DefaultTTL,
// which are (R17).
const (
	recPut      byte = 1
	recDelete   byte = 2
	recDefault  byte = 3
	recCommit   byte = 4
	recExpire   byte = 5
	recPutPK    byte = 6
	recPurge    byte = 7
	recSnapInfo byte = 10
	recSnapEnd  byte = 11
	recLogInfo  byte = 12
	recFeed     byte = 13
)

// recLogInfo's formats.
const (
	logFormatGroups     = 2 // records in commit groups
	logFormatPartitions = 3 // and a partition key path
)

// maxKeyLen is the longest key a record may hold: an id after the longest
// partition key encoding.
const maxKeyLen = 2 + binary.MaxVarintLen16 + MaxPartitionKeyLength + MaxIDLength

// putHeaderSize is the size of a recPut payload before its data.
const putHeaderSize = 8 + 8 + 4 + 4 + 4 + 4

var le = binary.LittleEndian

// appendPut appends a recPut record of e to dst, or a recPutPK record if e
// has a partition key.
func appendPut(dst []byte, e *entry) []byte {
	dst, start := wal.BeginRecord(dst)
	dst = le.AppendUint64(dst, uint64(e.ts))
	dst = le.AppendUint64(dst, e.etag)
	dst = le.AppendUint32(dst, uint32(e.ttl))
	dst = le.AppendUint32(dst, e.idOff)
	dst = le.AppendUint32(dst, e.idLen)
	dst = le.AppendUint32(dst, e.n)
	typ := recPut
	if e.pkLen != 0 {
		dst = le.AppendUint16(dst, e.pkLen)
		typ = recPutPK
	}
	dst = append(dst, e.bytes(e.size())...)
	return wal.EndRecord(dst, start, typ)
}

// appendPurge appends a recPurge record of the partition with encoding pk
// to dst.
func appendPurge(dst []byte, pk string) []byte {
	dst, start := wal.BeginRecord(dst)
	dst = append(dst, pk...)
	return wal.EndRecord(dst, start, recPurge)
}

// decodePurge reads a recPurge payload.
func decodePurge(p []byte) (string, error) {
	if n := pkEncLen(string(p)); n == 0 || n != len(p) {
		return "", fmt.Errorf("partition delete record of %d bytes is not a partition key", len(p))
	}
	return string(p), nil
}

// appendDelete appends a recDelete record of id to dst.
func appendDelete(dst []byte, id string) []byte {
	dst, start := wal.BeginRecord(dst)
	dst = append(dst, id...)
	return wal.EndRecord(dst, start, recDelete)
}

// appendDefault appends a recDefault record to dst.
func appendDefault(dst []byte, old, def int32, at int64) []byte {
	dst, start := wal.BeginRecord(dst)
	dst = le.AppendUint32(dst, uint32(old))
	dst = le.AppendUint32(dst, uint32(def))
	dst = le.AppendUint64(dst, uint64(at))
	return wal.EndRecord(dst, start, recDefault)
}

// appendCommit appends a recCommit record closing the count records before
// it, the last of which has sequence number seq.
func appendCommit(dst []byte, count uint32, seq uint64) []byte {
	dst, start := wal.BeginRecord(dst)
	dst = le.AppendUint32(dst, count)
	dst = le.AppendUint64(dst, seq)
	return wal.EndRecord(dst, start, recCommit)
}

// decodeCommit reads a recCommit payload.
func decodeCommit(p []byte) (count uint32, seq uint64, err error) {
	if len(p) != 12 {
		return 0, 0, fmt.Errorf("commit record of %d bytes, not 12", len(p))
	}
	return le.Uint32(p), le.Uint64(p[4:]), nil
}

// appendLogInfo appends the recLogInfo record that starts a log of a
// collection with the partition key path path ("" for none).
func appendLogInfo(dst []byte, path string) []byte {
	dst, start := wal.BeginRecord(dst)
	if path == "" {
		dst = le.AppendUint32(dst, logFormatGroups)
	} else {
		dst = le.AppendUint32(dst, logFormatPartitions)
		dst = append(dst, path...)
	}
	return wal.EndRecord(dst, start, recLogInfo)
}

// decodeLogInfo reads a recLogInfo payload: the partition key path, "" for
// none.
func decodeLogInfo(p []byte) (path string, ok bool) {
	switch {
	case len(p) == 4 && le.Uint32(p) == logFormatGroups:
		return "", true
	case len(p) > 4 && le.Uint32(p) == logFormatPartitions:
		return string(p[4:]), true
	}
	return "", false
}

// logPreamble is what a new log of a collection without a partition key
// starts with: its header and recLogInfo.
func logPreamble() []byte { return logPreambleFor("") }

// logPreambleFor is what a new log of a collection with the partition key
// path path ("" for none) starts with.
func logPreambleFor(path string) []byte {
	return appendLogInfo(wal.AppendHeader(nil, wal.KindLog), path)
}

// appendExpire appends a recExpire record of the ids of removed to dst.
func appendExpire(dst []byte, removed []slot) []byte {
	dst, start := wal.BeginRecord(dst)
	for _, sl := range removed {
		id := sl.e.key()
		dst = le.AppendUint16(dst, uint16(len(id)))
		dst = append(dst, id...)
	}
	return wal.EndRecord(dst, start, recExpire)
}

// decodeExpire returns the ids of a recExpire payload.
func decodeExpire(p []byte) ([]string, error) {
	var ids []string
	for len(p) > 0 {
		if len(p) < 2 {
			return nil, fmt.Errorf("expiry record ends inside an id's length")
		}
		n := int(le.Uint16(p))
		if n == 0 || n > maxKeyLen || n > len(p)-2 {
			return nil, fmt.Errorf("expiry record has an id of %d bytes, with %d left", n, len(p)-2)
		}
		ids = append(ids, string(p[2:2+n]))
		p = p[2+n:]
	}
	return ids, nil
}

// decodePut rebuilds the entry a recPut payload describes, or with pk a
// recPutPK payload. Every field is checked, so that a record that passed
// its CRC but was written by something else cannot make an entry that
// breaks the collection's invariants; the error says what is wrong.
func decodePut(p []byte, pk bool) (*entry, error) {
	hs := putHeaderSize
	if pk {
		hs += 2
	}
	if len(p) < hs+2 {
		return nil, fmt.Errorf("document record of %d bytes is too short", len(p))
	}
	ts := int64(le.Uint64(p[0:]))
	etag := le.Uint64(p[8:])
	ttl := int32(le.Uint32(p[16:]))
	idOff, idLen, n := le.Uint32(p[20:]), le.Uint32(p[24:]), le.Uint32(p[28:])
	var pkLen uint16
	maxID := uint32(MaxIDLength)
	if pk {
		pkLen = le.Uint16(p[putHeaderSize:])
		maxID = maxKeyLen
	}
	data := p[hs:]
	size := uint64(len(data))
	switch {
	case ttl != 0 && ttl != Never && ttl < 1:
		return nil, fmt.Errorf("document record has ttl %d", ttl)
	case uint64(n) > size || n < 2 || data[0] != '{' || data[n-1] != '}':
		return nil, fmt.Errorf("document record's JSON (%d of %d bytes) is not an object", n, size)
	case idLen == 0 || idLen > maxID || uint64(idOff)+uint64(idLen) > size:
		return nil, fmt.Errorf("document record's id (%d bytes at %d) is out of range", idLen, idOff)
	case max(uint64(n), uint64(idOff)+uint64(idLen)) != size:
		return nil, fmt.Errorf("document record has %d bytes of data, not %d", size, max(n, idOff+idLen))
	}
	if pk {
		key := string(data[idOff : idOff+idLen])
		if k := pkEncLen(key); k == 0 || k != int(pkLen) || len(key)-k == 0 || len(key)-k > MaxIDLength {
			return nil, fmt.Errorf("document record's key (%d bytes, %d of partition key) is not a partition key and an id", idLen, pkLen)
		}
	}
	e, buf := newEntry(len(data))
	copy(buf, data)
	*e = entry{ts: ts, etag: etag, ttl: ttl, n: n, idOff: idOff, idLen: idLen, pkLen: pkLen}
	return e, nil
}

// decodeDefault reads a recDefault payload.
func decodeDefault(p []byte) (old, def int32, at int64, err error) {
	if len(p) != 16 {
		return 0, 0, 0, fmt.Errorf("DefaultTTL record of %d bytes, not 16", len(p))
	}
	old, def, at = int32(le.Uint32(p)), int32(le.Uint32(p[4:])), int64(le.Uint64(p[8:]))
	if !validDefault(old) || !validDefault(def) {
		return 0, 0, 0, fmt.Errorf("DefaultTTL record from %d to %d", old, def)
	}
	return old, def, at, nil
}

// validDefault reports whether def is a stored DefaultTTL: 0 (off), Never,
// or 1..MaxTTL.
func validDefault(def int32) bool { return def == 0 || def == Never || def >= 1 }

// appendSnapInfo appends a recSnapInfo record to dst; path is the
// partition key path, "" for none.
func appendSnapInfo(dst []byte, def int32, etag, seq uint64, path string) []byte {
	dst, start := wal.BeginRecord(dst)
	dst = le.AppendUint32(dst, uint32(def))
	dst = le.AppendUint64(dst, etag)
	dst = le.AppendUint64(dst, seq)
	dst = append(dst, path...)
	return wal.EndRecord(dst, start, recSnapInfo)
}

// decodeSnapInfo reads a recSnapInfo payload, of 12 bytes (written before
// commit groups, seq 0), 20, or more with a partition key path; ok is
// false for anything else.
func decodeSnapInfo(p []byte) (def int32, etag, seq uint64, path string, ok bool) {
	if len(p) != 12 && len(p) < 20 {
		return 0, 0, 0, "", false
	}
	def, etag = int32(le.Uint32(p)), le.Uint64(p[4:])
	if len(p) >= 20 {
		seq = le.Uint64(p[12:])
		path = string(p[20:])
	}
	return def, etag, seq, path, validDefault(def)
}

// appendSnapEnd appends a recSnapEnd record to dst.
func appendSnapEnd(dst []byte, count uint64) []byte {
	dst, start := wal.BeginRecord(dst)
	dst = le.AppendUint64(dst, count)
	return wal.EndRecord(dst, start, recSnapEnd)
}

// fileName is the name of file number n of the given kind.
func fileName(n uint64, kind wal.Kind) string {
	s := strconv.FormatUint(n, 10)
	for len(s) < 16 {
		s = "0" + s
	}
	if kind == wal.KindSnapshot {
		return s + ".snap"
	}
	return s + ".log"
}
