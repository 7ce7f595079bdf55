package ttlstore

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/ttlstore/ttlstore/internal/jsonscan"
)

// Writes: Create, Upsert, Replace and their conditional forms, Delete and
// Touch. A write validates and builds its entry outside any lock (prepare),
// then under its shard's lock checks its condition, reserves room
// (bound.go), logs (durable_log.go) and files the entry; it reports what it
// replaced, swept or evicted after its lock and any room are let go, and
// after its record is durable.

// writeMode says what a write requires of the id's current document.
type writeMode uint8

const (
	mustNotExist writeMode = iota // Create
	mayExist                      // Upsert
	mustExist                     // Replace
)

// Create stores doc, which must not share its id with a live document
// (ErrConflict). An expired document with the same id does not count: it is
// replaced as if it were gone (R9).
//
// doc is the JSON object as []byte, json.RawMessage or string (a Go string
// is taken as JSON text, not marshaled), a Document, or any value that
// encoding/json marshals to an object, such as a struct with
// `json:"id"` and `json:"ttl,omitempty"` fields. The collection copies what
// it keeps: changing doc afterwards changes nothing stored. It sets _ts and
// _etag, replacing any the caller sent, and keeps everything else, the
// top-level ttl included, as written.
//
// It returns the stored document, or an error matching ErrInvalidDocument,
// ErrInvalidTTL or ErrTooLarge for a bad document (which changes nothing), or
// ErrClosed.
//
// In a partitioned collection (Options.PartitionKeyPath) the document's
// partition key is the value at the path, and an id is unique within its
// partition only: see CreateIn.
func (c *Collection) Create(doc any) (Document, error) {
	return c.write("create", doc, mustNotExist, "", false, nil)
}

// CreateIn is Create for a document that must be in the partition pk: a
// document whose partition key is another is refused with
// ErrInvalidDocument, naming both. On a collection without a
// PartitionKeyPath pk must be PartitionKeyNone (ErrInvalidPartitionKey
// otherwise). UpsertIn, ReplaceIn and ReplaceIfMatchIn check the same.
func (c *Collection) CreateIn(pk PartitionKey, doc any) (Document, error) {
	return c.write("create", doc, mustNotExist, "", false, &pk)
}

// Upsert stores doc, replacing the live document with its id if there is
// one. It accepts the same documents and returns the same errors as Create,
// except ErrConflict.
func (c *Collection) Upsert(doc any) (Document, error) {
	return c.write("upsert", doc, mayExist, "", false, nil)
}

// UpsertIn is Upsert for a document that must be in the partition pk (see
// CreateIn).
func (c *Collection) UpsertIn(pk PartitionKey, doc any) (Document, error) {
	return c.write("upsert", doc, mayExist, "", false, &pk)
}

// Replace stores doc in place of the live document with its id, or returns
// ErrNotFound when there is none (an expired document counts as none). The
// whole document is replaced: if doc has no ttl, the document inherits the
// DefaultTTL again, counted from the new _ts (R5). It accepts the same
// documents as Create. In a partitioned collection, the document replaced
// is the one with doc's id in doc's partition: a partition key cannot
// change by a replace (a document with another one is another document,
// as in Azure Cosmos DB).
func (c *Collection) Replace(doc any) (Document, error) {
	return c.write("replace", doc, mustExist, "", false, nil)
}

// ReplaceIn is Replace for a document that must be in the partition pk
// (see CreateIn).
func (c *Collection) ReplaceIn(pk PartitionKey, doc any) (Document, error) {
	return c.write("replace", doc, mustExist, "", false, &pk)
}

// ReplaceIfMatch is Replace on the condition that the live document's _etag
// is etag; otherwise it returns ErrPreconditionFailed and changes nothing.
// An expired document is ErrNotFound, even when etag matches its old _etag.
// On a partitioned collection it returns ErrPartitionKeyRequired: use
// ReplaceIfMatchIn.
func (c *Collection) ReplaceIfMatch(doc any, etag string) (Document, error) {
	if c.pk != nil {
		return Document{}, newErrorDetail("replace", "", ErrPartitionKeyRequired, "the collection's PartitionKeyPath is "+strconv.Quote(c.pk.path)+": use ReplaceIfMatchIn")
	}
	return c.write("replace", doc, mustExist, etag, true, nil)
}

// ReplaceIfMatchIn is ReplaceIfMatch for a document that must be in the
// partition pk (see CreateIn).
func (c *Collection) ReplaceIfMatchIn(pk PartitionKey, doc any, etag string) (Document, error) {
	return c.write("replace", doc, mustExist, etag, true, &pk)
}

// write is the writes of a whole document; in, when not nil, is the
// partition the caller says doc is in.
func (c *Collection) write(op string, doc any, mode writeMode, ifMatch string, checkMatch bool, in *PartitionKey) (Document, error) {
	if c.closed.Load() {
		return Document{}, newError(op, "", ErrClosed)
	}
	e, err := c.prepare(op, doc)
	if err != nil {
		return Document{}, err
	}
	if in != nil {
		if err := c.checkIn(op, *in, e); err != nil {
			return Document{}, err
		}
	}
	return c.writeEntry(op, e, mode, ifMatch, checkMatch)
}

// writeEntry is write of e, an entry prepare built: it checks its weight
// and runs its commit. ReadOrLoad stores what a load returned with it,
// having prepared the entry to check its id.
func (c *Collection) writeEntry(op string, e *entry, mode writeMode, ifMatch string, checkMatch bool) (Document, error) {
	if err := c.checkWeight(op, e); err != nil {
		return Document{}, err
	}
	id := e.key()
	s, h := c.shardFor(id)
	var cm commit
	m := cm.single(op, put, id, s, h)
	m.mode, m.checkMatch, m.ifMatch, m.e, m.w = mode, checkMatch, ifMatch, e, weigh(e)
	if err := c.run(&cm); err != nil {
		return Document{}, err
	}
	return Document{e: e, exp: m.exp}, nil
}

// prepare validates doc and builds its entry, all but the parts that depend
// on the time of the write (_ts, _etag), outside any lock.
func (c *Collection) prepare(op string, doc any) (*entry, error) {
	src, err := source(doc)
	if err != nil {
		return nil, newErrorDetail(op, "", ErrInvalidDocument, err.Error())
	}
	if len(src) > c.maxSize {
		return nil, newErrorDetail(op, "", ErrTooLarge,
			strconv.Itoa(len(src))+" bytes, more than the limit of "+strconv.Itoa(c.maxSize))
	}
	// The stored form is never longer than src, so this is the only
	// allocation of a write when src is compact JSON without _ts and _etag.
	e, data := newEntry(len(src))
	out, f, err := jsonscan.Strip(data[:0], src, MaxDepth)
	if err != nil {
		return nil, newErrorDetail(op, "", ErrInvalidDocument, strings.TrimPrefix(err.Error(), "jsonscan: "))
	}
	return c.finish(op, e, out, &f, len(src)-len(out))
}

// finish completes the entry e, whose data holds out, the stored form of a
// document in which jsonscan found f: it checks the id and the ttl, and
// copies out to an entry of its own size when the id has escapes or e has
// more than maxSlack bytes unused at its end.
func (c *Collection) finish(op string, e *entry, out []byte, f *jsonscan.Fields, slack int) (*entry, error) {
	id, detail := checkID(f, out)
	if detail != "" {
		return nil, newErrorDetail(op, "", ErrInvalidDocument, detail)
	}
	ttl, detail := parseTTL(f.TTLKind, f.TTLRaw)
	if detail != "" {
		return nil, newErrorDetail(op, id, ErrInvalidTTL, detail)
	}
	idOff := f.IDStart
	if c.pk != nil {
		// The key, after the JSON: the partition key's encoding, then
		// the id.
		enc, detail := c.pk.partitionKeyOf(out)
		if detail != "" {
			return nil, newErrorDetail(op, id, ErrInvalidDocument, detail)
		}
		var data []byte
		e, data = newEntry(len(out) + len(enc) + len(id))
		copy(data, out)
		copy(data[len(out):], enc)
		copy(data[len(out)+len(enc):], id)
		*e = entry{
			ttl:   ttl,
			n:     uint32(len(out)),
			idOff: uint32(len(out)),
			idLen: uint32(len(enc) + len(id)),
			pkLen: uint16(len(enc)),
		}
		return e, nil
	}
	if f.IDEscaped || slack > maxSlack {
		// Copy to an entry of the exact size, with room after the JSON
		// for the unescaped id if it has escapes.
		extra := 0
		if f.IDEscaped {
			extra = len(id)
			idOff = len(out)
		}
		var data []byte
		e, data = newEntry(len(out) + extra)
		copy(data, out)
		copy(data[len(out):], id)
	}
	*e = entry{
		ttl:   ttl,
		n:     uint32(len(out)),
		idOff: uint32(idOff),
		idLen: uint32(len(id)),
	}
	return e, nil
}

// maxSlack is the most bytes a write leaves unused at the end of its entry
// (where src had _ts and _etag members or whitespace between members)
// rather than copy the document again.
const maxSlack = 16

// source returns the JSON bytes of a write's argument. The bytes may belong
// to the caller or to a stored entry: they are only read, and copied.
func source(doc any) ([]byte, error) {
	switch v := doc.(type) {
	case nil:
		return nil, errors.New("document is nil")
	case []byte:
		return v, nil
	case string:
		return unsafe.Slice(unsafe.StringData(v), len(v)), nil // only read
	case json.RawMessage:
		return v, nil
	case Document:
		if v.e == nil {
			return nil, errors.New("document is the zero Document")
		}
		// The stored form without its stamp: writing it stamps it anew.
		return v.e.raw(), nil
	case *Document:
		if v == nil {
			return nil, errors.New("document is nil")
		}
		return source(*v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}

// checkID returns the document's id or says what is wrong with it (R8). For
// an id written without escapes the string points into out, so it costs no
// allocation.
func checkID(f *jsonscan.Fields, out []byte) (string, string) {
	var id string
	switch {
	case f.IDKind == jsonscan.KindNone:
		return "", "missing id"
	case f.IDKind != jsonscan.KindString:
		return "", "id " + quoteRaw(f.IDRaw) + " is a JSON " + f.IDKind.String() + ", not a string"
	case f.IDEscaped:
		s, err := jsonscan.Unquote(f.IDRaw)
		if err != nil {
			return "", "id: " + err.Error()
		}
		id = s
	default:
		raw := out[f.IDStart:f.IDEnd]
		id = unsafe.String(unsafe.SliceData(raw), len(raw))
	}
	switch {
	case id == "":
		return "", "id is empty"
	case len(id) > MaxIDLength:
		return "", "id is " + strconv.Itoa(len(id)) + " bytes, longer than " + strconv.Itoa(MaxIDLength)
	case strings.IndexByte(id, '/') >= 0 || strings.IndexByte(id, '\\') >= 0:
		// (Two IndexByte, vectorised, cost an insert 150 instructions
		// less than ContainsAny, which first builds a set of its chars.)
		return "", "id " + quoteID(id) + ` contains "/" or "\"`
	}
	return id, ""
}

// storeLocked files e, which expires at exp, in s under the hash h of its
// id, and tells the eviction policy. ref is the table slot of the id's
// current entry, which expires at oldExp, from lookup; or nil when the id is
// new. The caller accounts for e's weight in the usage; storeLocked counts
// it among the documents that cannot expire (limits.pin). s.mu must be held
// for writing.
func (c *Collection) storeLocked(s *shard, h uint64, e *entry, exp int64, ref *atomic.Pointer[entry], oldExp int64) {
	if ref != nil {
		old := ref.Load()
		if c.lim.cold != nil {
			c.lim.cold.replaced(old, e)
		}
		s.unindexLocked(old, oldExp)
		c.lim.pin(old, oldExp, -1)
		ref.Store(e) // the same id: replaced in place, no second probe
		if c.pk != nil {
			s.partOut(old)
		}
	} else {
		if c.lim.cold != nil {
			c.lim.cold.added(e)
		}
		s.docs.insert(h, e, c.seed) // lookup found no slot: the id is new
		s.size.Store(int32(s.docs.len()))
	}
	s.indexLocked(e, exp)
	c.lim.pin(e, exp, 1)
	c.lim.floor.lower(exp)
	if c.pk != nil {
		s.partIn(e)
	}
}

// indexLocked adds e, which expires at exp, to the shard's expiry index.
// s.mu must be held for writing.
func (s *shard) indexLocked(e *entry, exp int64) {
	s.index.insert(e, exp)
	if exp < s.minExp.Load() {
		s.minExp.Store(exp)
	}
}

// unindexLocked removes e, which expires at exp, from the shard's expiry
// index. s.mu must be held for writing.
func (s *shard) unindexLocked(e *entry, exp int64) {
	s.index.remove(e, exp)
	if exp == s.minExp.Load() && exp != neverExpires {
		s.minExp.Store(s.index.min())
	}
}

// Delete removes the live document with the given id, or returns ErrNotFound
// when there is none (an expired document counts as none). After Close it
// returns ErrClosed. On a partitioned collection it returns
// ErrPartitionKeyRequired: use DeleteIn.
func (c *Collection) Delete(id string) error {
	key, err := c.keyOf("delete", id)
	if err != nil {
		return err
	}
	return c.remove("delete", key, "", false)
}

// DeleteIn is Delete of the document with the given id in the partition
// pk. On a collection without a PartitionKeyPath, pk must be
// PartitionKeyNone (ErrInvalidPartitionKey otherwise); so for every In
// form.
func (c *Collection) DeleteIn(pk PartitionKey, id string) error {
	key, err := c.keyIn("delete", pk, id)
	if err != nil {
		return err
	}
	return c.remove("delete", key, "", false)
}

// DeleteIfMatch is Delete on the condition that the live document's _etag is
// etag; otherwise it returns ErrPreconditionFailed and deletes nothing.
func (c *Collection) DeleteIfMatch(id, etag string) error {
	key, err := c.keyOf("delete", id)
	if err != nil {
		return err
	}
	return c.remove("delete", key, etag, true)
}

// DeleteIfMatchIn is DeleteIfMatch of the document with the given id in
// the partition pk.
func (c *Collection) DeleteIfMatchIn(pk PartitionKey, id, etag string) error {
	key, err := c.keyIn("delete", pk, id)
	if err != nil {
		return err
	}
	return c.remove("delete", key, etag, true)
}

// remove deletes the document with the given key.
func (c *Collection) remove(op, id, ifMatch string, checkMatch bool) error {
	s, h := c.shardFor(id)
	var cm commit
	m := cm.single(op, del, id, s, h)
	m.checkMatch, m.ifMatch = checkMatch, ifMatch
	return c.run(&cm)
}

// deleteLocked removes e, filed in s under the hash h of its id and
// expiring at exp, takes its weight off the usage and tells the eviction
// policy. s.mu must be held for writing.
func (c *Collection) deleteLocked(s *shard, h uint64, e *entry, exp int64) {
	c.unfileLocked(s, h, e, exp)
	if c.lim.cold != nil {
		c.lim.cold.removedOne(e)
	}
	c.lim.release(1, weigh(e))
}

// unfileLocked is deleteLocked but for the usage, where e's room stays
// counted (but for limits.pin's), and the eviction policy, which is not
// told.
func (c *Collection) unfileLocked(s *shard, h uint64, e *entry, exp int64) {
	s.docs.remove(h, e)
	c.unfiledLocked(s, e, exp)
}

// unfiledLocked is unfileLocked for e, which expires at exp, once it has
// left s's table.
func (c *Collection) unfiledLocked(s *shard, e *entry, exp int64) {
	s.size.Store(int32(s.docs.len()))
	s.unindexLocked(e, exp)
	c.lim.pin(e, exp, -1)
	if c.pk != nil {
		s.partOut(e)
	}
}

// Touch rewrites the live document with the given id unchanged but for a new
// _ts and _etag, which restarts its countdown: the sliding expiration of a
// session cache. It returns the document as stored, ErrNotFound when there is
// no live document with the id, or ErrClosed; on a partitioned collection,
// ErrPartitionKeyRequired (use TouchIn).
func (c *Collection) Touch(id string) (Document, error) {
	key, err := c.keyOf("touch", id)
	if err != nil {
		return Document{}, err
	}
	return c.touch(key)
}

// TouchIn is Touch of the document with the given id in the partition pk.
func (c *Collection) TouchIn(pk PartitionKey, id string) (Document, error) {
	key, err := c.keyIn("touch", pk, id)
	if err != nil {
		return Document{}, err
	}
	return c.touch(key)
}

// touch is Touch of the document with the given key.
func (c *Collection) touch(id string) (Document, error) {
	s, h := c.shardFor(id)
	var cm commit
	m := cm.single("touch", touch, id, s, h)
	if err := c.run(&cm); err != nil {
		return Document{}, err
	}
	return Document{e: m.e, exp: m.exp}, nil
}
