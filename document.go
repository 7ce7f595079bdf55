package ttlstore

import (
	"encoding/json"
	"time"
)

// etagLen is the length of the _etag values a Collection writes: 16
// lowercase hex digits.
const etagLen = 16

// entry is one stored document. It is immutable once published: a write
// makes a new entry rather than changing one, so a Document can share it
// without copying. (48 bytes: one small size class.)
type entry struct {
	json    string // stored form, ending in "_ts":N,"_etag":"E"}
	id      string // a substring of json unless the id was written with escapes
	ts      int64  // _ts, whole Unix seconds
	ttl     int32  // the document's own top-level ttl; 0 when it has none
	stampAt int32  // offset in json where the _ts/_etag stamp begins
}

// slot is an entry with its expiry second under the current DefaultTTL
// (neverExpires when it cannot expire). It is what a shard's map and expiry
// index hold: keeping exp beside the pointer lets a read decide expiry, and
// the index order entries, without loading the entry from memory.
type slot struct {
	e   *entry
	exp int64
}

func (e *entry) etag() string { return e.json[len(e.json)-2-etagLen : len(e.json)-2] }

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
	return d.e.id
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
	return d.e.etag()
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
	return []byte(d.e.json)
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
	return d.e.json
}
