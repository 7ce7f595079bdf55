// Package jsonscan validates and stamps JSON documents in a single streaming
// pass over their bytes.
//
// Every document written to the store passes through [Stamp] exactly once.
// Stamp checks that the input is one strict RFC 8259 JSON object, locates the
// top-level "id" and "ttl" members, and produces the stored form of the
// document: the same object with every top-level "_ts" and "_etag" member
// removed and fresh "_ts" and "_etag" members appended at the end.
//
// The scanner is hand written: it never decodes into maps or interfaces and
// does not use encoding/json, and it does not allocate when the destination
// slice has enough spare capacity. There are two: a fast one (fast.go) for
// the valid documents that nearly every write brings, which scans a word at
// a time and gives up at the first thing it does not like, and the
// reference one (scanObject, scan.go), which runs when the fast one gave up
// and reports the error precisely. They agree on every input; the tests
// check that.
package jsonscan

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, together with the byte offset in the input and a short reason, for
// example:
//
//	jsonscan: offset 17: invalid character 'x' in string escape: invalid JSON
var (
	// ErrSyntax reports input that is not valid JSON: a grammar violation,
	// trailing data, empty input, a control character in a string, a bad
	// escape, a malformed number, and so on.
	ErrSyntax = errors.New("invalid JSON")
	// ErrNotObject reports valid JSON whose top-level value is not an object.
	ErrNotObject = errors.New("not a JSON object")
	// ErrTooDeep reports objects or arrays nested deeper than the allowed
	// maximum depth. The top-level object is at depth 1.
	ErrTooDeep = errors.New("nesting too deep")
	// ErrInvalidUTF8 reports input that is not valid UTF-8, anywhere in it.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrDuplicateKey reports a top-level object that has two "id" members or
	// two "ttl" members (keys compared after unescaping). Other duplicate keys
	// are allowed, as JSON permits them.
	ErrDuplicateKey = errors.New("duplicate member")
)

// Kind is the JSON type of a value.
type Kind uint8

// Kinds of JSON values.
const (
	// KindNone means the member is absent.
	KindNone Kind = iota
	// KindString is a string.
	KindString
	// KindNumber is a number.
	KindNumber
	// KindObject is an object.
	KindObject
	// KindArray is an array.
	KindArray
	// KindTrue is the literal true.
	KindTrue
	// KindFalse is the literal false.
	KindFalse
	// KindNull is the literal null.
	KindNull
)

// String returns the lower-case name of the kind: "string", "number",
// "object", "array", "true", "false", "null", or "absent" for KindNone.
func (k Kind) String() string {
	switch k {
	case KindNone:
		return "absent"
	case KindString:
		return "string"
	case KindNumber:
		return "number"
	case KindObject:
		return "object"
	case KindArray:
		return "array"
	case KindTrue:
		return "true"
	case KindFalse:
		return "false"
	case KindNull:
		return "null"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Fields reports what Stamp found at the top level of the document. All
// offsets into the output are absolute offsets into the slice Stamp returned,
// so they account for any bytes dst already held.
type Fields struct {
	// IDKind is the kind of the top-level "id" value, KindNone when absent.
	IDKind Kind
	// IDRaw holds the raw bytes of the id value as written in src (for a
	// string, including the quotes). It is a sub-slice of src (with its
	// capacity clipped), or nil when the member is absent.
	IDRaw []byte
	// IDStart and IDEnd are set only for a string id: out[IDStart:IDEnd] is
	// the content of the string between its quotes in the output, exactly as
	// written (possibly escaped; see IDEscaped).
	IDStart, IDEnd int
	// IDEscaped reports that the string id contains a backslash escape; then
	// out[IDStart:IDEnd] is not its value and the caller must use
	// Unquote(IDRaw) instead.
	IDEscaped bool

	// TTLKind is the kind of the top-level "ttl" value, KindNone when absent.
	TTLKind Kind
	// TTLRaw holds the raw bytes of the ttl value exactly as written in src
	// (e.g. `10`, `-1`, `1.5`, `"10"`, `null`). It is a sub-slice of src (with
	// its capacity clipped), or nil when the member is absent.
	TTLRaw []byte

	// StampAt is the offset in the output where the stamp written by
	// AppendStamp begins, including the comma that separates it from the
	// last kept member, if any. Thus, for the output out of Stamp,
	//
	//	AppendStamp(out[:StampAt:StampAt], ts, etag, out[StampAt-1] != '{')
	//
	// reproduces out for the same ts and etag, and restamps the document
	// for different ones. When dst was empty, out[StampAt-1] != '{' is the
	// same as StampAt > 1.
	StampAt int
}

// Stamp validates src as one JSON object (surrounding whitespace allowed,
// nothing else) whose objects and arrays nest at most maxDepth deep (the
// top-level object is depth 1), and appends to dst the stored form of the
// document:
//
//   - '{';
//   - every top-level member except those whose key is "_ts" or "_etag" (keys
//     compared after unescaping, so "\u005fts" counts), each copied byte for
//     byte from its key's opening quote to the end of its value (whitespace
//     inside a member, e.g. around the colon or inside nested values, is kept;
//     whitespace between members is dropped), joined by ',';
//   - the stamp written by AppendStamp: `"_ts":<ts>,"_etag":"<etag>"` preceded
//     by ',' when a member was kept, and the closing '}'.
//
// etag is written verbatim between quotes; the caller guarantees that it needs
// no escaping.
//
// The input must be valid UTF-8 and strict RFC 8259 JSON (the grammar
// encoding/json's Valid accepts), its top-level value must be an object
// nesting at most maxDepth deep (so a maxDepth below 1 rejects every input),
// and that object may not have two "id" members or two "ttl" members. Other
// duplicate keys are allowed and kept; duplicate "_ts" and "_etag" members
// are all removed.
//
// On success Stamp returns the extended slice and the Fields it found. On
// error it returns dst unchanged (same length), a zero Fields, and an error
// wrapping one of ErrSyntax, ErrNotObject, ErrTooDeep, ErrInvalidUTF8 or
// ErrDuplicateKey.
//
// Stamp never modifies src. It does not allocate on success when dst has at
// least len(src)+len(etag)+39 bytes of spare capacity; otherwise it grows dst
// once, up front.
func Stamp(dst, src []byte, ts int64, etag string, maxDepth int) (out []byte, f Fields, err error) {
	extra := maxStampLen + len(etag)
	out, ok := fastScan(dst, src, maxDepth, extra, &f)
	if !ok {
		if out, err = scan(out, src, maxDepth, extra, &f); err != nil {
			return dst, Fields{}, err
		}
	}
	return AppendStamp(out, ts, etag, f.StampAt > len(dst)+1), f, nil
}

// Strip is Stamp without the stamp: it validates src exactly as Stamp does
// and appends to dst the same stored form up to Fields.StampAt, then the
// closing '}'. So the top-level "_ts" and "_etag" members are removed and
// none are added, and
//
//	AppendStamp(out[:f.StampAt:f.StampAt], ts, etag, out[f.StampAt-1] != '{')
//
// yields what Stamp(dst, src, ts, etag, maxDepth) would have. The output is
// never longer than src, so Strip does not allocate when dst has len(src)
// bytes of spare capacity; otherwise it grows dst once, up front.
func Strip(dst, src []byte, maxDepth int) (out []byte, f Fields, err error) {
	out, ok := fastScan(dst, src, maxDepth, 0, &f)
	if !ok {
		if out, err = scan(out, src, maxDepth, 0, &f); err != nil {
			return dst, Fields{}, err
		}
	}
	return append(out, '}'), f, nil
}

// scan validates src, appends to dst its stored form up to Fields.StampAt
// (the '{' and the kept members), after growing dst, if need be, to hold all
// of src plus extra bytes, and sets *f to the Fields found. On error it
// returns dst unchanged, and *f is left undefined.
//
// Stamp and Strip first try fastScan (fast.go), which has the same result
// for valid input, and call scan only when it gives up: then scan decides
// which error to report, or produces the output for valid input that the
// fast path declines.
//
// Invalid UTF-8 anywhere in src is reported as such, before any other
// error. It is not checked in a pass of its own: a byte above 0x7F is only
// valid inside a string, and scanString checks those; other errors look at
// the whole input again to see whether it has invalid UTF-8 somewhere.
func scan(dst, src []byte, maxDepth, extra int, f *Fields) (out []byte, err error) {
	out, *f, err = scanObject(dst, src, maxDepth, extra)
	if err != nil && !utf8.Valid(src) {
		return dst, errInvalidUTF8(src)
	}
	return out, err
}

// scanObject is the reference scanner: scan but for the precedence of
// invalid UTF-8. It is a plain scanner that builds a precise error at the
// first problem, and fastScan must agree with it on every input (see
// fast.go).
func scanObject(dst, src []byte, maxDepth, extra int) (out []byte, f Fields, err error) {
	i := skipWS(src, 0)
	if i >= len(src) {
		return dst, Fields{}, errEOF(i)
	}
	if src[i] != '{' {
		return dst, Fields{}, scanNonObject(src, i, maxDepth)
	}
	if maxDepth < 1 {
		return dst, Fields{}, errTooDeep(i, maxDepth)
	}

	orig := dst
	// The output is never longer than the input plus the stamp, so growing
	// once up front avoids repeated reallocation while copying members.
	if need := len(src) - i + extra; cap(dst)-len(dst) < need {
		dst = slices.Grow(dst, need)
	}
	dst = append(dst, '{')

	// Kept members are not appended one by one: runStart:runEnd is a run of
	// src that is to be copied to dst verbatim, made of the kept members seen
	// so far and the commas between them. It grows while kept members follow
	// each other in src separated by a bare comma (the common case of compact
	// input), and is flushed to dst when that is not so.
	runStart, runEnd := 0, 0
	kept := false // whether a member was kept
	dup := -1     // offset of the first duplicate "id"/"ttl" key, if any
	i = skipWS(src, i+1)
	if i < len(src) && src[i] == '}' {
		i++
	} else {
		for {
			if i >= len(src) {
				return orig, Fields{}, errEOF(i)
			}
			if src[i] != '"' {
				return orig, Fields{}, errChar(src, i, "looking for beginning of object key string")
			}
			keyStart := i
			keyEnd, keyEsc, err := scanString(src, i)
			if err != nil {
				return orig, Fields{}, err
			}
			i = skipWS(src, keyEnd)
			if i >= len(src) {
				return orig, Fields{}, errEOF(i)
			}
			if src[i] != ':' {
				return orig, Fields{}, errChar(src, i, "after object key")
			}
			i = skipWS(src, i+1)
			valStart := i
			var (
				kind   Kind
				valEnd int
				valEsc bool
			)
			if i < len(src) && src[i] == '"' { // the most common case
				kind = KindString
				valEnd, valEsc, err = scanString(src, i)
			} else {
				kind, valEnd, valEsc, err = scanValue(src, i, 1, maxDepth)
			}
			if err != nil {
				return orig, Fields{}, err
			}
			i = valEnd

			key := keyOther
			switch k := src[keyStart+1 : keyEnd-1]; {
			case keyEsc:
				key = classifyEscapedKey(k)
			case len(k) == 2:
				if k[0] == 'i' && k[1] == 'd' {
					key = keyID
				}
			case len(k) == 3:
				if string(k) == "ttl" {
					key = keyTTL
				} else if string(k) == "_ts" {
					key = keyTS
				}
			case len(k) == 5:
				if string(k) == "_etag" {
					key = keyEtag
				}
			}

			if key != keyTS && key != keyEtag {
				switch {
				case !kept:
					runStart = keyStart
					kept = true
				case keyStart != runEnd+1: // not just a comma in between
					dst = append(dst, src[runStart:runEnd]...)
					dst = append(dst, ',')
					runStart = keyStart
				}
				runEnd = valEnd
				switch key {
				case keyID:
					if f.IDKind != KindNone {
						if dup < 0 {
							dup = keyStart
						}
						break
					}
					f.IDKind = kind
					f.IDRaw = src[valStart:valEnd:valEnd]
					if kind == KindString {
						// Once the run is flushed, src[p] within it lands
						// at dst[p+off].
						off := len(dst) - runStart
						f.IDStart = valStart + 1 + off
						f.IDEnd = valEnd - 1 + off
						f.IDEscaped = valEsc
					}
				case keyTTL:
					if f.TTLKind != KindNone {
						if dup < 0 {
							dup = keyStart
						}
						break
					}
					f.TTLKind = kind
					f.TTLRaw = src[valStart:valEnd:valEnd]
				}
			}

			i = skipWS(src, i)
			if i >= len(src) {
				return orig, Fields{}, errEOF(i)
			}
			if c := src[i]; c == ',' {
				i = skipWS(src, i+1)
				continue
			} else if c == '}' {
				i++
				break
			}
			return orig, Fields{}, errChar(src, i, "after object key:value pair")
		}
	}
	if i = skipWS(src, i); i < len(src) {
		return orig, Fields{}, errChar(src, i, "after top-level value")
	}
	if dup >= 0 {
		return orig, Fields{}, errDuplicate(src, dup)
	}
	dst = append(dst, src[runStart:runEnd]...)

	f.StampAt = len(dst)
	return dst, f, nil
}

// Key classes of top-level members.
const (
	keyOther = iota
	keyID
	keyTTL
	keyTS
	keyEtag
)

// maxSpecialKeyRaw is the longest raw (escaped) key content that can decode
// to one of the special keys: "_etag" with every byte written as \u00XX.
const maxSpecialKeyRaw = 6 * len("_etag")

// classifyEscapedKey reports which special key, if any, the raw content k
// of a validated key string that contains a backslash escape denotes.
func classifyEscapedKey(k []byte) int {
	if len(k) > maxSpecialKeyRaw {
		return keyOther
	}
	// Unescaping valid UTF-8 never makes a key longer, so this stays on the
	// stack.
	var buf [maxSpecialKeyRaw]byte
	switch string(appendUnescaped(buf[:0], k)) {
	case "id":
		return keyID
	case "ttl":
		return keyTTL
	case "_ts":
		return keyTS
	case "_etag":
		return keyEtag
	}
	return keyOther
}

// scanNonObject validates a document whose top-level value starts at src[i]
// and is not an object, and returns the error to report for it: ErrNotObject
// when it is valid JSON, the validation error otherwise.
func scanNonObject(src []byte, i, maxDepth int) error {
	kind, end, _, err := scanValue(src, i, 0, maxDepth)
	if err != nil {
		return err
	}
	if j := skipWS(src, end); j < len(src) {
		return errChar(src, j, "after top-level value")
	}
	return fmt.Errorf("jsonscan: offset %d: top-level value is %s, not object: %w", i, withArticle(kind), ErrNotObject)
}

func withArticle(k Kind) string {
	switch k {
	case KindString, KindNumber:
		return "a " + k.String()
	case KindArray:
		return "an array"
	}
	return k.String()
}
