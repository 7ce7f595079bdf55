package cosmoshttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

// Transactional batch: POST .../docs with x-ms-cosmos-is-batch-request,
// a JSON array of operations, applied as one ttlstore.ExecuteBatch: all or
// nothing, in one partition.

type batchOp struct {
	OperationType string          `json:"operationType"`
	ID            string          `json:"id"`
	ResourceBody  json.RawMessage `json:"resourceBody"`
	IfMatch       string          `json:"ifMatch"`
}

type batchResult struct {
	StatusCode    int             `json:"statusCode"`
	SubStatusCode int             `json:"subStatusCode,omitempty"`
	RequestCharge float64         `json:"requestCharge"`
	ETag          string          `json:"eTag,omitempty"`
	ResourceBody  json.RawMessage `json:"resourceBody,omitempty"`
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request, ct *container) error {
	pk, err := ct.partitionKey(r)
	if err != nil {
		return err
	}
	body, err := readBody(r, s.maxDoc+(64<<10))
	if err != nil {
		return err
	}
	var ops []batchOp
	if err := json.Unmarshal(body, &ops); err != nil {
		return errorf(http.StatusBadRequest, "the batch is not a JSON array of operations: %v", err)
	}
	if len(ops) > ttlstore.MaxBatchOperations {
		return errorf(http.StatusBadRequest, "the batch has %d operations; the limit is %d", len(ops), ttlstore.MaxBatchOperations)
	}
	// A conditional patch's condition is judged on the document as read
	// before the batch, and the patch made conditional on that version's
	// _etag; if another write came between, the batch fails at that
	// operation with 412 and is tried again.
	var docs []ttlstore.Document
	var statuses []int
	for try := 0; ; try++ {
		var b *ttlstore.Batch
		var conds []bool
		b, statuses, conds, err = ct.buildBatch(pk, ops)
		if err != nil {
			return err
		}
		docs, err = ct.c.ExecuteBatch(b)
		var be *ttlstore.BatchError
		if try < 8 && errors.As(err, &be) && be.Index >= 0 && conds[be.Index] && errors.Is(err, ttlstore.ErrPreconditionFailed) {
			continue
		}
		break
	}
	results := make([]batchResult, len(ops))
	status := http.StatusOK
	if err != nil {
		var be *ttlstore.BatchError
		if !errors.As(err, &be) || be.Index < 0 {
			return err
		}
		// Cosmos DB answers a failed batch 207 Multi-Status: the operation
		// that failed with its own status, every other one 424.
		status = http.StatusMultiStatus
		for i := range results {
			results[i].StatusCode = http.StatusFailedDependency
		}
		results[be.Index].StatusCode = statusOf(be.Err)
	} else {
		minimal := r.Header.Get("Prefer") == "return=minimal"
		for i, d := range docs {
			results[i].StatusCode = statuses[i]
			if d.ID() == "" {
				continue
			}
			results[i].ETag = quote(d.ETag())
			if !minimal || ops[i].OperationType == "Read" {
				results[i].ResourceBody = ct.docJSON(nil, d)
			}
		}
	}
	for i := range results {
		results[i].RequestCharge = 1
	}
	out, _ := json.Marshal(results)
	w.Header().Set("x-ms-cosmos-batch-operation-count", strconv.Itoa(len(ops)))
	writeJSON(w, status, out)
	return nil
}

// buildBatch makes the ttlstore batch of ops, with the status each
// operation answers if the batch succeeds, and which operations are
// conditional patches made conditional on an _etag read here.
//
// An upsert answers 201 if it creates and 200 if it replaces: whether the
// item exists is read before the batch, and followed through the batch's
// own operations. A write between that read and the batch may make the
// status the other one; the item stored is the same either way.
func (ct *container) buildBatch(pk ttlstore.PartitionKey, ops []batchOp) (*ttlstore.Batch, []int, []bool, error) {
	b := new(ttlstore.Batch).In(pk)
	statuses := make([]int, len(ops))
	conds := make([]bool, len(ops))
	exists := map[string]bool{}
	existsNow := func(id string) bool {
		if e, ok := exists[id]; ok {
			return e
		}
		_, err := ct.c.ReadIn(pk, id)
		return err == nil
	}
	for i, op := range ops {
		id := op.ID
		if op.ResourceBody != nil && (op.OperationType == "Create" || op.OperationType == "Upsert" || op.OperationType == "Replace") {
			id, _ = bodyID(op.ResourceBody)
		}
		var err error
		switch op.OperationType {
		case "Upsert":
			statuses[i] = http.StatusOK
			if op.IfMatch == "" && !existsNow(id) {
				statuses[i] = http.StatusCreated
			}
			err = addOp(b, op)
			exists[id] = true
		case "Patch":
			statuses[i] = http.StatusOK
			conds[i], err = ct.addPatch(b, pk, op, exists)
		default:
			statuses[i], err = opStatus(op.OperationType)
			if err == nil {
				err = addOp(b, op)
			}
			switch op.OperationType {
			case "Create", "Replace":
				exists[id] = true
			case "Delete":
				exists[id] = false
			}
		}
		if err != nil {
			return nil, nil, nil, errorf(http.StatusBadRequest, "batch operation %d: %v", i, err)
		}
	}
	return b, statuses, conds, nil
}

// neverETag is an _etag no document has: a patch made conditional on it
// fails with 412 at its place in the batch.
const neverETag = "\x00"

// addPatch adds a patch operation; with a condition, it is judged on the
// document as read now, and the patch made conditional on that version's
// _etag (or on one no document has, when the condition is false). It
// returns true when it read the _etag itself.
func (ct *container) addPatch(b *ttlstore.Batch, pk ttlstore.PartitionKey, op batchOp, exists map[string]bool) (bool, error) {
	var p struct {
		Operations json.RawMessage `json:"operations"`
		Condition  string          `json:"condition"`
	}
	if err := json.Unmarshal(op.ResourceBody, &p); err != nil {
		return false, err
	}
	pops, err := parsePatchOps(p.Operations)
	if err != nil {
		return false, err
	}
	m := unquote(op.IfMatch)
	if p.Condition == "" {
		if m != "" {
			b.PatchIfMatch(op.ID, pops, m)
		} else {
			b.Patch(op.ID, pops)
		}
		return false, nil
	}
	if _, seen := exists[op.ID]; seen {
		return false, errorf(http.StatusBadRequest, "a conditional patch of %q after another operation on it in the same batch is not supported", op.ID)
	}
	q, err := cosmosql.ParseCondition(p.Condition)
	if err != nil {
		return false, err
	}
	cur, err := ct.c.ReadIn(pk, op.ID)
	if err != nil {
		b.Patch(op.ID, pops) // fails in its place with ErrNotFound
		return false, nil
	}
	if (m != "" && cur.ETag() != m) || !q.Match(ct.docJSON(nil, cur)) {
		b.PatchIfMatch(op.ID, pops, neverETag)
		return false, nil
	}
	b.PatchIfMatch(op.ID, pops, cur.ETag())
	return true, nil
}

func opStatus(kind string) (int, error) {
	switch kind {
	case "Create":
		return http.StatusCreated, nil
	case "Replace", "Read":
		return http.StatusOK, nil
	case "Delete":
		return http.StatusNoContent, nil
	}
	return 0, errorf(http.StatusBadRequest, "operationType %q is not one of Create, Upsert, Replace, Read, Delete, Patch", kind)
}

// addOp adds one operation other than a patch to b.
func addOp(b *ttlstore.Batch, op batchOp) error {
	body := stripSystem(op.ResourceBody)
	m := unquote(op.IfMatch)
	switch op.OperationType {
	case "Create":
		b.Create(body)
	case "Upsert", "Replace":
		switch {
		case m != "":
			b.ReplaceIfMatch(body, m)
		case op.OperationType == "Upsert":
			b.Upsert(body)
		default:
			b.Replace(body)
		}
	case "Read":
		b.Read(op.ID)
	case "Delete":
		if m != "" {
			b.DeleteIfMatch(op.ID, m)
		} else {
			b.Delete(op.ID)
		}
	}
	return nil
}
