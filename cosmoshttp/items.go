package cosmoshttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

// Items: create, upsert, read, replace, delete and patch of one item.

const hdrPK = "x-ms-documentdb-partitionkey"

// items answers /dbs/{db}/colls/{c}/docs: POST creates, upserts, queries or
// runs a transactional batch, by its headers; GET reads the change feed (with
// A-IM) or lists the items.
func (s *Server) items(w http.ResponseWriter, r *http.Request, dbID, collID string) error {
	ct, err := s.lookup(dbID, collID)
	if err != nil {
		return err
	}
	switch {
	case r.Method == http.MethodPost && headerTrue(r, "x-ms-cosmos-is-batch-request"):
		return s.batch(w, r, ct)
	case r.Method == http.MethodPost && isQuery(r):
		return s.queryItems(w, r, ct)
	case r.Method == http.MethodPost:
		return s.createItem(w, r, ct)
	case r.Method == http.MethodGet && r.Header.Get("A-IM") != "":
		return s.changeFeed(w, r, ct)
	case r.Method == http.MethodGet:
		return s.listItems(w, r, ct)
	}
	return notAllowed(r)
}

// itemOne answers /dbs/{db}/colls/{c}/docs/{id}.
func (s *Server) itemOne(w http.ResponseWriter, r *http.Request, dbID, collID, id string) error {
	ct, err := s.lookup(dbID, collID)
	if err != nil {
		return err
	}
	pk, err := ct.partitionKey(r)
	if err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet:
		d, err := ct.c.ReadIn(pk, id)
		if err != nil {
			return err
		}
		if inm := r.Header.Get("If-None-Match"); inm != "" && unquote(inm) == d.ETag() {
			w.Header().Set("etag", quote(d.ETag()))
			writeJSON(w, http.StatusNotModified, nil)
			return nil
		}
		return ct.writeDoc(w, r, http.StatusOK, d, false)
	case http.MethodPut:
		body, err := s.itemBody(r)
		if err != nil {
			return err
		}
		if bid, ok := bodyID(body); ok && bid != id {
			return errorf(http.StatusBadRequest, "the item's id %q is not the id in the path, %q", bid, id)
		}
		var d ttlstore.Document
		if m, ok := ifMatch(r); ok {
			d, err = ct.c.ReplaceIfMatchIn(pk, body, m)
		} else {
			d, err = ct.c.ReplaceIn(pk, body)
		}
		if err != nil {
			return err
		}
		return ct.writeDoc(w, r, http.StatusOK, d, true)
	case http.MethodDelete:
		if m, ok := ifMatch(r); ok {
			err = ct.c.DeleteIfMatchIn(pk, id, m)
		} else {
			err = ct.c.DeleteIn(pk, id)
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusNoContent, nil)
		return nil
	case http.MethodPatch:
		return s.patchItem(w, r, ct, pk, id)
	}
	return notAllowed(r)
}

func (s *Server) createItem(w http.ResponseWriter, r *http.Request, ct *container) error {
	pk, err := ct.partitionKey(r)
	if err != nil {
		return err
	}
	body, err := s.itemBody(r)
	if err != nil {
		return err
	}
	if !headerTrue(r, "x-ms-documentdb-is-upsert") {
		d, err := ct.c.CreateIn(pk, body)
		if err != nil {
			return err
		}
		return ct.writeDoc(w, r, http.StatusCreated, d, true)
	}
	if m, ok := ifMatch(r); ok {
		d, err := ct.c.ReplaceIfMatchIn(pk, body, m)
		if err != nil {
			return err
		}
		return ct.writeDoc(w, r, http.StatusOK, d, true)
	}
	// An upsert answers 201 when it created the item and 200 when it
	// replaced one: a Create, and on a conflict a Replace (again while a
	// concurrent delete makes the item vanish in between).
	for range 8 {
		d, err := ct.c.CreateIn(pk, body)
		if err == nil {
			return ct.writeDoc(w, r, http.StatusCreated, d, true)
		}
		if !errors.Is(err, ttlstore.ErrConflict) {
			return err
		}
		d, err = ct.c.ReplaceIn(pk, body)
		if err == nil {
			return ct.writeDoc(w, r, http.StatusOK, d, true)
		}
		if !errors.Is(err, ttlstore.ErrNotFound) {
			return err
		}
	}
	d, err := ct.c.UpsertIn(pk, body)
	if err != nil {
		return err
	}
	return ct.writeDoc(w, r, http.StatusOK, d, true)
}

func (s *Server) patchItem(w http.ResponseWriter, r *http.Request, ct *container, pk ttlstore.PartitionKey, id string) error {
	body, err := readBody(r, s.maxDoc)
	if err != nil {
		return err
	}
	var req struct {
		Operations json.RawMessage `json:"operations"`
		Condition  string          `json:"condition"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return errorf(http.StatusBadRequest, "the patch is not a JSON object with operations: %v", err)
	}
	ops, err := parsePatchOps(req.Operations)
	if err != nil {
		return err
	}
	var cond *cosmosql.Query
	if req.Condition != "" {
		if cond, err = cosmosql.ParseCondition(req.Condition); err != nil {
			return err
		}
	}
	m, hasMatch := ifMatch(r)
	var d ttlstore.Document
	switch {
	case cond != nil:
		d, err = ct.c.PatchIfIn(pk, id, ops, func(cur ttlstore.Document) bool {
			return (!hasMatch || cur.ETag() == m) && cond.Match(ct.docJSON(nil, cur))
		})
	case hasMatch:
		d, err = ct.c.PatchIfMatchIn(pk, id, ops, m)
	default:
		d, err = ct.c.PatchIn(pk, id, ops)
	}
	if err != nil {
		return err
	}
	return ct.writeDoc(w, r, http.StatusOK, d, true)
}

// parsePatchOps reads a patch's operations; more than Cosmos DB's ten is a
// bad request (400), not a size (ttlstore's ErrTooLarge).
func parsePatchOps(raw json.RawMessage) ([]ttlstore.PatchOp, error) {
	ops, err := ttlstore.ParsePatch(raw)
	if err == nil && len(ops) > ttlstore.DefaultMaxPatchOperations {
		err = errorf(http.StatusBadRequest, "the patch has %d operations; the limit is %d", len(ops), ttlstore.DefaultMaxPatchOperations)
	}
	return ops, err
}

// itemBody reads an item's JSON, refusing it with 413 past the document
// limit, and removes the system properties a client may send back from an
// item it read (_rid, _self, _attachments, _lsn; ttlstore replaces _ts and
// _etag itself).
func (s *Server) itemBody(r *http.Request) ([]byte, error) {
	body, err := readBody(r, s.maxDoc)
	if err != nil {
		return nil, err
	}
	return stripSystem(body), nil
}

var systemProps = []string{"_rid", "_self", "_attachments", "_lsn"}

func stripSystem(body []byte) []byte {
	found := false
	for _, p := range systemProps {
		if bytes.Contains(body, []byte(`"`+p+`"`)) {
			found = true
		}
	}
	if !found {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return body // not an object: the collection says what is wrong
	}
	out := []byte{'{'}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return body
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return body
		}
		skip := false
		for _, p := range systemProps {
			skip = skip || key == p
		}
		if skip {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		kb, _ := json.Marshal(key)
		out = append(append(append(out, kb...), ':'), v...)
	}
	return append(out, '}')
}

// bodyID returns the top-level id of an item's JSON.
func bodyID(body []byte) (string, bool) {
	var v struct {
		ID *string `json:"id"`
	}
	if json.Unmarshal(body, &v) != nil || v.ID == nil {
		return "", false
	}
	return *v.ID, true
}

// docJSON appends the item d as Cosmos DB returns it: the stored JSON with
// _etag quoted and _rid, _self and _attachments added.
func (ct *container) docJSON(dst []byte, d ttlstore.Document) []byte {
	start := len(dst)
	dst = d.AppendJSON(dst)
	i := bytes.LastIndex(dst[start:], []byte(`,"_etag":"`))
	if i < 0 {
		return dst
	}
	dst = dst[:start+i]
	rid := ct.docRid(d.PartitionKey(), d.ID())
	dst = append(dst, `,"_etag":"\"`...)
	dst = append(dst, d.ETag()...)
	dst = append(dst, `\"","_rid":"`...)
	dst = append(dst, rid...)
	dst = append(dst, `","_self":"`...)
	dst = append(dst, ct.selfPre...)
	dst = append(dst, rid...)
	dst = append(dst, `/","_attachments":"attachments/"}`...)
	return dst
}

// writeDoc answers an item: its etag, and its JSON unless the request
// prefers a minimal answer to a write.
func (ct *container) writeDoc(w http.ResponseWriter, r *http.Request, status int, d ttlstore.Document, write bool) error {
	w.Header().Set("etag", quote(d.ETag()))
	if write && strings.Contains(r.Header.Get("Prefer"), "return=minimal") {
		writeJSON(w, status, nil)
		return nil
	}
	writeJSON(w, status, ct.docJSON(nil, d))
	return nil
}

// partitionKey reads the request's x-ms-documentdb-partitionkey: a JSON
// array of one value (a string, number, boolean or null), or [{}] for
// PartitionKey.None. A container without a partition key takes the header's
// absence as None too.
func (ct *container) partitionKey(r *http.Request) (ttlstore.PartitionKey, error) {
	pk, ok, err := parsePK(r.Header.Get(hdrPK))
	if err != nil {
		return pk, err
	}
	if !ok && ct.pkPath != "" {
		return pk, errorf(http.StatusBadRequest, "the container is partitioned by %s: the request needs the partition key header (%s)", ct.pkPath, hdrPK)
	}
	return pk, nil
}

// parsePK parses a partition key header; ok is false when there is none (or
// it is [], which a cross-partition query sends).
func parsePK(h string) (pk ttlstore.PartitionKey, ok bool, err error) {
	if h == "" {
		return pk, false, nil
	}
	// The common case, a plain string: ["abc"].
	if len(h) >= 4 && h[:2] == `["` && h[len(h)-2:] == `"]` && !strings.ContainsAny(h[2:len(h)-2], `"\\`) {
		return ttlstore.PartitionKeyString(h[2 : len(h)-2]), true, nil
	}
	var vals []json.RawMessage
	if err := json.Unmarshal([]byte(h), &vals); err != nil {
		// The Go SDK quotes strings with strconv.QuoteToASCII, which writes
		// \U0001f600 and \x01 where JSON has surrogate pairs and \u0001.
		inner := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
		if s, uerr := strconv.Unquote(inner); uerr == nil && strings.HasPrefix(h, `["`) && strings.HasSuffix(h, `"]`) {
			return ttlstore.PartitionKeyString(s), true, nil
		}
		return pk, false, errorf(http.StatusBadRequest, "the partition key header %q is not a JSON array", h)
	}
	switch len(vals) {
	case 0:
		return pk, false, nil
	case 1:
	default:
		return pk, false, errorf(http.StatusBadRequest, "the partition key header %s has %d values: hierarchical partition keys are not supported", h, len(vals))
	}
	v := bytes.TrimSpace(vals[0])
	switch {
	case string(v) == "null":
		return ttlstore.PartitionKeyNull(), true, nil
	case string(v) == "true" || string(v) == "false":
		return ttlstore.PartitionKeyBool(string(v) == "true"), true, nil
	case len(v) > 0 && v[0] == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return pk, false, errorf(http.StatusBadRequest, "the partition key header %s: %v", h, err)
		}
		return ttlstore.PartitionKeyString(s), true, nil
	case len(v) > 0 && v[0] == '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(v, &m) == nil && len(m) == 0 {
			return ttlstore.PartitionKeyNone(), true, nil
		}
	default:
		var f float64
		if json.Unmarshal(v, &f) == nil && !math.IsInf(f, 0) {
			return ttlstore.PartitionKeyNumber(f), true, nil
		}
	}
	return pk, false, errorf(http.StatusBadRequest, "the partition key header %s holds %s, which is not a string, number, boolean, null or {}", h, v)
}

// ifMatch returns the If-Match header's etag, unquoted; "*" and absence
// are no condition.
func ifMatch(r *http.Request) (string, bool) {
	m := r.Header.Get("If-Match")
	if m == "" || m == "*" {
		return "", false
	}
	return unquote(m), true
}

func quote(etag string) string { return `"` + etag + `"` }

func unquote(etag string) string {
	etag = strings.TrimPrefix(etag, "W/")
	if len(etag) >= 2 && etag[0] == '"' && etag[len(etag)-1] == '"' {
		return etag[1 : len(etag)-1]
	}
	return etag
}

func headerTrue(r *http.Request, name string) bool {
	return strings.EqualFold(r.Header.Get(name), "true")
}

// isQuery tells a query (POST with the query header, or the query content
// type) from a create.
func isQuery(r *http.Request) bool {
	return headerTrue(r, "x-ms-documentdb-query") || headerTrue(r, "x-ms-documentdb-isquery") ||
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json")
}
