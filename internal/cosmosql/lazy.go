package cosmosql

// planDecode records which top-level members of a document the query reads
// (fields), or that it needs the whole decoded document (whole): when the
// alias appears other than as c.name / c["name"] — passed to a function,
// indexed by a computed value, compared, inside an aggregate. A bare alias
// as a whole SELECT item needs no decoding: it projects the document's bytes.
func (q *Query) planDecode() {
	q.fields, q.whole = nil, false
	var visit func(e expr)
	visit = func(e expr) {
		switch x := e.(type) {
		case nil:
			return
		case *rootExpr:
			q.whole = true
			return
		case *memberExpr:
			if _, ok := x.x.(*rootExpr); ok {
				q.addField(x.name)
				return
			}
		}
		for _, c := range e.children() {
			visit(c)
		}
	}
	visit(q.where)
	visit(q.orderBy)
	for _, it := range q.items {
		if _, bare := it.e.(*rootExpr); !bare {
			visit(it.e)
		}
	}
}

func (q *Query) addField(name string) {
	for _, f := range q.fields {
		if f == name {
			return
		}
	}
	q.fields = append(q.fields, name)
}

// decode decodes doc as far as the query needs it: the members it reads
// (see planDecode), else the whole document. Errors, and results for
// anything the lazy scan does not take, are those of decodeJSON. A non-nil
// scratch (from q.scratch) is reused for the result, which is then valid
// only until the next call with it.
func (q *Query) decode(doc []byte, scratch map[string]any) (any, error) {
	if !q.whole {
		if m, ok := decodeFields(doc, q.fields, scratch); ok {
			return m, nil
		}
	}
	return decodeJSON(doc)
}

// scratch returns a map for decode to reuse across the documents of one
// Execute, or nil when the query needs the whole document.
func (q *Query) scratch() map[string]any {
	if q.whole {
		return nil
	}
	return make(map[string]any, len(q.fields))
}
