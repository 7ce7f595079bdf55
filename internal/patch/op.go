package patch

import (
	"encoding/json"
	"strconv"
)

// Kind is the kind of a patch operation. The zero Kind is no operation:
// Apply refuses it with ErrInvalidPatch.
type Kind uint8

// The operation kinds, named as on the wire ("add", "set", ...). The
// package documentation gives their rules.
const (
	// Add creates or replaces an object member; in an array it inserts.
	Add Kind = iota + 1
	// Set creates or replaces an object member; in an array it replaces.
	Set
	// Replace replaces a member or element that must exist.
	Replace
	// Remove removes a member or element that must exist.
	Remove
	// Incr adds a number to a number, or creates an absent member.
	Incr
	// Move removes the value at From and adds it at Path.
	Move
)

var kindNames = [...]string{Add: "add", Set: "set", Replace: "replace", Remove: "remove", Incr: "incr", Move: "move"}

// String returns the kind's wire name ("add", "set", "replace", "remove",
// "incr", "move"), or "Kind(n)" for a value that is none of them.
func (k Kind) String() string {
	if k >= Add && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// kindNamed returns the Kind whose wire name is s, or 0.
func kindNamed(s string) Kind {
	for k := Add; int(k) < len(kindNames); k++ {
		if kindNames[k] == s {
			return k
		}
	}
	return 0
}

// Op is one patch operation, the Go form of Cosmos DB's
// {"op":"set","path":"/a/b","value":1} and {"op":"move","from":"/a","path":"/b"}.
// Apply reads an Op and never changes it, so a list of operations may be
// shared and applied by several goroutines at once.
type Op struct {
	// Kind is the operation.
	Kind Kind
	// Path is the JSON Pointer of the target, e.g. "/a/b/0" or "/tags/-".
	Path string
	// From is the JSON Pointer of Move's source. It must be empty for every
	// other kind.
	From string
	// Value is the JSON value for Add, Set, Replace and Incr (a number),
	// whitespace around and inside it allowed. It must be empty (nil or of
	// length zero) for Remove and Move. JSON null is a value: `null`.
	Value json.RawMessage
}

// check reports what is wrong with op whatever the document, or nil. It
// fills in the trimmed value and whether it holds whitespace.
func (op *Op) check() (value []byte, ws bool, f *failure) {
	if op.Kind < Add || op.Kind > Move {
		return nil, false, fail(ErrInvalidPatch, "unknown operation "+op.Kind.String())
	}
	if msg := checkPath(op.Path); msg != "" {
		return nil, false, fail(ErrInvalidPatch, msg)
	}
	switch op.Kind {
	case Remove, Move:
		if len(op.Value) != 0 {
			return nil, false, fail(ErrInvalidPatch, op.Kind.String()+" takes no value")
		}
	default:
		if len(op.Value) == 0 {
			return nil, false, fail(ErrInvalidPatch, op.Kind.String()+" needs a value")
		}
		v, hasWS, err := scanWhole(op.Value)
		if err != nil {
			return nil, false, fail(ErrInvalidPatch, "value is not valid JSON: "+err.Error())
		}
		if op.Kind == Incr && v[0] != '-' && !isDigit(v[0]) {
			return nil, false, fail(ErrInvalidPatch, "incr value is not a number")
		}
		value, ws = v, hasWS
	}
	if op.Kind != Move {
		if op.From != "" {
			return nil, false, fail(ErrInvalidPatch, "from is only for move")
		}
		return value, ws, nil
	}
	if op.From == "" {
		return nil, false, &failure{err: ErrInvalidPatch, detail: "move needs a from", from: true}
	}
	if msg := checkPath(op.From); msg != "" {
		return nil, false, &failure{err: ErrInvalidPatch, detail: "from: " + msg, from: true}
	}
	if op.Path != op.From && isPrefix(op.From, op.Path) {
		return nil, false, fail(ErrInvalidPatch, "path is inside from: a value cannot be moved into itself")
	}
	return nil, false, nil
}

// Parse decodes the Cosmos DB wire form of a patch, a JSON array of
// operations such as
//
//	[{"op":"add","path":"/color","value":"silver"},
//	 {"op":"move","from":"/color","path":"/inventory/color"}]
//
// Each operation is an object with the members "op" (one of "add", "set",
// "replace", "remove", "incr", "move"), "path", "from" (move only) and
// "value" (not for remove and move), as the Cosmos SDKs send them. Parse
// checks each operation as Apply does before it looks at a document (see
// ErrInvalidPatch) and refuses unknown or repeated members; member names
// are matched exactly, not case-insensitively as encoding/json would. An
// empty array yields no operations and no error: the limits on the number of
// operations are the caller's.
//
// The operations' Values are copies: data may be changed after Parse
// returns. On error Parse returns nil and an *Error matching
// ErrInvalidPatch whose Index is the failing operation's, or -1 when data
// is not a JSON array.
func Parse(data []byte) ([]Op, error) {
	whole := func(detail string) error { return &Error{Index: -1, Err: ErrInvalidPatch, Detail: detail} }
	b, _, err := scanWhole(data)
	if err != nil {
		return nil, whole("not JSON: " + err.Error())
	}
	if b[0] != '[' {
		return nil, whole("not a JSON array of operations")
	}
	b = append([]byte(nil), b...) // the Values alias this copy, not data
	var ops []Op
	for i := skipWS(b, 1); b[i] != ']'; {
		op, end, f := parseOp(b, i)
		if f != nil {
			e := &Error{Index: len(ops), Kind: op.Kind, Path: op.Path, Err: f.err, Detail: f.detail}
			if f.from {
				e.Path = op.From
			}
			return nil, e
		}
		ops = append(ops, op)
		i = skipWS(b, end)
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	return ops, nil
}

// parseOp decodes the operation at b[i] of the validated array b and
// returns it, checked, with the offset just past it.
func parseOp(b []byte, i int) (op Op, end int, f *failure) {
	if b[i] != '{' {
		end, _, _ := scanValue(b, i)
		return op, end, fail(ErrInvalidPatch, "operation is not a JSON object")
	}
	var seen [4]bool // op, path, from, value
	i = skipWS(b, i+1)
	for b[i] != '}' {
		keyEnd, esc, _ := scanString(b, i)
		key, kerr := stringValue(b[i:keyEnd], esc)
		i = skipWS(b, skipWS(b, keyEnd)+1) // past the colon
		valEnd, _, _ := scanValue(b, i)
		raw := b[i:valEnd:valEnd]
		member := -1
		switch key {
		case "op":
			member = 0
		case "path":
			member = 1
		case "from":
			member = 2
		case "value":
			member = 3
		}
		switch {
		case kerr != nil || member < 0:
			return op, 0, fail(ErrInvalidPatch, "unknown member "+quoteCut(key))
		case seen[member]:
			return op, 0, fail(ErrInvalidPatch, "member "+strconv.Quote(key)+" given twice")
		}
		seen[member] = true
		if member == 3 {
			op.Value = json.RawMessage(raw)
		} else {
			if raw[0] != '"' {
				return op, 0, fail(ErrInvalidPatch, "member "+strconv.Quote(key)+" is not a string")
			}
			_, esc, _ := scanString(raw, 0)
			s, err := stringValue(raw, esc)
			if err != nil {
				return op, 0, fail(ErrInvalidPatch, "member "+strconv.Quote(key)+": "+err.Error())
			}
			switch member {
			case 0:
				if op.Kind = kindNamed(s); op.Kind == 0 {
					return op, 0, fail(ErrInvalidPatch, "unknown op "+quoteCut(s))
				}
			case 1:
				op.Path = s
			case 2:
				op.From = s
			}
		}
		i = skipWS(b, valEnd)
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	end = i + 1
	switch {
	case !seen[0]:
		return op, end, fail(ErrInvalidPatch, `operation has no "op"`)
	case !seen[1]:
		return op, end, fail(ErrInvalidPatch, `operation has no "path"`)
	}
	if _, _, f = op.check(); f != nil {
		return op, end, f
	}
	return op, end, nil
}

// stringValue returns the content of the validated JSON string raw (quotes
// included), decoding its escapes when escaped is set.
func stringValue(raw []byte, escaped bool) (string, error) {
	if !escaped {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}
