package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validation of documents and DefaultTTLs, with encoding/json.

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
