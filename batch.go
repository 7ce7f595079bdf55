package ttlstore

import (
	"strconv"
)

// Transactional batches: several operations applied in order as one
// commit (commit.go), all or nothing, as Azure Cosmos DB's transactional
// batch.

// Batch limits, as Azure Cosmos DB's.
const (
	// MaxBatchOperations is the most operations a Batch may hold.
	MaxBatchOperations = 100

	// MaxBatchBytes is the most bytes of JSON the documents of a Batch
	// may add up to.
	MaxBatchBytes = 2 << 20
)

// Batch is a list of operations that Collection.ExecuteBatch applies in
// order, all or nothing: Create, Upsert, Replace, ReplaceIfMatch, Read,
// Delete, DeleteIfMatch, Touch, Patch and PatchIfMatch, each meaning what the Collection method
// of that name means, judged against the document the operations before it
// in the batch leave. The zero value is an empty batch. Each method adds one
// operation and returns b, so that calls can be chained. A Batch holds the
// documents given to it until ExecuteBatch copies them; it is not safe for
// concurrent use, and may be executed more than once.
//
// On a partitioned collection a batch is in one partition, as in Azure
// Cosmos DB: name it with In. Its operations name documents by id within
// it, and every document it writes must be in it.
type Batch struct {
	ops   []batchOp
	pk    PartitionKey
	hasPK bool // In was called
}

// In makes b a batch of the partition pk and returns b: every operation's
// id is in pk, and every document b writes must be in pk (a document in
// another fails the batch with ErrInvalidDocument, naming both). A
// partition is one shard, so the batch locks one shard. ExecuteBatch on a
// partitioned collection refuses a batch without In
// (ErrPartitionKeyRequired); on a collection without a PartitionKeyPath,
// pk must be PartitionKeyNone (ErrInvalidPartitionKey otherwise).
func (b *Batch) In(pk PartitionKey) *Batch {
	b.pk, b.hasPK = pk, true
	return b
}

// batchOp is one operation of a Batch.
type batchOp struct {
	name       string // the Collection method it stands for
	kind       mutationKind
	mode       writeMode
	doc        any    // put
	id         string // the others
	ifMatch    string
	checkMatch bool
	ops        []PatchOp // amend
}

// Create adds a Create of doc to b.
func (b *Batch) Create(doc any) *Batch {
	return b.add(batchOp{name: "create", kind: put, mode: mustNotExist, doc: doc})
}

// Upsert adds an Upsert of doc to b.
func (b *Batch) Upsert(doc any) *Batch {
	return b.add(batchOp{name: "upsert", kind: put, mode: mayExist, doc: doc})
}

// Replace adds a Replace of doc to b.
func (b *Batch) Replace(doc any) *Batch {
	return b.add(batchOp{name: "replace", kind: put, mode: mustExist, doc: doc})
}

// ReplaceIfMatch adds a ReplaceIfMatch of doc on etag to b.
func (b *Batch) ReplaceIfMatch(doc any, etag string) *Batch {
	return b.add(batchOp{name: "replace", kind: put, mode: mustExist, doc: doc, ifMatch: etag, checkMatch: true})
}

// Read adds a Read of id to b: its result is the document as the
// operations before it leave it, and the batch fails with ErrNotFound if
// there is none.
func (b *Batch) Read(id string) *Batch {
	return b.add(batchOp{name: "read", kind: read, id: id})
}

// Delete adds a Delete of id to b.
func (b *Batch) Delete(id string) *Batch {
	return b.add(batchOp{name: "delete", kind: del, id: id})
}

// DeleteIfMatch adds a DeleteIfMatch of id on etag to b.
func (b *Batch) DeleteIfMatch(id, etag string) *Batch {
	return b.add(batchOp{name: "delete", kind: del, id: id, ifMatch: etag, checkMatch: true})
}

// Touch adds a Touch of id to b.
func (b *Batch) Touch(id string) *Batch {
	return b.add(batchOp{name: "touch", kind: touch, id: id})
}

// Patch adds a Patch of id with ops to b.
func (b *Batch) Patch(id string, ops []PatchOp) *Batch {
	return b.add(batchOp{name: "patch", kind: amend, id: id, ops: ops})
}

// PatchIfMatch adds a PatchIfMatch of id with ops on etag to b.
func (b *Batch) PatchIfMatch(id string, ops []PatchOp, etag string) *Batch {
	return b.add(batchOp{name: "patch", kind: amend, id: id, ops: ops, ifMatch: etag, checkMatch: true})
}

// Len returns how many operations b holds.
func (b *Batch) Len() int { return len(b.ops) }

func (b *Batch) add(op batchOp) *Batch {
	if b.ops == nil {
		// Room for a typical batch at once, rather than growing it
		// four times on the way to ten operations.
		b.ops = make([]batchOp, 0, 16)
	}
	b.ops = append(b.ops, op)
	return b
}

// BatchError is the error of a batch that changed nothing: Index is the
// operation that failed (from 0; -1 when the batch as a whole was refused,
// for its size or because the collection is closed) and Err its error,
// which BatchError wraps (errors.Is(err, ErrConflict) matches a batch whose
// Create met a live document). Every other operation was not applied, as
// Cosmos DB answers 424 Failed Dependency for them.
type BatchError struct {
	Index int
	Err   error
}

// Error says which operation failed and why.
func (e *BatchError) Error() string {
	if e.Index < 0 {
		return "ttlstore: batch: " + trimPrefix(e.Err.Error()) + "; no operation applied"
	}
	return "ttlstore: batch operation " + strconv.Itoa(e.Index) + ": " + trimPrefix(e.Err.Error()) + "; no operation applied"
}

// Unwrap returns Err.
func (e *BatchError) Unwrap() error { return e.Err }

// trimPrefix drops the package's prefix from an error's message, which a
// BatchError gives once.
func trimPrefix(s string) string {
	const p = "ttlstore: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// ExecuteBatch applies b's operations in order as one write, all or
// nothing: if one fails, none is applied, and the error is a *BatchError
// that names it. No reader sees part of a batch: every document it writes
// appears at once, with one _ts. In a durable collection the batch is one
// group of records in the log, so that a crash at any byte leaves all of
// it or none of it after Open, and one wait for durability.
//
// It returns one Document per operation: the document a Create, Upsert,
// Replace or Touch stored, the one a Read found, the zero Document for a
// Delete. A batch of more than MaxBatchOperations operations, or whose
// documents add up to more than MaxBatchBytes of JSON, is refused before
// anything is looked at, with ErrTooLarge.
//
// In a bounded collection the batch's net growth is reserved as one
// write's: NoEviction refuses the whole batch with ErrFull; an evicting
// policy may evict for it, but never a document the batch names (those it
// replaces, reads, touches or deletes stay for it to find). On a
// collection without a PartitionKeyPath, the batch's operations may name
// any ids: a collection without a partition key is a single partition. On
// a partitioned one, the batch is in the one partition In names (see
// Batch), as in Azure Cosmos DB.
//
// A durable batch whose fsync failed (SyncAlways) is the one exception to
// all or nothing's error: like a single write whose fsync failed, it was
// applied in memory and may or may not survive a crash (see ErrIO), so its
// error is the ErrIO itself, not a *BatchError, which would say that
// nothing was applied.
func (c *Collection) ExecuteBatch(b *Batch) ([]Document, error) {
	if c.closed.Load() {
		return nil, &BatchError{Index: -1, Err: newError("batch", "", ErrClosed)}
	}
	if len(b.ops) == 0 {
		return nil, nil
	}
	if len(b.ops) > MaxBatchOperations {
		return nil, &BatchError{Index: -1, Err: newErrorDetail("batch", "", ErrTooLarge,
			strconv.Itoa(len(b.ops))+" operations, more than "+strconv.Itoa(MaxBatchOperations))}
	}
	prefix := ""
	switch {
	case c.pk != nil && !b.hasPK:
		return nil, &BatchError{Index: -1, Err: newErrorDetail("batch", "", ErrPartitionKeyRequired,
			"the collection's PartitionKeyPath is "+strconv.Quote(c.pk.path)+": name the batch's partition with In")}
	case c.pk == nil && b.pk.enc != "":
		return nil, &BatchError{Index: -1, Err: newErrorDetail("batch", "", ErrInvalidPartitionKey,
			"partition key "+b.pk.String()+" given, but the collection has no PartitionKeyPath: only PartitionKeyNone() names its one partition")}
	case c.pk != nil:
		prefix = b.pk.encoding()
	}
	cm := commit{op: "batch", many: make([]mutation, len(b.ops))}
	total := 0
	for i, op := range b.ops {
		m := &cm.many[i]
		m.op, m.kind, m.mode, m.ifMatch, m.checkMatch, m.id, m.ops = op.name, op.kind, op.mode, op.ifMatch, op.checkMatch, prefix+op.id, op.ops
		if len(op.ops) > c.maxPatch {
			return nil, &BatchError{Index: i, Err: newErrorDetail(op.name, op.id, ErrTooLarge,
				strconv.Itoa(len(op.ops))+" patch operations, more than "+strconv.Itoa(c.maxPatch))}
		}
		if op.kind == put {
			e, err := c.prepare(op.name, op.doc)
			if err == nil && c.pk != nil {
				err = c.checkIn(op.name, b.pk, e)
			}
			if err == nil {
				err = c.checkWeight(op.name, e)
			}
			if err != nil {
				return nil, &BatchError{Index: i, Err: err}
			}
			if total += int(e.n); total > MaxBatchBytes {
				return nil, &BatchError{Index: -1, Err: newErrorDetail("batch", "", ErrTooLarge,
					"documents of more than "+strconv.Itoa(MaxBatchBytes)+" bytes of JSON")}
			}
			m.e, m.w, m.id = e, weigh(e), e.key()
		}
		m.s, m.h = c.shardFor(m.id)
	}
	cm.failed = -1
	if err := c.run(&cm); err != nil {
		if cm.applied {
			// Its fsync failed: it is applied in memory, as a
			// single write whose fsync failed (ErrIO).
			return nil, err
		}
		// check stops at the first mutation whose condition fails;
		// the stages after it fail the batch as a whole.
		return nil, &BatchError{Index: cm.failed, Err: err}
	}
	docs := make([]Document, len(cm.many))
	for i := range cm.many {
		switch m := &cm.many[i]; m.kind {
		case put, touch, amend:
			docs[i] = Document{e: m.e, exp: m.exp}
		case read:
			docs[i] = Document{e: m.old, exp: m.oldExp}
		}
	}
	return docs, nil
}
