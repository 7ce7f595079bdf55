package cosmoshttp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

// Queries: items (POST .../docs with the query header), databases and
// containers; and the plain list of items (GET .../docs).
//
// A query runs over a snapshot of the live items (ttlstore's Query or
// QueryIn: nothing expired is in it, COUNT included) in order of partition
// key and id. A page's continuation is the position after its last result
// (its key, and its ORDER BY value): the next page runs the query again and
// resumes after it, so an item that stays in the results while a client
// pages is returned exactly once, whatever else is written, deleted or
// expires between pages.

// defaultPage is the page size when the request sets none
// (x-ms-max-item-count absent or -1).
const defaultPage = 1000

type queryRequest struct {
	Query      string           `json:"query"`
	Parameters []cosmosql.Param `json:"parameters"`
}

func parseQuery(r *http.Request) (*cosmosql.Query, error) {
	body, err := readBody(r, 1<<20)
	if err != nil {
		return nil, err
	}
	var req queryRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, errorf(http.StatusBadRequest, "the query body is not {\"query\":...,\"parameters\":[...]}: %v", err)
	}
	return cosmosql.Parse(req.Query, req.Parameters)
}

func (s *Server) queryItems(w http.ResponseWriter, r *http.Request, ct *container) error {
	q, err := parseQuery(r)
	if err != nil {
		return err
	}
	return ct.runPaged(w, r, q)
}

func (s *Server) listItems(w http.ResponseWriter, r *http.Request, ct *container) error {
	return ct.runPaged(w, r, nil)
}

// runPaged runs q (nil: every item) over the request's partition (all of
// them without the header) and answers the page the continuation names.
func (ct *container) runPaged(w http.ResponseWriter, r *http.Request, q *cosmosql.Query) error {
	pk, scoped, err := parsePK(r.Header.Get(hdrPK))
	if err != nil {
		return err
	}
	after := ""
	if c := r.Header.Get("x-ms-continuation"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(c, contPrefix))
		if err != nil || !strings.HasPrefix(c, contPrefix) {
			return errorf(http.StatusBadRequest, "the continuation %q is not one this endpoint issued", c)
		}
		after = string(b)
	}
	max := defaultPage
	if m := r.Header.Get("x-ms-max-item-count"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n == 0 || n < -1 {
			return errorf(http.StatusBadRequest, "x-ms-max-item-count %q is not a positive number or -1", m)
		}
		if n > 0 {
			max = n
		}
	}
	if q == nil {
		q = selectAll
	}
	docs := ct.snapshot(pk, scoped)
	results, next, err := q.Page(func(yield func(string, []byte) bool) {
		for _, d := range docs {
			if !yield(d.key, d.json) {
				return
			}
		}
	}, after, max)
	if errors.Is(err, cosmosql.ErrPosition) {
		return errorf(http.StatusBadRequest, "the continuation is not one this query issued")
	}
	if err != nil {
		return err
	}
	if next != "" {
		w.Header().Set("x-ms-continuation", contPrefix+base64.RawURLEncoding.EncodeToString([]byte(next)))
	}
	w.Header().Set("x-ms-documentdb-query-metrics", "retrievedDocumentCount="+strconv.Itoa(len(docs))+";outputDocumentCount="+strconv.Itoa(len(results)))
	return writeList(w, "Documents", ct.ridStr, rawItems(results))
}

// contPrefix begins the continuations this endpoint issues: the position
// after the last result returned (cosmosql.Query.Page), base64.
const contPrefix = "c1."

var selectAll, _ = cosmosql.Parse("SELECT * FROM c", nil)

// snapDoc is an item of a query's snapshot: its key (partition key, then
// id) and its JSON as Cosmos DB returns it.
type snapDoc struct {
	key  string
	json []byte
}

// snapshot returns the live items of the partition pk (of every partition
// when scoped is false), as Cosmos DB returns them, in order of key.
func (ct *container) snapshot(pk ttlstore.PartitionKey, scoped bool) []snapDoc {
	var seq iter.Seq[ttlstore.Document]
	if scoped {
		seq = ct.c.QueryIn(pk, nil)
	} else {
		seq = ct.c.Query(nil)
	}
	type keyed struct {
		key string
		d   ttlstore.Document
	}
	var list []keyed
	for d := range seq {
		list = append(list, keyed{d.PartitionKey().String() + "\x00" + d.ID(), d})
	}
	slices.SortFunc(list, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	out := make([]snapDoc, len(list))
	for i, k := range list {
		out[i] = snapDoc{k.key, ct.docJSON(nil, k.d)}
	}
	return out
}

func rawItems(rs []json.RawMessage) [][]byte {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// queryResources answers a query over databases or containers.
func (s *Server) queryResources(w http.ResponseWriter, r *http.Request, member, rid string, list [][]byte) error {
	q, err := parseQuery(r)
	if err != nil {
		return err
	}
	res, err := q.Execute(slices.Values(list))
	if err != nil {
		return err
	}
	return writeList(w, member, rid, rawItems(res))
}
