package model

import (
	"fmt"
	"maps"
	"strconv"
)

// The writes of one document, and batches.

type writeMode int

const (
	mustNotExist writeMode = iota // Create
	mayExist                      // Upsert
	mustExist                     // Replace
)

// Create stores doc unless a live document has its id (ErrConflict).
func (m *Model) Create(doc []byte) (Doc, error) { return m.write(doc, mustNotExist, nil) }

// Upsert stores doc, replacing a document with its id.
func (m *Model) Upsert(doc []byte) (Doc, error) { return m.write(doc, mayExist, nil) }

// Replace stores doc in place of the live document with its id
// (ErrNotFound when there is none).
func (m *Model) Replace(doc []byte) (Doc, error) { return m.write(doc, mustExist, nil) }

// ReplaceIfMatch is Replace when the live document's ETag is etag, and
// ErrPreconditionFailed otherwise.
func (m *Model) ReplaceIfMatch(doc []byte, etag string) (Doc, error) {
	return m.write(doc, mustExist, &etag)
}

func (m *Model) write(src []byte, mode writeMode, ifMatch *string) (Doc, error) {
	if m.closed {
		return Doc{}, ErrClosed
	}
	id, ttl, members, err := m.parse(src)
	if err != nil {
		return Doc{}, err
	}
	old, exists := m.docs[id]
	live := exists && !m.expired(old)
	switch {
	case mode == mustNotExist && live:
		return Doc{}, fmt.Errorf("%w: %q", ErrConflict, id)
	case mode == mustExist && !live:
		return Doc{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	case ifMatch != nil && old.ETag != *ifMatch:
		return Doc{}, fmt.Errorf("%w: %q has %s, not %s", ErrPreconditionFailed, id, old.ETag, *ifMatch)
	}
	if exists && !live {
		m.removeExpired(old)
	}
	return m.store(Doc{ID: id, Members: members, TTL: ttl}), nil
}

// store gives d a new _ts and ETag and stores it.
func (m *Model) store(d Doc) Doc {
	m.writes++
	d.TS = m.second()
	d.ETag = "m" + strconv.FormatUint(m.writes, 10)
	m.docs[d.ID] = d
	return d
}

// removeExpired removes an expired document and reports it.
func (m *Model) removeExpired(d Doc) {
	delete(m.docs, d.ID)
	m.removed = append(m.removed, d)
	m.swept++
}

// Touch rewrites the live document with a new _ts and ETag.
func (m *Model) Touch(id string) (Doc, error) {
	d, err := m.Read(id)
	if err != nil {
		return Doc{}, err
	}
	return m.store(d), nil
}

// Read returns the live document with the id, or ErrNotFound.
func (m *Model) Read(id string) (Doc, error) {
	if m.closed {
		return Doc{}, ErrClosed
	}
	d, ok := m.docs[id]
	if !ok || m.expired(d) {
		return Doc{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return d, nil
}

// Delete removes the live document with the id, or returns ErrNotFound.
// It is not reported as expired.
func (m *Model) Delete(id string) error {
	if _, err := m.Read(id); err != nil {
		return err
	}
	delete(m.docs, id)
	return nil
}

// DeleteIfMatch is Delete when the live document's ETag is etag, and
// ErrPreconditionFailed otherwise.
func (m *Model) DeleteIfMatch(id, etag string) error {
	d, err := m.Read(id)
	if err != nil {
		return err
	}
	if d.ETag != etag {
		return fmt.Errorf("%w: %q has %s, not %s", ErrPreconditionFailed, id, d.ETag, etag)
	}
	delete(m.docs, id)
	return nil
}

// BatchOp is one operation of a Batch: Kind is "Create", "Upsert",
// "Replace", "ReplaceIfMatch" (Doc, and ETag for the last), "Read",
// "Delete", "DeleteIfMatch" (ID, and ETag for the last) or "Touch" (ID).
type BatchOp struct {
	Kind string
	Doc  []byte
	ID   string
	ETag string
}

// Batch applies ops in order, all or none, as ttlstore.ExecuteBatch: it
// returns each operation's document (the zero Doc for a delete), or the
// index of the operation that failed (-1 for the batch as a whole) and its
// error, and then nothing is changed. Every document is validated before
// any operation is applied, so an invalid one is reported whatever fails
// before it.
func (m *Model) Batch(ops []BatchOp) ([]Doc, int, error) {
	if m.closed {
		return nil, -1, ErrClosed
	}
	for i, op := range ops {
		if op.Doc != nil {
			if _, _, _, err := m.parse(op.Doc); err != nil {
				return nil, i, err
			}
		}
	}
	docs, removed, swept, writes := maps.Clone(m.docs), len(m.removed), m.swept, m.writes
	out := make([]Doc, len(ops))
	for i, op := range ops {
		var err error
		switch op.Kind {
		case "Create":
			out[i], err = m.Create(op.Doc)
		case "Upsert":
			out[i], err = m.Upsert(op.Doc)
		case "Replace":
			out[i], err = m.Replace(op.Doc)
		case "ReplaceIfMatch":
			out[i], err = m.ReplaceIfMatch(op.Doc, op.ETag)
		case "Read":
			out[i], err = m.Read(op.ID)
		case "Delete":
			err = m.Delete(op.ID)
		case "DeleteIfMatch":
			err = m.DeleteIfMatch(op.ID, op.ETag)
		case "Touch":
			out[i], err = m.Touch(op.ID)
		default:
			panic("model: batch operation " + op.Kind)
		}
		if err != nil {
			m.docs, m.removed, m.swept, m.writes = docs, m.removed[:removed], swept, writes
			return nil, i, err
		}
	}
	return out, -1, nil
}
