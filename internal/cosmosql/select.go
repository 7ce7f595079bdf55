package cosmosql

import (
	"fmt"
	"strconv"
)

// selectClause parses what follows SELECT up to FROM: [TOP n] then *,
// VALUE <expr>, or a list of <expr> [[AS] name].
func (p *parser) selectClause(q *Query) error {
	for {
		t := p.peek()
		if t.is("DISTINCT") {
			return unsupported(t.off, "DISTINCT")
		}
		if !t.is("TOP") {
			break
		}
		if q.top >= 0 {
			return syntaxErr(t.off, "one TOP", t)
		}
		p.next()
		n, err := p.count("TOP")
		if err != nil {
			return err
		}
		q.top = n
	}
	switch t := p.peek(); {
	case t.isP("*"):
		p.next()
		q.star = true
		return nil
	case t.is("VALUE"):
		p.next()
		e, err := p.expr()
		if err != nil {
			return err
		}
		q.value, q.items = true, []selectItem{{e: e}}
		if t := p.peek(); t.isP(",") {
			return syntaxErr(t.off, "FROM (SELECT VALUE takes one expression)", t)
		}
		return nil
	}
	return p.selectList(q)
}

// selectList parses <expr> [[AS] name] {, <expr> [[AS] name]}.
func (p *parser) selectList(q *Query) error {
	for {
		e, err := p.expr()
		if err != nil {
			return err
		}
		it := selectItem{e: e}
		if p.peek().is("AS") {
			p.next()
			if t := p.peek(); t.kind != tIdent || isReserved(t) {
				return syntaxErr(t.off, "a name after AS", t)
			}
		}
		if t := p.peek(); t.kind == tIdent && !isReserved(t) {
			it.name = p.next().text
		}
		q.items = append(q.items, it)
		if !p.peek().isP(",") {
			return nil
		}
		p.next()
	}
}

// checkItems resolves the projection, places aggregates, names unnamed
// items ("$1", "$2", ... in order among the unnamed) and refuses the
// combinations outside the subset.
func (q *Query) checkItems(noAgg func(expr) error) error {
	aggs := 0
	for _, it := range q.items {
		f := noAgg
		if a, ok := it.e.(*aggExpr); ok {
			aggs++
			f = func(e expr) error {
				if e == a {
					return nil
				}
				return noAgg(e)
			}
		}
		if err := walk(it.e, f); err != nil {
			return err
		}
	}
	if aggs > 0 && aggs < len(q.items) {
		return fmt.Errorf("%w: aggregate mixed with non-aggregate projection", ErrUnsupported)
	}
	q.agg = aggs > 0
	if q.agg && q.orderBy != nil {
		return fmt.Errorf("%w: ORDER BY with an aggregate", ErrUnsupported)
	}
	if q.top >= 0 && q.offset >= 0 {
		return fmt.Errorf("%w: TOP together with OFFSET LIMIT", ErrUnsupported)
	}
	if q.value || q.star {
		return nil
	}
	return q.nameItems()
}

// nameItems gives each projected item its output name and refuses duplicates.
func (q *Query) nameItems() error {
	seen := make(map[string]bool, len(q.items))
	unnamed := 0
	for i := range q.items {
		it := &q.items[i]
		if it.name == "" {
			it.name = pathName(it.e)
		}
		if it.name == "" {
			unnamed++
			it.name = "$" + strconv.Itoa(unnamed)
		}
		if seen[it.name] {
			return fmt.Errorf("%w: the projection name %q is used more than once", ErrSyntax, it.name)
		}
		seen[it.name] = true
	}
	return nil
}
