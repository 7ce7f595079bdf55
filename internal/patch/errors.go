package patch

import (
	"errors"
	"strconv"
	"strings"
)

// The errors Parse and Apply return. Every error they return is an *Error
// that wraps exactly one of these; match them with errors.Is, and use
// errors.As to reach the *Error for the operation's index and path.
var (
	// ErrInvalidPatch is returned when an operation is malformed, whatever
	// the document: an unknown kind, a path that is not a JSON Pointer
	// beginning with '/' (or has a '~' not followed by '0' or '1', or is not
	// valid UTF-8), a value missing where the kind needs one or given where
	// it takes none, a value that is not one valid JSON value, an incr
	// value that is not a number, a move without a from or into a child of
	// its own from. Parse also returns it for input that is not the wire
	// form.
	ErrInvalidPatch = errors.New("invalid patch operation")

	// ErrInvalidDocument is returned by Apply when the document is not a
	// JSON object (Index -1), or when an operation walks through bytes of
	// it that are not JSON (the Index of that operation). Apply does not
	// validate the parts of the document it does not walk through; see
	// Apply.
	ErrInvalidDocument = errors.New("invalid document")

	// ErrProtectedPath is returned when an operation's path, or a move's
	// from, is a protected path, lies inside one or contains one: "/id",
	// the system properties "/_ts", "/_etag", "/_rid", "/_self",
	// "/_attachments", and the paths the caller passes to Apply.
	ErrProtectedPath = errors.New("path cannot be patched")

	// ErrPathNotFound is returned when an operation needs something the
	// document does not have: the member or element that replace, remove
	// or a move's from names; a parent (every path but the last segment)
	// that is absent or is not an object or array, since no operation
	// creates intermediate objects; an array index that is out of bounds
	// for the operation, or a segment that is not an array index where
	// the parent is an array.
	ErrPathNotFound = errors.New("path not found")

	// ErrNotNumber is returned when incr targets a value that exists and
	// is not a number (null included).
	ErrNotNumber = errors.New("not a number")

	// ErrOverflow is returned when incr's result is out of range: the sum
	// of two integers outside the int64 range, or a sum that is not a
	// finite float64.
	ErrOverflow = errors.New("number out of range")
)

// Error is the error Parse and Apply return. It unwraps to one of the
// package's sentinel errors (Err).
type Error struct {
	// Index is the position of the failing operation in the list, or -1
	// when the error is not tied to one operation (the document itself,
	// or Parse's input that is not an array).
	Index int
	// Kind is the failing operation's kind, or 0 when Index is -1 or the
	// kind was not known.
	Kind Kind
	// Path is the path the error is about: the operation's path, or a
	// move's from when the source is at fault. It is whole; Error's
	// message shortens it.
	Path string
	// Err is the sentinel: ErrInvalidPatch, ErrInvalidDocument,
	// ErrProtectedPath, ErrPathNotFound, ErrNotNumber or ErrOverflow.
	Err error
	// Detail says what exactly is wrong, for example
	// `member "b" is absent` or "index 7 is out of bounds (length 3)".
	Detail string
}

// Error returns a message such as
// `patch operation 2 (remove "/a/b"): path not found: member "b" is absent`,
// or `patch: invalid document: offset 17: invalid character 'x'`. A path
// longer than 64 bytes is cut in the message, with a marker saying so, so
// that a huge path does not make a huge message.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Index < 0 {
		b.WriteString("patch")
	} else {
		b.WriteString("patch operation ")
		b.WriteString(strconv.Itoa(e.Index))
		if e.Kind != 0 || e.Path != "" {
			b.WriteString(" (")
			if e.Kind != 0 {
				b.WriteString(e.Kind.String())
				b.WriteByte(' ')
			}
			b.WriteString(quoteCut(e.Path))
			b.WriteByte(')')
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// maxQuoted is how many bytes of a path or member name an error message
// quotes before cutting it.
const maxQuoted = 64

// quoteCut quotes s for a message, cut to its first maxQuoted bytes (on a
// UTF-8 boundary) with a marker giving the full length when longer.
func quoteCut(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	n := maxQuoted
	for n > 0 && s[n]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		n--
	}
	return strconv.Quote(s[:n]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// failure is an error found while applying one operation, before Apply
// knows the operation's index: a sentinel and a detail.
type failure struct {
	err    error
	detail string
	// from reports that the failure concerns a move's from, not its path.
	from bool
}

func fail(err error, detail string) *failure { return &failure{err: err, detail: detail} }
