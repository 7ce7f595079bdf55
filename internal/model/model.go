// Package model is a reference model of ttlstore's TTL contract
// (shared/spec/ttl-semantics.md, rules R1 to R16), written to be obviously
// correct rather than fast, for tests that run the same operations on it and
// on a real Collection and compare every result.
//
// It keeps every stored document, expired or not, in a plain map, and
// decides expiry from the TTL matrix (R1) and the boundary rule (R2) each
// time it is asked: there is no index, no sweeper and no cached expiry. It
// parses documents with encoding/json and does not import the ttlstore
// package, so it cannot share that package's mistakes.
//
// A Model is not safe for concurrent use.
package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of the contract (R6, R7, R8), repeated here rather than imported.
const (
	// MaxTTL is the largest ttl and DefaultTTL, in seconds.
	MaxTTL = math.MaxInt32
	// MaxIDLength is the longest id, in bytes of UTF-8.
	MaxIDLength = 1023
	// MaxDepth is the deepest nesting of objects and arrays; the document
	// itself is level 1.
	MaxDepth = 128
	// DefaultMaxDocumentSize is the size limit New uses for 0: 2 MiB.
	DefaultMaxDocumentSize = 2 << 20
)

// The error classes of the contract. Every error the Model returns wraps
// exactly one of them; tests map each to the ttlstore sentinel of the same
// name.
var (
	ErrNotFound           = errors.New("model: not found")
	ErrConflict           = errors.New("model: conflict")
	ErrPreconditionFailed = errors.New("model: precondition failed")
	ErrInvalidTTL         = errors.New("model: invalid ttl")
	ErrInvalidDocument    = errors.New("model: invalid document")
	ErrTooLarge           = errors.New("model: too large")
	ErrClosed             = errors.New("model: closed")
)

// Doc is one stored version of a document. The Model never changes a Doc
// once made: a write makes a new one.
type Doc struct {
	// ID is the document's id, unescaped.
	ID string
	// Members are the document's top-level members as encoding/json decodes
	// them (the last of duplicate keys wins), raw values byte for byte as
	// written, without "_ts" and "_etag".
	Members map[string]json.RawMessage
	// TS is the _ts of the write, in whole Unix seconds.
	TS int64
	// TTL is the document's own ttl, 0 when it has none.
	TTL int32
	// ETag names this version: "m1", "m2", ... in the order of the writes.
	// A test maps it to the _etag the real collection gave the same write.
	ETag string
}

// Stats mirrors ttlstore.Stats.
type Stats struct {
	Live    int
	Expired int
	Swept   uint64
}

// Model is the reference collection.
type Model struct {
	maxSize int
	now     time.Time
	def     int32          // the DefaultTTL: 0 off, -1, or 1..MaxTTL
	docs    map[string]Doc // everything stored, expired documents too, until removed
	removed []Doc          // removed because expired, not yet taken by TakeExpired
	swept   uint64         // how many documents were ever removed because expired
	writes  uint64         // how many versions were made: the last ETag's number
	closed  bool
	durable bool // a closed durable collection's Sweep removes nothing
}

// New returns an empty Model whose clock reads now, with the given
// DefaultTTL (nil: off) and size limit (0: DefaultMaxDocumentSize). An
// invalid DefaultTTL is ErrInvalidTTL.
func New(now time.Time, defaultTTL *int32, maxSize int) (*Model, error) {
	def, err := checkDefault(defaultTTL)
	if err != nil {
		return nil, err
	}
	if maxSize == 0 {
		maxSize = DefaultMaxDocumentSize
	}
	return &Model{maxSize: maxSize, now: now, def: def, docs: make(map[string]Doc)}, nil
}

// Now returns the model's clock.
func (m *Model) Now() time.Time { return m.now }

// Set moves the model's clock to t, which must not be before Now.
func (m *Model) Set(t time.Time) {
	if t.Before(m.now) {
		panic(fmt.Sprintf("model: clock moved back from %v to %v", m.now, t))
	}
	m.now = t
}

// Advance moves the model's clock forward by d >= 0.
func (m *Model) Advance(d time.Duration) { m.Set(m.now.Add(d)) }

// second is now in whole Unix seconds, rounded down (R2).
func (m *Model) second() int64 { return m.now.Unix() }

// DefaultTTL returns the DefaultTTL, nil when TTL is off.
func (m *Model) DefaultTTL() *int32 {
	if m.def == 0 {
		return nil
	}
	d := m.def
	return &d
}

// Expiry returns the whole second from which d is expired under the current
// DefaultTTL, read straight off the matrix of R1, and true; or 0 and false
// when d never expires.
func (m *Model) Expiry(d Doc) (int64, bool) {
	switch {
	case m.def == 0: // column "off": nothing expires, own ttl ignored
		return 0, false
	case d.TTL == -1: // row "-1": never, whatever the default
		return 0, false
	case d.TTL > 0: // row "m", columns -1 and n: m seconds after _ts
		return d.TS + int64(d.TTL), true
	case m.def == -1: // row "absent", column -1: never
		return 0, false
	default: // row "absent", column n: n seconds after _ts
		return d.TS + int64(m.def), true
	}
}

// expired reports whether d is expired now: its age in whole seconds has
// reached its effective ttl (R2: the boundary second is expired).
func (m *Model) expired(d Doc) bool {
	exp, ok := m.Expiry(d)
	return ok && m.second() >= exp
}

// Stored returns the stored version of id, expired or not, as a test needs
// it to pick the _etag of an expired document.
func (m *Model) Stored(id string) (Doc, bool) {
	d, ok := m.docs[id]
	return d, ok
}

// NextExpiry returns the earliest expiry second, after the current one, of
// any stored document, and false when no document will expire.
func (m *Model) NextExpiry() (int64, bool) {
	var next int64
	found := false
	for _, d := range m.docs {
		if exp, ok := m.Expiry(d); ok && exp > m.second() && (!found || exp < next) {
			next, found = exp, true
		}
	}
	return next, found
}

// Writes.

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

// Whole-collection calls. They keep working after Close.

// Live returns the live documents, sorted by id.
func (m *Model) Live() []Doc {
	var out []Doc
	for _, d := range m.docs {
		if !m.expired(d) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b Doc) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// IDs returns the ids of the live documents, sorted.
func (m *Model) IDs() []string {
	var out []string
	for _, d := range m.Live() {
		out = append(out, d.ID)
	}
	return out
}

// Len returns the number of live documents.
func (m *Model) Len() int { return len(m.Live()) }

// Stats returns the counts: live documents, expired ones still stored, and
// documents ever removed because they expired.
func (m *Model) Stats() Stats {
	live := m.Len()
	return Stats{Live: live, Expired: len(m.docs) - live, Swept: m.swept}
}

// Sweep removes every expired document, reports each, and returns how many.
func (m *Model) Sweep() int {
	if m.closed && m.durable {
		return 0
	}
	n := 0
	for _, d := range m.docs {
		if m.expired(d) {
			m.removeExpired(d)
			n++
		}
	}
	return n
}

// SetDefaultTTL changes the DefaultTTL. A change to a different value first
// removes (and reports) every document expired under the old one (R13); the
// same value changes nothing. An invalid value is ErrInvalidTTL, checked
// before ErrClosed.
func (m *Model) SetDefaultTTL(p *int32) error {
	def, err := checkDefault(p)
	if err != nil {
		return err
	}
	if m.closed {
		return ErrClosed
	}
	if def != m.def {
		m.Sweep()
		m.def = def
	}
	return nil
}

// Close makes the calls on one document, and SetDefaultTTL, return
// ErrClosed from now on.
func (m *Model) Close() { m.closed = true }

// SetDurable makes the model one of a durable collection, whose Sweep after
// Close removes nothing: it could not log the removal, and a removal that
// is not logged would be reported again after the next Open.
func (m *Model) SetDurable() { m.durable = true }

// TakeExpired returns the documents removed because they expired since the
// last call, in no particular order, and forgets them.
func (m *Model) TakeExpired() []Doc {
	out := m.removed
	m.removed = nil
	return out
}

// Validation.

// checkDefault validates a DefaultTTL (R7) and returns it with 0 for nil.
func checkDefault(p *int32) (int32, error) {
	if p == nil {
		return 0, nil
	}
	if n := *p; n != -1 && n < 1 {
		return 0, fmt.Errorf("%w: DefaultTTL %d", ErrInvalidTTL, n)
	}
	return *p, nil
}

// parse validates a document (R6, R8) the slow way, with encoding/json, and
// returns its id, its ttl (0 when absent) and its members. Checks run in the
// order the contract gives their errors precedence: the size of the bytes
// as passed, then the JSON itself, then the id, then the ttl.
func (m *Model) parse(src []byte) (string, int32, map[string]json.RawMessage, error) {
	invalid := func(format string, args ...any) (string, int32, map[string]json.RawMessage, error) {
		return "", 0, nil, fmt.Errorf("%w: "+format, append([]any{ErrInvalidDocument}, args...)...)
	}
	if len(src) > m.maxSize {
		return "", 0, nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(src), m.maxSize)
	}
	if !utf8.Valid(src) {
		return invalid("invalid UTF-8")
	}
	if !json.Valid(src) {
		return invalid("not JSON")
	}
	if b := bytes.TrimLeft(src, " \t\r\n"); b[0] != '{' {
		return invalid("not an object")
	}
	if d := depth(src); d > MaxDepth {
		return invalid("depth %d", d)
	}
	keys := topLevelKeys(src)
	for _, k := range []string{"id", "ttl"} {
		if n := keys[k]; n > 1 {
			return invalid("%d %q members", n, k)
		}
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(src, &members); err != nil {
		return invalid("%v", err)
	}

	rawID, ok := members["id"]
	if !ok {
		return invalid("missing id")
	}
	var id string
	if rawID[0] != '"' || json.Unmarshal(rawID, &id) != nil {
		return invalid("id %s is not a string", rawID)
	}
	switch {
	case id == "":
		return invalid("empty id")
	case len(id) > MaxIDLength:
		return invalid("id of %d bytes", len(id))
	case strings.ContainsAny(id, `/\`):
		return invalid("id %q", id)
	}

	var ttl int32
	if raw, ok := members["ttl"]; ok {
		// A JSON integer literal is also valid syntax for ParseInt, which
		// rejects fractions and exponents.
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || (n != -1 && (n < 1 || n > MaxTTL)) {
			return "", 0, nil, fmt.Errorf("%w: ttl %s", ErrInvalidTTL, raw)
		}
		ttl = int32(n)
	}
	delete(members, "_ts")
	delete(members, "_etag")
	return id, ttl, members, nil
}

// depth returns how deeply src's objects and arrays nest; src is valid JSON.
func depth(src []byte) int {
	dec := json.NewDecoder(bytes.NewReader(src))
	d, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return deepest
		}
		if err != nil {
			panic(err) // src was validated
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			d++
			deepest = max(deepest, d)
		case json.Delim('}'), json.Delim(']'):
			d--
		}
	}
}

// topLevelKeys counts the top-level keys of src, a valid JSON object, by
// their decoded names, duplicates included.
func topLevelKeys(src []byte) map[string]int {
	dec := json.NewDecoder(bytes.NewReader(src))
	keys := make(map[string]int)
	must := func(err error) {
		if err != nil {
			panic(err) // src was validated
		}
	}
	_, err := dec.Token() // '{'
	must(err)
	for dec.More() {
		tok, err := dec.Token()
		must(err)
		keys[tok.(string)]++
		var skip json.RawMessage
		must(dec.Decode(&skip))
	}
	return keys
}
