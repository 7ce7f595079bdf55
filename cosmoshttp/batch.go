package cosmoshttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/ttlstore/ttlstore"
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
	b := new(ttlstore.Batch).In(pk)
	statuses := make([]int, len(ops))
	for i, op := range ops {
		if statuses[i], err = addOp(b, op); err != nil {
			return errorf(http.StatusBadRequest, "batch operation %d: %v", i, err)
		}
	}
	docs, err := ct.c.ExecuteBatch(b)
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
		if be.Index >= 0 && be.Index < len(results) {
			results[be.Index].StatusCode = statusOf(be.Err)
		}
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

// addOp adds one operation to b and returns the status it answers when
// the batch succeeds.
func addOp(b *ttlstore.Batch, op batchOp) (int, error) {
	body := stripSystem(op.ResourceBody)
	m := unquote(op.IfMatch)
	switch op.OperationType {
	case "Create":
		b.Create(body)
		return http.StatusCreated, nil
	case "Upsert":
		if m != "" {
			b.ReplaceIfMatch(body, m)
		} else {
			b.Upsert(body)
		}
		return http.StatusOK, nil
	case "Replace":
		if m != "" {
			b.ReplaceIfMatch(body, m)
		} else {
			b.Replace(body)
		}
		return http.StatusOK, nil
	case "Read":
		b.Read(op.ID)
		return http.StatusOK, nil
	case "Delete":
		if m != "" {
			b.DeleteIfMatch(op.ID, m)
		} else {
			b.Delete(op.ID)
		}
		return http.StatusNoContent, nil
	case "Patch":
		var p struct {
			Operations json.RawMessage `json:"operations"`
			Condition  string          `json:"condition"`
		}
		if err := json.Unmarshal(op.ResourceBody, &p); err != nil {
			return 0, err
		}
		if p.Condition != "" {
			return 0, errorf(http.StatusBadRequest, "a conditional patch (condition %q) is not supported in a batch", p.Condition)
		}
		ops, err := ttlstore.ParsePatch(p.Operations)
		if err != nil {
			return 0, err
		}
		if m != "" {
			b.PatchIfMatch(op.ID, ops, m)
		} else {
			b.Patch(op.ID, ops)
		}
		return http.StatusOK, nil
	}
	return 0, errorf(http.StatusBadRequest, "operationType %q is not one of Create, Upsert, Replace, Read, Delete, Patch", op.OperationType)
}
