package ttlstore

import (
	"encoding/json"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"github.com/ttlstore/ttlstore/internal/jsonscan"
)

// etagLen is the length of the _etag values a Collection writes: 16
// lowercase hex digits.
const etagLen = 16

// entry is one stored document: this header and, right after it in the same
// allocation, the document's JSON without its _ts and _etag members (see
// newEntry). _ts and _etag are kept here as numbers and written out when
// the JSON is asked for. The allocation holds no pointers, so the garbage
// collector never scans it, and a document costs one allocation.
//
// An entry is immutable once published, but for pos, which only the shard
// holding the entry changes, under its lock: a write makes a new entry
// rather than changing one, so a Document can share it without copying.
type entry struct {
	ts    int64  // _ts, whole Unix seconds
	etag  uint64 // _etag, written as 16 lowercase hex digits
	ttl   int32  // the document's own top-level ttl; 0 when it has none
	pos   int32  // the expiry index's: the expiry second less ts, or a place among entries that never expire (see expiryIndex)
	n     uint32 // length of the stored JSON, which ends in the '}' before which the stamp goes
	idOff uint32 // offset of the key's bytes from the start of the JSON
	idLen uint32 // length of the key: the id, or in a partitioned collection the partition key's encoding then the id (see key)

	// The eviction policy's fields (eviction.go), used only under
	// EvictColdest. qpos and seg belong to the policy and change only
	// under its mutex. hits counts the reads since the policy last looked
	// at the entry; readers add to it with atomic operations.
	qpos uint32 // the entry's place in its policy queue
	hits uint32 // reads not yet counted by the policy, saturating near maxHits
	seg  uint8  // the policy queue the entry is in, segNone if none

	// lpos is the expiry index's: the entry's place in its leaf's array
	// when it was last set, a hint that saves a removal the search of
	// the array (see expiryIndex.remove); it lies in the header's padding.
	lpos uint8

	// pkLen is the length of the key's partition key encoding (see
	// partition.go), which comes before the id; 0 in a collection
	// without a partition key, where the key is the id.
	pkLen uint16
}

// entrySize is the size of the header before an entry's JSON.
const entrySize = int(unsafe.Sizeof(entry{}))

// newEntry allocates an entry with room for size bytes after its header,
// which data returns. The allocation is a []byte, so it is 8-byte aligned
// (every Go size class above 8 bytes is a multiple of 8) and pointer-free.
func newEntry(size int) (*entry, []byte) {
	buf := make([]byte, entrySize+size)
	return (*entry)(unsafe.Pointer(unsafe.SliceData(buf))), buf[entrySize:]
}

// bytes returns the size bytes after the header, as newEntry allocated them.
func (e *entry) bytes(size int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(e), entrySize)), size)
}

// size is the number of bytes after the header: the JSON, then the id when
// it was written with escapes (see prepare).
func (e *entry) size() int { return max(int(e.n), int(e.idOff+e.idLen)) }

// raw returns the stored JSON: the document without _ts and _etag.
func (e *entry) raw() []byte { return e.bytes(int(e.n)) }

// key returns the entry's key in its shard's table: the document's id,
// unescaped; in a partitioned collection, its partition key's encoding
// followed by the id (see partitionKeyOf).
func (e *entry) key() string {
	p := unsafe.Add(unsafe.Pointer(e), entrySize+int(e.idOff))
	return unsafe.String((*byte)(p), e.idLen)
}

// keyIs reports whether the entry's key is key, as e.key() == key does. A
// key of 8 to 16 bytes (most ids) it compares as two 8-byte words, the
// first and the last eight bytes of each, where == calls memequal: the call
// and the registers the probe saves around it were some 45 instructions of
// a Read hit's 570 (cachegrind).
func (e *entry) keyIs(key string) bool {
	n := len(key)
	if uint64(n) != uint64(e.idLen) {
		return false
	}
	mine := unsafe.Add(unsafe.Pointer(e), entrySize+int(e.idOff))
	if !unalignedLoads || uint(n-8) > 8 {
		return unsafe.String((*byte)(mine), n) == key
	}
	theirs := unsafe.Pointer(unsafe.StringData(key))
	return *(*uint64)(mine) == *(*uint64)(theirs) &&
		*(*uint64)(unsafe.Add(mine, n-8)) == *(*uint64)(unsafe.Add(theirs, n-8))
}

// unalignedLoads is true where a load of 8 bytes may start at any address
// (keyIs loads them from inside ids); elsewhere keyIs uses ==.
const unalignedLoads = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" ||
	runtime.GOARCH == "386" || runtime.GOARCH == "ppc64le" || runtime.GOARCH == "ppc64" ||
	runtime.GOARCH == "s390x"

// id returns the document's id, unescaped: its key without the partition
// key's encoding.
func (e *entry) id() string { return e.key()[e.pkLen:] }

// pk returns the encoding of the entry's partition key ("" in a collection
// without one).
func (e *entry) pk() string { return e.key()[:e.pkLen] }

// expiry is the entry's expiry second under the DefaultTTL def (0 for off),
// neverExpires when it cannot expire.
func (e *entry) expiry(def int32) int64 { return expiryAt(e.ts, effectiveTTL(def, e.ttl)) }

// etagText is the entry's _etag as it is written.
func (e *entry) etagText() [etagLen]byte { return etagDigits(e.etag) }

func etagDigits(n uint64) [etagLen]byte {
	const hex = "0123456789abcdef"
	var d [etagLen]byte
	for i := etagLen - 1; i >= 0; i-- {
		d[i] = hex[n&15]
		n >>= 4
	}
	return d
}

// etagIs reports whether the entry's _etag is s, without allocating.
func (e *entry) etagIs(s string) bool {
	d := e.etagText()
	return string(d[:]) == s
}

// stampAt is the offset in the stored JSON of its final '}', where the
// stamp goes; past 1 (the '{') when the object has members.
func (e *entry) stampAt() int { return int(e.n) - 1 }

// jsonLen is the length of the document's JSON with its stamp.
func (e *entry) jsonLen() int {
	n := e.stampAt() + len(`"_ts":`) + decimalLen(e.ts) + len(`,"_etag":"`) + etagLen + len(`"}`)
	if e.stampAt() > 1 {
		n++ // the comma before the stamp
	}
	return n
}

// appendJSON appends the document's JSON with its stamp: the stored JSON up
// to the final '}', then `,"_ts":<ts>,"_etag":"<etag>"}`.
func (e *entry) appendJSON(dst []byte) []byte {
	dst = append(dst, e.raw()[:e.stampAt()]...)
	d := e.etagText()
	return jsonscan.AppendStamp(dst, e.ts, unsafe.String(&d[0], etagLen), e.stampAt() > 1)
}

// decimalLen is the number of characters strconv.FormatInt(v, 10) returns.
func decimalLen(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n++
		u = -u
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// slot is an entry with its expiry second: what a sweep removes and
// reports, and what a Document is made of.
type slot struct {
	e   *entry
	exp int64
}

// Document is a stored document as a read or write returned it: an immutable
// value, safe to keep and to share between goroutines. Nothing done with it
// changes what is stored; JSON and Decode hand out copies.
//
// The zero Document is empty: its ID is "" and JSON returns nil.
type Document struct {
	e   *entry
	exp int64 // expiry second when the document was returned
}

// ID returns the document's id, unescaped.
func (d Document) ID() string {
	if d.e == nil {
		return ""
	}
	return d.e.id()
}

// PartitionKey returns the document's partition key: the value at the
// collection's PartitionKeyPath when it was written. It is
// PartitionKeyNone in a collection without a PartitionKeyPath, and for the
// zero Document.
func (d Document) PartitionKey() PartitionKey {
	if d.e == nil || d.e.pkLen == 0 || d.e.pk() == "/u" {
		return PartitionKey{}
	}
	return PartitionKey{enc: strings.Clone(d.e.pk())}
}

// TS returns the document's _ts: the time of its last write, whole seconds,
// in UTC. The zero Document returns the zero time.
func (d Document) TS() time.Time {
	if d.e == nil {
		return time.Time{}
	}
	return time.Unix(d.e.ts, 0).UTC()
}

// ETag returns the document's _etag, an opaque string that changes with every
// write. Pass it to ReplaceIfMatch or DeleteIfMatch for optimistic
// concurrency.
func (d Document) ETag() string {
	if d.e == nil {
		return ""
	}
	t := d.e.etagText()
	return string(t[:])
}

// TTL returns the document's own top-level ttl and true, or 0 and false when
// it has none. It is the value as written (-1 or 1..MaxTTL), whatever the
// collection's DefaultTTL makes of it; see ExpiresAt for the effect.
func (d Document) TTL() (int32, bool) {
	if d.e == nil || d.e.ttl == 0 {
		return 0, false
	}
	return d.e.ttl, true
}

// ExpiresAt returns the first instant at which the document is expired, under
// the DefaultTTL in force when the document was returned, and true; or the
// zero time and false when it does not expire. A later SetDefaultTTL does not
// change the value a Document already holds.
func (d Document) ExpiresAt() (time.Time, bool) {
	if d.e == nil || d.exp == neverExpires {
		return time.Time{}, false
	}
	return time.Unix(d.exp, 0).UTC(), true
}

// JSON returns a copy of the stored JSON: the document as written, with its
// top-level _ts and _etag set by the collection (they are its last members).
// The zero Document returns nil.
func (d Document) JSON() []byte {
	if d.e == nil {
		return nil
	}
	return d.e.appendJSON(make([]byte, 0, d.e.jsonLen()))
}

// AppendJSON appends what JSON returns to dst and returns the extended
// slice, so that a server can write documents out without an allocation
// each. The zero Document appends nothing.
func (d Document) AppendJSON(dst []byte) []byte {
	if d.e == nil {
		return dst
	}
	return d.e.appendJSON(dst)
}

// MarshalJSON returns the stored JSON, so a Document embeds as itself in
// encoding/json output and can be written back with Upsert or Replace.
func (d Document) MarshalJSON() ([]byte, error) {
	if d.e == nil {
		return []byte("null"), nil
	}
	return d.JSON(), nil
}

// Decode unmarshals the stored JSON into v with encoding/json. v gets its own
// copy of everything; the zero Document decodes as JSON null.
func (d Document) Decode(v any) error {
	b, _ := d.MarshalJSON()
	return json.Unmarshal(b, v)
}

// String returns the stored JSON, for printing.
func (d Document) String() string {
	if d.e == nil {
		return ""
	}
	b := d.JSON()
	return unsafe.String(unsafe.SliceData(b), len(b))
}
