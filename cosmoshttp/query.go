package cosmoshttp

import (
	"cmp"
	"encoding/json"
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
// QueryIn: nothing expired is in it, COUNT included) sorted by partition key
// and id, so that pages cut from it are stable: a page's continuation is
// the number of results before it, and the next page runs the query again
// and skips them. Writes between two pages may move results across the cut,
// as in Cosmos DB, whose continuations promise no snapshot either.

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
	skip := 0
	if c := r.Header.Get("x-ms-continuation"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "skip:"))
		if err != nil || n < 0 || !strings.HasPrefix(c, "skip:") {
			return errorf(http.StatusBadRequest, "the continuation %q is not one this endpoint issued", c)
		}
		skip = n
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
	docs := ct.snapshot(pk, scoped)
	var results []json.RawMessage
	if q == nil {
		for _, d := range docs {
			results = append(results, d)
		}
	} else if results, err = q.Execute(slices.Values(docs)); err != nil {
		return err
	}
	if skip > len(results) {
		skip = len(results)
	}
	end := min(skip+max, len(results))
	if end < len(results) {
		w.Header().Set("x-ms-continuation", "skip:"+strconv.Itoa(end))
	}
	w.Header().Set("x-ms-documentdb-query-metrics", "retrievedDocumentCount="+strconv.Itoa(len(docs))+";outputDocumentCount="+strconv.Itoa(end-skip))
	return writeList(w, "Documents", ct.props.Rid, rawItems(results[skip:end]))
}

// snapshot returns the live items of the partition pk (of every partition
// when scoped is false), as Cosmos DB returns them, in order of partition
// key and id.
func (ct *container) snapshot(pk ttlstore.PartitionKey, scoped bool) [][]byte {
	var seq iter.Seq[ttlstore.Document]
	if scoped {
		seq = ct.c.QueryIn(pk, nil)
	} else {
		seq = ct.c.Query(nil)
	}
	type keyed struct {
		pk string
		d  ttlstore.Document
	}
	var list []keyed
	for d := range seq {
		k := keyed{d: d}
		if !scoped {
			k.pk = d.PartitionKey().String()
		}
		list = append(list, k)
	}
	slices.SortFunc(list, func(a, b keyed) int {
		return cmp.Or(strings.Compare(a.pk, b.pk), strings.Compare(a.d.ID(), b.d.ID()))
	})
	out := make([][]byte, len(list))
	for i, k := range list {
		out[i] = ct.docJSON(nil, k.d)
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
