package ttlstore

import (
	"errors"
	"strconv"
	"strings"

	"github.com/ttlstore/ttlstore/internal/jsonscan"
	"github.com/ttlstore/ttlstore/internal/patch"
)

// Patch: Azure Cosmos DB's partial document update. The operations are
// internal/patch's; a patch is a commit (commit.go) whose mutation makes
// its entry in check, from the current document, under the shard's lock.

// PatchOp is one patch operation, the Go form of Cosmos DB's
// {"op":"set","path":"/a/b","value":1}: Kind, the JSON Pointer Path, From
// for a move, and Value, the JSON value for add, set, replace and incr.
// ParsePatch reads the wire form.
type PatchOp = patch.Op

// PatchKind is the kind of a PatchOp.
type PatchKind = patch.Kind

// The patch operations, as in Cosmos DB. A path is a JSON Pointer: "/a/b/0",
// "~1" for "/" and "~0" for "~" in a member name, "-" for the end of an
// array (add and move).
const (
	// PatchAdd creates or replaces an object member; in an array it
	// inserts before the index. The parent must exist.
	PatchAdd = patch.Add
	// PatchSet creates or replaces an object member; in an array it
	// replaces the element.
	PatchSet = patch.Set
	// PatchReplace replaces a member or element that must exist.
	PatchReplace = patch.Replace
	// PatchRemove removes a member or element that must exist.
	PatchRemove = patch.Remove
	// PatchIncr adds a number to a number (exactly, for integers that fit
	// an int64; ErrInvalidPatch on overflow), or creates an absent member.
	PatchIncr = patch.Incr
	// PatchMove moves the value at From, which must exist, to Path, which
	// may not lie inside From.
	PatchMove = patch.Move
)

// DefaultMaxPatchOperations is the most operations one patch may hold
// when Options.MaxPatchOperations is zero: 10, as in Azure Cosmos DB.
const DefaultMaxPatchOperations = 10

// ParsePatch reads patch operations in Cosmos DB's wire form, a JSON array
// such as [{"op":"set","path":"/a","value":1},{"op":"move","from":"/b","path":"/c"}].
// What is not that form is ErrInvalidPatch.
func ParsePatch(data []byte) ([]PatchOp, error) {
	ops, err := patch.Parse(data)
	if err != nil {
		return nil, newErrorDetail("patch", "", ErrInvalidPatch, patchDetail(err))
	}
	return ops, nil
}

// Patch applies ops, in order and all or none, to the live document with
// the given id, and stores the result as one write: a new _ts and _etag,
// the countdown restarted, one log record. "/id", "/_ts", "/_etag" and the
// other system properties cannot be patched. "/ttl" can: the result's ttl
// (or its absence, falling back to the DefaultTTL) sets its expiry exactly
// as a Replace of the whole document would, and a ttl that Replace would
// refuse is ErrInvalidTTL.
//
// It returns the stored document; ErrNotFound when no document with the id
// is live; ErrInvalidPatch (with the operation's index and path in the
// message) when an operation is malformed or does not apply to the
// document (a path to replace or remove that is absent, a parent that does
// not exist, incr on a value that is not a number); ErrTooLarge when there
// are more than Options.MaxPatchOperations operations or the result is
// larger than MaxDocumentSize. Any error changes nothing.
//
// In a partitioned collection the partition key path cannot be patched
// either, nor a path inside it or containing it: a document's partition
// key never changes (ErrInvalidPatch). Patch there returns
// ErrPartitionKeyRequired: use PatchIn.
func (c *Collection) Patch(id string, ops []PatchOp) (Document, error) {
	key, err := c.keyOf("patch", id)
	if err != nil {
		return Document{}, err
	}
	return c.patch(key, ops, "", false)
}

// PatchIn is Patch of the document with the given id in the partition pk.
func (c *Collection) PatchIn(pk PartitionKey, id string, ops []PatchOp) (Document, error) {
	key, err := c.keyIn("patch", pk, id)
	if err != nil {
		return Document{}, err
	}
	return c.patch(key, ops, "", false)
}

// PatchIfMatch is Patch on the condition that the live document's _etag
// is etag; otherwise it returns ErrPreconditionFailed and changes nothing.
func (c *Collection) PatchIfMatch(id string, ops []PatchOp, etag string) (Document, error) {
	key, err := c.keyOf("patch", id)
	if err != nil {
		return Document{}, err
	}
	return c.patch(key, ops, etag, true)
}

// PatchIfMatchIn is PatchIfMatch of the document with the given id in the
// partition pk.
func (c *Collection) PatchIfMatchIn(pk PartitionKey, id string, ops []PatchOp, etag string) (Document, error) {
	key, err := c.keyIn("patch", pk, id)
	if err != nil {
		return Document{}, err
	}
	return c.patch(key, ops, etag, true)
}

// PatchIf is Patch on the condition that cond returns true for the live
// document. cond runs without any lock held, on a Document it may keep;
// if the document changes between cond's look and the patch, PatchIf looks
// again. When cond returns false, the error is a *PreconditionError, which
// matches ErrPreconditionFailed and holds the document cond refused, so
// that the caller need not read it again.
func (c *Collection) PatchIf(id string, ops []PatchOp, cond func(Document) bool) (Document, error) {
	key, err := c.keyOf("patch", id)
	if err != nil {
		return Document{}, err
	}
	return c.patchIf(key, ops, cond)
}

// PatchIfIn is PatchIf of the document with the given id in the partition
// pk.
func (c *Collection) PatchIfIn(pk PartitionKey, id string, ops []PatchOp, cond func(Document) bool) (Document, error) {
	key, err := c.keyIn("patch", pk, id)
	if err != nil {
		return Document{}, err
	}
	return c.patchIf(key, ops, cond)
}

// patchIf is PatchIf of the document with the given key (id).
func (c *Collection) patchIf(id string, ops []PatchOp, cond func(Document) bool) (Document, error) {
	for {
		cur, err := c.read(id, true, false)
		if err != nil {
			return Document{}, newError("patch", id, ErrNotFound)
		}
		if !cond(cur) {
			return Document{}, &PreconditionError{Current: cur, err: newErrorDetail("patch", id, ErrPreconditionFailed, "the condition is false")}
		}
		d, err := c.patch(id, ops, cur.ETag(), true)
		if errors.Is(err, ErrPreconditionFailed) {
			continue // written since cond looked
		}
		return d, err
	}
}

// PreconditionError is the error of PatchIf when its condition is false:
// it matches ErrPreconditionFailed, and Current is the live document the
// condition was false for.
type PreconditionError struct {
	Current Document
	err     error
}

// Error says which document and why.
func (e *PreconditionError) Error() string { return e.err.Error() }

// Unwrap returns the error that matches ErrPreconditionFailed.
func (e *PreconditionError) Unwrap() error { return e.err }

func (c *Collection) patch(id string, ops []PatchOp, ifMatch string, checkMatch bool) (Document, error) {
	if c.closed.Load() {
		return Document{}, newError("patch", id, ErrClosed)
	}
	if len(ops) > c.maxPatch {
		return Document{}, newErrorDetail("patch", id, ErrTooLarge,
			strconv.Itoa(len(ops))+" patch operations, more than "+strconv.Itoa(c.maxPatch))
	}
	s, h := c.shardFor(id)
	var cm commit
	m := cm.single("patch", amend, id, s, h)
	m.ops, m.checkMatch, m.ifMatch = ops, checkMatch, ifMatch
	if err := c.run(&cm); err != nil {
		return Document{}, err
	}
	return Document{e: m.e, exp: m.exp}, nil
}

// patched returns the entry of the document that applying ops to old, the
// id's live entry, makes: validated and parsed as a write's (prepare), its
// id old's. It runs under the shard's lock, in check.
func (c *Collection) patched(op string, old *entry, ops []PatchOp) (*entry, error) {
	var out []byte
	var err error
	if c.pk != nil {
		// The partition key path is protected: a document's
		// partition key cannot change (it would be another document).
		out, err = patch.Apply(old.raw(), ops, c.pk.path)
	} else {
		out, err = patch.Apply(old.raw(), ops)
	}
	if err != nil {
		return nil, newErrorDetail(op, old.key(), ErrInvalidPatch, patchDetail(err))
	}
	e, err := c.restamp(op, out, ops)
	if err != nil {
		return nil, err
	}
	if err := c.checkWeight(op, e); err != nil {
		return nil, err
	}
	return e, nil
}

// restamp builds the entry of out, the document a patch of a stored
// document made with ops, as prepare would. A stored document is valid JSON
// in stored form, and so is a patch of it whose values are valid: then
// jsonscan.Locate finds its fields without validating every byte again,
// which was most of a patch's cost (a 1 KB document took 3,700
// instructions to validate, against some 200 to locate). Otherwise, or when
// Locate declines (a value that nests too deep, whitespace it does not
// take), prepare validates it and says what is wrong.
func (c *Collection) restamp(op string, out []byte, ops []PatchOp) (*entry, error) {
	if len(out) > c.maxSize {
		return c.prepare(op, out) // which refuses it
	}
	for i := range ops {
		if v := ops[i].Value; len(v) > 0 && !jsonscan.ValidValue(v, MaxDepth) {
			return c.prepare(op, out)
		}
	}
	e, data := newEntry(len(out))
	copy(data, out)
	f, ok := jsonscan.Locate(data, MaxDepth)
	if !ok {
		return c.prepare(op, out)
	}
	return c.finish(op, e, data, &f, 0)
}

// patchDetail is a patch error's message without the package's prefix.
func patchDetail(err error) string {
	return strings.TrimPrefix(err.Error(), "patch: ")
}
