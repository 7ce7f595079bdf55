package cosmoshttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/cosmosql"
	"github.com/ttlstore/ttlstore/internal/patch"
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
// operation answers if the batch succeeds, and which operations were made
// conditional on an _etag read here (a 412 there means another write came
// between: the batch is built and tried again).
//
// It follows each item through the batch (simItem), from its version read
// before the batch: an upsert answers 201 if it creates and 200 if it
// replaces, and a conditional patch's condition is judged on the item as
// the operations before it leave it. When that depends on the version read
// (no create, upsert, replace or delete of the item came before), the
// item's first patch is made conditional on that version's _etag; when the
// condition is false, the patch is made conditional on an _etag no item
// has, so that the batch fails there with 412, as Cosmos DB's does.
func (ct *container) buildBatch(pk ttlstore.PartitionKey, ops []batchOp) (*ttlstore.Batch, []int, []bool, error) {
	plans := make([]opPlan, len(ops))
	sims := map[string]*simItem{}
	for i := range ops {
		if err := ct.plan(pk, ops, i, plans, sims); err != nil {
			return nil, nil, nil, errorf(http.StatusBadRequest, "batch operation %d: %v", i, err)
		}
	}
	b := new(ttlstore.Batch).In(pk)
	statuses := make([]int, len(ops))
	conds := make([]bool, len(ops))
	for i, op := range ops {
		p := plans[i]
		statuses[i], conds[i] = p.status, p.pinned
		if op.OperationType != "Patch" {
			addOp(b, op)
		} else if p.ifMatch != "" {
			b.PatchIfMatch(op.ID, p.patch, p.ifMatch)
		} else {
			b.Patch(op.ID, p.patch)
		}
	}
	return b, statuses, conds, nil
}

// opPlan is how one operation goes into the batch.
type opPlan struct {
	status  int
	patch   []ttlstore.PatchOp
	ifMatch string // a patch's condition on an _etag: the client's, one read here, or neverETag
	pinned  bool   // ifMatch is an _etag read here
}

// simItem is an item as the batch's operations so far leave it.
type simItem struct {
	exists  bool
	json    []byte
	etag    string // of the version read before the batch
	initial bool   // no operation has set the item whole: it is still the version read
	first   int    // the item's first patch while initial, or -1
}

// neverETag is an _etag no document has: a patch made conditional on it
// fails with 412 at its place in the batch.
const neverETag = "\x00"

// sim returns the item id as the batch so far leaves it, reading it the
// first time.
func (ct *container) sim(pk ttlstore.PartitionKey, sims map[string]*simItem, id string) *simItem {
	if it, ok := sims[id]; ok {
		return it
	}
	it := &simItem{initial: true, first: -1}
	if d, err := ct.c.ReadIn(pk, id); err == nil {
		it.exists, it.json, it.etag = true, ct.docJSON(nil, d), d.ETag()
	}
	sims[id] = it
	return it
}

// plan decides how ops[i] goes into the batch, and follows its item.
func (ct *container) plan(pk ttlstore.PartitionKey, ops []batchOp, i int, plans []opPlan, sims map[string]*simItem) error {
	op, p := ops[i], &plans[i]
	id := op.ID
	if op.OperationType == "Create" || op.OperationType == "Upsert" || op.OperationType == "Replace" {
		id, _ = bodyID(op.ResourceBody)
	}
	it := ct.sim(pk, sims, id)
	switch op.OperationType {
	case "Create", "Upsert", "Replace":
		p.status = http.StatusOK
		if op.OperationType == "Create" || (op.OperationType == "Upsert" && op.IfMatch == "" && !it.exists) {
			p.status = http.StatusCreated
		}
		it.exists, it.json, it.initial = true, stripSystem(op.ResourceBody), false
	case "Delete":
		p.status = http.StatusNoContent
		it.exists, it.json, it.initial = false, nil, false
	case "Read":
		p.status = http.StatusOK
	case "Patch":
		p.status = http.StatusOK
		return ct.planPatch(op, i, plans, it)
	default:
		_, err := opStatus(op.OperationType)
		return err
	}
	return nil
}

// planPatch plans the patch ops[i] (op): its operations, its condition,
// and what it leaves of the item.
func (ct *container) planPatch(op batchOp, i int, plans []opPlan, it *simItem) error {
	var body struct {
		Operations json.RawMessage `json:"operations"`
		Condition  string          `json:"condition"`
	}
	if err := json.Unmarshal(op.ResourceBody, &body); err != nil {
		return err
	}
	pops, err := parsePatchOps(body.Operations)
	if err != nil {
		return err
	}
	p := &plans[i]
	p.patch, p.ifMatch = pops, unquote(op.IfMatch)
	if it.initial && it.first < 0 {
		it.first = i
	}
	if body.Condition != "" && it.exists {
		q, err := cosmosql.ParseCondition(body.Condition)
		if err != nil {
			return err
		}
		switch {
		case !q.Match(it.json):
			p.ifMatch, p.pinned = neverETag, false
		case it.initial && plans[it.first].ifMatch == "":
			// The condition held on the version read: the item's first
			// patch must find that version.
			plans[it.first].ifMatch, plans[it.first].pinned = it.etag, true
		}
	}
	if it.exists {
		if out, err := patch.Apply(it.json, pops); err == nil {
			it.json = out
		}
	}
	return nil
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
func addOp(b *ttlstore.Batch, op batchOp) {
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
}
