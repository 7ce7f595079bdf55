package cosmosql

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Param is one query parameter as the REST API sends it:
// {"name":"@x","value":<json>}. Name includes the leading '@'. Value is any
// JSON value; it is substituted into the query as a value, never as text.
type Param struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// ErrSyntax is returned when the query text is malformed. The message says
// at which byte offset and what was expected there, for example
// `syntax error at offset 9: expected FROM, found "WHERE"`.
var ErrSyntax = errors.New("syntax error")

// ErrUnsupported is returned when the query is valid Cosmos DB SQL but
// outside the subset this package runs. The message names the construct,
// for example `unsupported: JOIN` or `unsupported: function ABS`.
var ErrUnsupported = errors.New("unsupported")

// ErrParameter is returned when a @name is used in the query but not given,
// when a parameter's value is not valid JSON, when its name does not start
// with '@', when two parameters share a name, and when a parameter used as
// a TOP, OFFSET or LIMIT count is not a non-negative integer.
var ErrParameter = errors.New("invalid parameter")

// syntaxErr reports what was expected at offset off and what was found.
func syntaxErr(off int, expected string, found token) error {
	return fmt.Errorf("%w at offset %d: expected %s, found %s", ErrSyntax, off, expected, found.describe())
}

// syntaxMsg reports a free-form syntax error at offset off.
func syntaxMsg(off int, format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrSyntax, off, fmt.Sprintf(format, args...))
}

// unsupported names a construct outside the subset, found at offset off.
func unsupported(off int, construct string) error {
	return fmt.Errorf("%w: %s (at offset %d)", ErrUnsupported, construct, off)
}
