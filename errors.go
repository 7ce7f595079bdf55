package ttlstore

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// The errors a Collection returns. Every error it returns wraps exactly one of
// these, with the operation, the document id and the offending value in its
// message; match them with errors.Is.
var (
	// ErrNoChangeFeed is returned by ReadFeed, WaitFeed and Feed on a
	// collection made without Options.ChangeFeed.
	ErrNoChangeFeed = errors.New("the collection has no change feed")

	// ErrInvalidToken is returned by a feed read whose token is malformed,
	// is another collection's, or is from a read in another mode.
	ErrInvalidToken = errors.New("invalid feed token")

	// ErrTokenGone is returned by a feed read whose token is older than
	// what the feed keeps (Options.ChangeFeed): changes after it were
	// dropped. Cosmos DB answers the same case with 410 Gone.
	ErrTokenGone = errors.New("feed token older than the feed's retention")

	// ErrNotFound is returned when no live document has the id: it never
	// existed, was deleted, or has expired (whether or not it was swept yet).
	ErrNotFound = errors.New("not found")

	// ErrConflict is returned by Create when a live document already has the id.
	ErrConflict = errors.New("conflict: a live document has this id")

	// ErrPreconditionFailed is returned by ReplaceIfMatch and DeleteIfMatch
	// when the live document's _etag differs from the one given.
	ErrPreconditionFailed = errors.New("precondition failed: _etag does not match")

	// ErrInvalidTTL is returned when a document's top-level ttl, or a
	// DefaultTTL, is not -1 or an integer from 1 to 2147483647.
	ErrInvalidTTL = errors.New("invalid ttl")

	// ErrInvalidDocument is returned when a write is not a JSON object of
	// valid UTF-8 with a valid string id; the message says what is wrong.
	ErrInvalidDocument = errors.New("invalid document")

	// ErrInvalidPatch is returned by Patch when an operation is
	// malformed, names a path that cannot be patched ("/id", "/_ts",
	// "/_etag", ...), or does not apply to the document (a path to replace
	// or remove that is absent, a missing parent, incr on a value that is
	// not a number, or past the int64 range); the message names the
	// operation by its index and path.
	ErrInvalidPatch = errors.New("invalid patch")

	// ErrTooLarge is returned when a document's JSON is longer than
	// Options.MaxDocumentSize.
	ErrTooLarge = errors.New("document too large")

	// ErrFull is returned by a write that would take the collection past
	// Options.MaxDocuments or Options.MaxBytes when nothing may be evicted
	// to make room: under NoEviction, or under EvictSoonestExpiry when no
	// document can expire. The message gives the bound and the usage. The
	// write changes nothing.
	ErrFull = errors.New("collection full")

	// ErrInvalidOptions is returned by New when an Options field is out of
	// range; the message names the field.
	ErrInvalidOptions = errors.New("invalid options")

	// ErrPartitionKeyRequired is returned by a call that names a document
	// by its id alone (Read, Delete, Touch, Patch, ...) on a collection
	// with a PartitionKeyPath, where an id is unique only within its
	// partition: use the call's In form (ReadIn, DeleteIn, ...), which
	// names the partition too.
	ErrPartitionKeyRequired = errors.New("partition key required")
	// ErrInvalidPartitionKey is returned by an In form (ReadIn, ...) or
	// DeletePartition that names a partition key other than
	// PartitionKeyNone on a collection without a PartitionKeyPath, whose
	// documents are all in that one partition.
	ErrInvalidPartitionKey = errors.New("invalid partition key")
	// ErrClosed is returned by calls made after Close.
	ErrClosed = errors.New("collection closed")

	// ErrCorrupt is returned by Open when a file of the collection's
	// directory is damaged; the message names the file and the byte
	// offset. Open then changes nothing on disk.
	ErrCorrupt = errors.New("corrupt file")

	// ErrLocked is returned by Open when another Collection, in this
	// process or another, has the directory open. Within one process this
	// holds whatever path leads to the directory (a symbolic link) and
	// even if its LOCK file was removed. Between processes it rests on an
	// flock on dir/LOCK: removing that file while the directory is open
	// lets another process open it too, and the two then lose each
	// other's writes.
	ErrLocked = errors.New("directory locked by another collection")

	// ErrIO is returned when a durable collection could not write or sync
	// its log. The error also wraps the operating system's error (match
	// syscall.ENOSPC for a full disk). A write that returns it was not
	// applied, and no restart applies it, with one exception: a write
	// whose fsync failed (under SyncAlways) was applied in memory, and the
	// kernel may or may not have kept its record. After it every write of
	// the collection fails with ErrIO (a failed fsync is never retried),
	// while reads go on from memory, and Close returns the first such
	// error.
	ErrIO = errors.New("i/o failure")
)

// ioError is an I/O failure of a durable collection: it matches ErrIO and
// the underlying error both.
type ioError struct {
	op  string // what failed: "write log", "sync log", ...
	err error  // the file system's error
}

func (e *ioError) Error() string {
	return "ttlstore: " + e.op + ": " + e.err.Error() + ": " + ErrIO.Error()
}

func (e *ioError) Unwrap() []error { return []error{ErrIO, e.err} }

// opError is the error returned for a failed call on one document. It is a
// small struct rather than fmt.Errorf so that the not-found path of Read costs
// one small allocation.
type opError struct {
	op     string // "read", "create", ...
	id     string // the document's key (its id, in a partitioned collection preceded by its partition key: see describeKey), when known
	detail string // what was wrong, when there is more to say than err
	err    error  // one of the sentinels above
}

func (e *opError) Error() string {
	s := "ttlstore: " + e.op
	if e.id != "" {
		s += " " + describeKey(e.id)
	}
	if e.detail != "" {
		s += ": " + e.detail
	}
	return s + ": " + e.err.Error()
}

func (e *opError) Unwrap() error { return e.err }

// maxQuotedID is the most bytes of an id an error message quotes: an
// error about a 1,023-byte id should not flood a log.
const maxQuotedID = 64

// quoteID quotes id for an error message, cut after maxQuotedID bytes (at
// a character's start) with a note of its length.
func quoteID(id string) string {
	if len(id) <= maxQuotedID {
		return strconv.Quote(id)
	}
	n := maxQuotedID
	for n > 0 && !utf8.RuneStart(id[n]) {
		n--
	}
	return strconv.Quote(id[:n]) + "... (" + strconv.Itoa(len(id)) + " bytes)"
}

func newError(op, id string, err error) error { return &opError{op: op, id: id, err: err} }

func newErrorDetail(op, id string, err error, detail string) error {
	return &opError{op: op, id: id, err: err, detail: detail}
}

// expiredError is Read's error for a document that has expired but is still
// in memory. It is the entry itself, so returning it costs no allocation and
// an expired read costs no more than a hit; it reads as the opError that
// newError("read", id, ErrNotFound) would make.
type expiredError entry

func (e *expiredError) Error() string {
	return newError("read", (*entry)(e).key(), ErrNotFound).Error()
}

func (e *expiredError) Unwrap() error { return ErrNotFound }
