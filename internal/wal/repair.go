package wal

import (
	"fmt"
	"io"
)

// Truncater is the part of a file that TrimTorn needs; vfs.File and *os.File
// have it.
type Truncater interface {
	// Truncate cuts the file to size bytes.
	Truncate(size int64) error
}

// TrimTorn cuts off the torn tail that r found in f, the file r read, by
// truncating f to r.Offset(), so that records appended to f follow the last
// good one. It does nothing and returns nil when r ended cleanly (Torn is
// 0). It does not sync f: the caller syncs before relying on the cut.
//
// When r.Offset() is 0 the file had no valid header: TrimTorn leaves it
// empty (or it was already), and the caller must write a header
// (AppendHeader) before any record.
//
// TrimTorn must be called after r.Next has returned an error. If that error
// was not io.EOF (the file is corrupt, or reading failed), TrimTorn returns it
// and leaves f alone: corruption is not repaired by cutting it off. TrimTorn
// panics if r.Next has not yet returned an error. An error from Truncate is
// returned wrapped.
func TrimTorn(f Truncater, r *Reader) error {
	switch {
	case r.err == nil:
		panic("wal: TrimTorn called before the Reader reached its end")
	case r.err != io.EOF:
		return r.err
	case r.torn == 0:
		return nil
	}
	if err := f.Truncate(r.off); err != nil {
		return fmt.Errorf("wal: cutting the torn tail at offset %d: %w", r.off, err)
	}
	return nil
}
