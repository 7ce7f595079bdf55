package cosmosql

import (
	"bytes"
	"encoding/json"
	"iter"
	"math"
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

// row is one document that passed WHERE: its bytes and its decoded value
// (nil once projected, or for SELECT *, which projects the bytes), its
// ORDER BY key, or its projection already made (out, ok) when there is no
// ORDER BY.
type row struct {
	raw []byte
	doc any
	key any
	out json.RawMessage
	ok  bool
}

// Execute runs the whole query over docs, each a JSON object, and returns
// the results in order: WHERE, then ORDER BY (stable; without it the order
// of docs), then OFFSET/LIMIT or TOP, then the projection. The counts apply
// to documents, before projection: a SELECT VALUE whose value is undefined
// for a document yields no row but still uses up its place. Aggregates make
// one row from all the documents that pass WHERE. The error is non-nil only
// when a document is not valid JSON; on success the slice is never nil.
// It is one page of Page as large as the results.
func (q *Query) Execute(docs iter.Seq[[]byte]) ([]json.RawMessage, error) {
	if q.agg {
		skip, take := q.window()
		return q.executeAggregate(docs, skip, take)
	}
	// One page, from the start, and no position after it: the documents
	// need no keys (ties keep the order of docs, as the sort is stable).
	res, _, err := q.page(func(yield func(string, []byte) bool) {
		for d := range docs {
			if !yield("", d) {
				return
			}
		}
	}, "", math.MaxInt, false)
	return res, err
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
