package cosmosql

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
)

// Paging: a query's results cut into pages that resume after the last
// result returned, not at a count of results, so that a document that stays
// in the results while a caller pages is returned exactly once whatever
// documents are added, removed or changed between pages.

// ErrPosition is returned by Page for a position it did not issue.
var ErrPosition = fmt.Errorf("%w: not a position this query issued", ErrParameter)

// position is where a page ended: the key of the document of the last
// result, with its ORDER BY value (Undef when undefined), and how many
// documents the pages so far took (for TOP and LIMIT).
type position struct {
	Key   string          `json:"k"`
	Value json.RawMessage `json:"v,omitempty"`
	Undef bool            `json:"u,omitempty"`
	Taken int             `json:"n"`
}

// Page runs the query over docs, as Execute, and returns one page: at most
// max results (max > 0) after the position after ("" for the first page),
// and the position to pass for the next page ("" when there is none).
// docs yields each document with a key unique to it, in increasing order of
// key (strings.Compare), the same order on every call; without ORDER BY the
// results are in that order, and with it ties are in that order too.
//
// OFFSET applies to the first page; TOP and LIMIT count across pages. A
// query with aggregates is one page. The error wraps ErrPosition for a
// position that is not one Page returned, or is Execute's.
func (q *Query) Page(docs iter.Seq2[string, []byte], after string, max int) (results []json.RawMessage, next string, err error) {
	return q.page(docs, after, max, true)
}

// page is Page; without more, it reads no document past those the page
// returns (Execute's one page needs no next).
func (q *Query) page(docs iter.Seq2[string, []byte], after string, max int, more bool) ([]json.RawMessage, string, error) {
	var pos *position
	if after != "" {
		pos = new(position)
		if err := json.Unmarshal([]byte(after), pos); err != nil {
			return nil, "", ErrPosition
		}
	}
	if q.agg {
		if pos != nil {
			return []json.RawMessage{}, "", nil
		}
		skip, take := q.window()
		res, err := q.executeAggregate(func(yield func([]byte) bool) {
			for _, d := range docs {
				if !yield(d) {
					return
				}
			}
		}, skip, take)
		return res, "", err
	}
	skip, take := q.window()
	taken := 0
	if pos != nil {
		skip, taken = 0, pos.Taken
	}
	if take >= 0 {
		take = max0(take - taken)
	}
	rows, err := q.pageRows(docs, pos, need(skip, take, max, more))
	if err != nil {
		return nil, "", err
	}
	return q.cutPage(rows, skip, take, taken, max)
}

// need is how many rows in order a page must look at, at most: those it
// skips, those it returns, and, with more, one to tell whether there is a
// next page (-1: all, when that is more than an int holds).
func need(skip, take, max int, more bool) int {
	n := max
	if take >= 0 && take < n {
		n = take
	}
	if n > math.MaxInt-skip-1 {
		return -1
	}
	if more {
		n++
	}
	return skip + n
}

// keyedRow is a row of a page: a document that passed WHERE, its key and
// ORDER BY value.
type keyedRow struct {
	row
	docKey string
}

// pageRows returns the documents that pass WHERE and come after pos, in
// the query's order; without ORDER BY, only the first n (n >= 0), each
// projected as it is found so that its decoded document can go.
func (q *Query) pageRows(docs iter.Seq2[string, []byte], pos *position, n int) ([]keyedRow, error) {
	var posVal any = undefined
	if pos != nil && q.orderBy != nil && !pos.Undef {
		v, err := decodeJSON(pos.Value)
		if err != nil {
			return nil, ErrPosition
		}
		posVal = v
	}
	var scratch map[string]any // a row that keeps no document leaves its map for the next
	if q.orderBy == nil || q.star {
		scratch = q.scratch()
	}
	var rows []keyedRow
	i := -1
	for key, raw := range docs {
		i++
		if n == 0 && q.orderBy == nil {
			break
		}
		if pos != nil && q.orderBy == nil && strings.Compare(key, pos.Key) <= 0 {
			continue
		}
		doc, err := q.decode(raw, scratch)
		if err != nil {
			return nil, fmt.Errorf("cosmosql: document %d is not valid JSON: %v", i, err)
		}
		if q.where != nil && !truthy(q.where.eval(doc)) {
			continue
		}
		r := keyedRow{row: row{raw: raw}, docKey: key}
		switch {
		case q.orderBy == nil:
			r.out, r.ok = q.project(raw, doc)
		default:
			r.key = q.orderBy.eval(doc)
			if pos != nil && q.orderCompare(r.key, key, posVal, pos.Key) <= 0 {
				continue
			}
			r.raw = slices.Clone(raw)
			if !q.star {
				r.doc = doc
			}
		}
		rows = append(rows, r)
		if q.orderBy == nil && len(rows) == n {
			break // read no further than needed
		}
	}
	if q.orderBy != nil {
		slices.SortStableFunc(rows, func(a, b keyedRow) int { return q.orderCompare(a.key, a.docKey, b.key, b.docKey) })
	}
	return rows, nil
}

// orderCompare orders two documents as ORDER BY does, ties by key.
func (q *Query) orderCompare(av any, ak string, bv any, bk string) int {
	c := sortCompare(av, bv)
	if q.desc {
		c = -c
	}
	if c != 0 {
		return c
	}
	return strings.Compare(ak, bk)
}

// cutPage skips skip rows, takes at most take (-1: all) and max of the
// rest, projects them, and returns the position after the last; taken is
// how many the pages before took.
func (q *Query) cutPage(rows []keyedRow, skip, take, taken, max int) ([]json.RawMessage, string, error) {
	rows = rows[min(skip, len(rows)):]
	if take >= 0 {
		rows = rows[:min(len(rows), take)]
	}
	out := []json.RawMessage{}
	n := 0
	for _, r := range rows {
		if n == max {
			break
		}
		if q.orderBy != nil {
			r.out, r.ok = q.project(r.raw, r.doc)
		}
		if r.ok {
			out = append(out, r.out)
		}
		n++
	}
	if n == len(rows) {
		return out, "", nil
	}
	last := rows[n-1]
	next := position{Key: last.docKey, Taken: taken + n}
	if q.orderBy != nil {
		if isUndef(last.key) {
			next.Undef = true
		} else {
			var buf bytes.Buffer
			encodeValue(&buf, last.key)
			next.Value = buf.Bytes()
		}
	}
	b, _ := json.Marshal(next)
	return out, string(b), nil
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}
