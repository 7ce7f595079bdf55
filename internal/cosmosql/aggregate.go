package cosmosql

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
)

// accumulator folds one aggregate over the values of its argument.
type accumulator struct {
	name  string
	count int     // defined values seen
	sum   float64 // SUM and AVG
	bad   bool    // SUM/AVG saw a non-number, or MIN/MAX an array or object: result undefined
	best  any     // MIN and MAX so far; undefined before the first value
}

// add folds one value in; undefined values are skipped by every aggregate.
func (a *accumulator) add(v any) {
	if isUndef(v) {
		return
	}
	a.count++
	switch a.name {
	case "SUM", "AVG":
		f, ok := toNum(v)
		a.sum += f
		a.bad = a.bad || !ok
	case "MIN", "MAX":
		if r := rank(v); r == rankArray || r == rankObject {
			a.bad = true
			return
		}
		c := sortCompare(v, a.best)
		if isUndef(a.best) || (a.name == "MIN" && c < 0) || (a.name == "MAX" && c > 0) {
			a.best = v
		}
	}
}

// result is the aggregate's value: COUNT of nothing is 0, SUM of nothing
// is 0, AVG, MIN and MAX of nothing are undefined.
func (a *accumulator) result() any {
	switch {
	case a.name == "COUNT":
		return float64(a.count)
	case a.bad:
		return undefined
	case a.name == "SUM":
		return numValue(a.sum)
	case a.name == "AVG":
		if a.count == 0 {
			return undefined
		}
		return numValue(a.sum / float64(a.count))
	}
	return a.best
}

// executeAggregate runs a query whose items are all aggregates: one row,
// then the OFFSET/LIMIT or TOP window over that single row.
func (q *Query) executeAggregate(docs iter.Seq[[]byte], skip, take int) ([]json.RawMessage, error) {
	accs := make([]accumulator, len(q.items))
	for i, it := range q.items {
		accs[i] = accumulator{name: it.e.(*aggExpr).name, best: undefined}
	}
	scratch := q.scratch() // the accumulators keep member values, never the document
	i := -1
	for raw := range docs {
		i++
		doc, err := q.decode(raw, scratch)
		if err != nil {
			return nil, fmt.Errorf("cosmosql: document %d is not valid JSON: %v", i, err)
		}
		if q.where != nil && !truthy(q.where.eval(doc)) {
			continue
		}
		for j, it := range q.items {
			accs[j].add(it.e.(*aggExpr).arg.eval(doc))
		}
	}
	if skip > 0 || take == 0 {
		return []json.RawMessage{}, nil
	}
	var buf bytes.Buffer
	if q.value {
		v := accs[0].result()
		if isUndef(v) {
			return []json.RawMessage{}, nil
		}
		encodeValue(&buf, v)
		return []json.RawMessage{buf.Bytes()}, nil
	}
	buf.WriteByte('{')
	n := 0
	for j, it := range q.items {
		v := accs[j].result()
		if isUndef(v) {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		encodeValue(&buf, it.name)
		buf.WriteByte(':')
		encodeValue(&buf, v)
	}
	buf.WriteByte('}')
	return []json.RawMessage{buf.Bytes()}, nil
}
