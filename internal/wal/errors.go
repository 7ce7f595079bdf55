package wal

import (
	"errors"
	"fmt"
)

// ErrCorrupt is returned, inside a *CorruptError, when a file is damaged in
// a way a crash cannot explain (see the package documentation for the
// rules). Match it with errors.Is(err, ErrCorrupt); a torn tail is not
// corruption and yields io.EOF instead.
var ErrCorrupt = errors.New("wal: corrupt")

// CorruptError says where and how a file is corrupt. It unwraps to
// ErrCorrupt. It does not name the file: the caller wraps it with the name,
// as in fmt.Errorf("%s: %w", name, err), and errors.As still finds it.
type CorruptError struct {
	// Offset is the byte offset of the damaged record's start, which is
	// the end of the last good record, or 0 when the file header is
	// damaged (no record starts before HeaderSize).
	Offset int64
	// Reason says what is wrong, for example "crc mismatch".
	Reason string
}

// Error returns a message such as
// "wal: corrupt record at offset 1234: crc mismatch", or
// "wal: corrupt header at offset 0: bad magic" for the file header.
func (e *CorruptError) Error() string {
	what := "record"
	if e.Offset < HeaderSize {
		what = "header"
	}
	return fmt.Sprintf("wal: corrupt %s at offset %d: %s", what, e.Offset, e.Reason)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// corrupt returns a *CorruptError at off whose reason is formatted from
// format and args.
func corrupt(off int64, format string, args ...any) error {
	return &CorruptError{Offset: off, Reason: fmt.Sprintf(format, args...)}
}
