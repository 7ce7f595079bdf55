package cosmosql

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
)

// Match reports whether the JSON document doc passes the WHERE clause: the
// condition must evaluate to exactly true. A query without WHERE matches
// every valid document. Match never errors: a malformed doc is false.
func (q *Query) Match(doc []byte) bool {
	v, err := q.decode(doc, nil)
	if err != nil {
		return false
	}
	return q.where == nil || truthy(q.where.eval(v))
}

// row is one document that passed WHERE: its bytes, its decoded value (nil
// for SELECT *, which projects the bytes) and its ORDER BY key.
type row struct {
	raw []byte
	doc any
	key any
}

// Execute runs the whole query over docs, each a JSON object, and returns
// the results in order: WHERE, then ORDER BY (stable; without it the order
// of docs), then OFFSET/LIMIT or TOP, then the projection. The counts apply
// to documents, before projection: a SELECT VALUE whose value is undefined
// for a document yields no row but still uses up its place. Aggregates make
// one row from all the documents that pass WHERE. The error is non-nil only
// when a document is not valid JSON; on success the slice is never nil.
func (q *Query) Execute(docs iter.Seq[[]byte]) ([]json.RawMessage, error) {
	skip, take := q.window()
	if q.agg {
		return q.executeAggregate(docs, skip, take)
	}
	var rows []row
	out := []json.RawMessage{}
	var scratch map[string]any // ORDER BY rows keep their documents unless SELECT * projects none
	if q.orderBy == nil || q.star {
		scratch = q.scratch()
	}
	i := -1
	for raw := range docs {
		i++
		if take == 0 {
			break
		}
		doc, err := q.decode(raw, scratch)
		if err != nil {
			return nil, fmt.Errorf("cosmosql: document %d is not valid JSON: %v", i, err)
		}
		if q.where != nil && !truthy(q.where.eval(doc)) {
			continue
		}
		if q.orderBy != nil {
			r := row{raw: slices.Clone(raw), key: q.orderBy.eval(doc)}
			if !q.star {
				r.doc = doc
			}
			rows = append(rows, r)
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if r, ok := q.project(raw, doc); ok {
			out = append(out, r)
		}
		if take > 0 {
			take--
			if take == 0 {
				break
			}
		}
	}
	if q.orderBy == nil {
		return out, nil
	}
	return q.projectSorted(rows, skip, take), nil
}

// window returns how many documents to skip and how many to take (-1: all).
func (q *Query) window() (skip, take int) {
	skip, take = 0, -1
	if q.offset >= 0 {
		skip, take = q.offset, q.limit
	}
	if q.top >= 0 {
		take = q.top
	}
	return skip, take
}

// projectSorted sorts rows by the ORDER BY key, applies the window and projects.
func (q *Query) projectSorted(rows []row, skip, take int) []json.RawMessage {
	slices.SortStableFunc(rows, func(a, b row) int {
		c := sortCompare(a.key, b.key)
		if q.desc {
			return -c
		}
		return c
	})
	rows = rows[min(skip, len(rows)):]
	if take >= 0 && take < len(rows) {
		rows = rows[:take]
	}
	out := []json.RawMessage{}
	for _, r := range rows {
		if p, ok := q.project(r.raw, r.doc); ok {
			out = append(out, p)
		}
	}
	return out
}

// project makes the result row for one document; ok is false when SELECT
// VALUE evaluates to undefined. The bare alias projects the document's own
// bytes, copied.
func (q *Query) project(raw []byte, doc any) (json.RawMessage, bool) {
	if q.star {
		return slices.Clone(raw), true
	}
	var buf bytes.Buffer
	if q.value {
		if !writeItem(&buf, q.items[0].e, raw, doc) {
			return nil, false
		}
		return buf.Bytes(), true
	}
	buf.WriteByte('{')
	n := 0
	for _, it := range q.items {
		mark := buf.Len()
		if n > 0 {
			buf.WriteByte(',')
		}
		encodeValue(&buf, it.name)
		buf.WriteByte(':')
		if !writeItem(&buf, it.e, raw, doc) {
			buf.Truncate(mark)
			continue
		}
		n++
	}
	buf.WriteByte('}')
	return buf.Bytes(), true
}

// writeItem appends the value of e to buf, or reports false when it is undefined.
func writeItem(buf *bytes.Buffer, e expr, raw []byte, doc any) bool {
	if _, ok := e.(*rootExpr); ok {
		buf.Write(bytes.TrimSpace(raw))
		return true
	}
	v := e.eval(doc)
	if isUndef(v) {
		return false
	}
	encodeValue(buf, v)
	return true
}
