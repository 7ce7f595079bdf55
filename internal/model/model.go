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
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
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
