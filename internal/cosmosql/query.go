package cosmosql

import (
	"fmt"
)

// Query is a parsed query or patch condition. It is immutable once parsed:
// Match and Execute may be called from any number of goroutines at once.
type Query struct {
	star    bool         // SELECT *
	value   bool         // SELECT VALUE: items holds exactly one item
	items   []selectItem // projection, unless star
	agg     bool         // the items are aggregates
	top     int          // -1 when absent
	offset  int          // -1 when absent
	limit   int          // -1 when absent
	where   expr         // nil when absent
	orderBy expr         // nil when absent; a property path
	desc    bool
	fields  []string // the top-level members the query reads (see planDecode)
	whole   bool     // the query needs the whole decoded document
}

// selectItem is one projected expression and the name it is projected under.
type selectItem struct {
	e    expr
	name string
}

// Parse parses a whole query, SELECT ... FROM ..., substituting params by
// value. It returns an error wrapping ErrSyntax, ErrUnsupported or
// ErrParameter. Parameters given but not used are ignored.
func Parse(text string, params []Param) (*Query, error) {
	pm, err := decodeParams(params)
	if err != nil {
		return nil, err
	}
	p, err := newParser(text, pm)
	if err != nil {
		return nil, err
	}
	q := &Query{top: -1, offset: -1, limit: -1}
	if err := p.expectKw("SELECT"); err != nil {
		return nil, err
	}
	if err := p.selectClause(q); err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tEOF {
		return nil, unsupported(t.off, "SELECT without FROM")
	}
	return q, p.rest(q)
}

// ParseCondition parses a patch condition as Cosmos sends it, "FROM c WHERE
// <expr>" (any alias, "FROM root r" too; WHERE may be absent, then every
// document matches). A condition takes no parameters: a @name in it is an
// ErrParameter.
func ParseCondition(text string) (*Query, error) {
	p, err := newParser(text, nil)
	if err != nil {
		return nil, err
	}
	q := &Query{star: true, top: -1, offset: -1, limit: -1}
	if t := p.peek(); t.is("SELECT") {
		return nil, syntaxErr(t.off, "FROM (a condition has no SELECT)", t)
	}
	return q, p.rest(q)
}

// rest parses FROM and the clauses after it up to the end, then resolves the alias.
func (p *parser) rest(q *Query) error {
	if err := p.expectKw("FROM"); err != nil {
		return err
	}
	alias, err := p.fromClause()
	if err != nil {
		return err
	}
	if p.peek().is("WHERE") {
		p.next()
		if q.where, err = p.expr(); err != nil {
			return err
		}
	}
	if err := p.tailClauses(q); err != nil {
		return err
	}
	if t := p.peek(); t.kind != tEOF {
		return syntaxErr(t.off, "end of query", t)
	}
	if err := q.check(alias); err != nil {
		return err
	}
	q.planDecode()
	return nil
}

// fromClause parses "<name> [[AS] alias]" and returns the alias documents are bound to.
func (p *parser) fromClause() (string, error) {
	t := p.next()
	if t.isP("(") {
		return "", unsupported(t.off, "subquery in FROM")
	}
	if t.kind != tIdent || isReserved(t) {
		return "", syntaxErr(t.off, "a container name or alias after FROM", t)
	}
	alias := t.text
	if n := p.peek(); n.is("IN") {
		return "", unsupported(n.off, "FROM ... IN (iteration)")
	}
	if p.peek().is("AS") {
		p.next()
		if n := p.peek(); n.kind != tIdent || isReserved(n) {
			return "", syntaxErr(n.off, "an alias after AS", n)
		}
	}
	if n := p.peek(); n.kind == tIdent && !isReserved(n) {
		alias = p.next().text
	}
	if n := p.peek(); n.is("JOIN") {
		return "", unsupported(n.off, "JOIN")
	}
	if n := p.peek(); n.isP(".") || n.isP("[") {
		return "", unsupported(n.off, "FROM on a path inside the document")
	}
	return alias, nil
}

// tailClauses parses GROUP BY (refused), ORDER BY and OFFSET ... LIMIT ....
func (p *parser) tailClauses(q *Query) error {
	if t := p.peek(); t.is("GROUP") {
		return unsupported(t.off, "GROUP BY")
	}
	if p.peek().is("ORDER") {
		if err := p.orderBy(q); err != nil {
			return err
		}
	}
	if t := p.peek(); t.is("LIMIT") {
		return syntaxErr(t.off, "OFFSET before LIMIT", t)
	}
	if !p.peek().is("OFFSET") {
		return nil
	}
	p.next()
	var err error
	if q.offset, err = p.count("OFFSET"); err != nil {
		return err
	}
	if err := p.expectKw("LIMIT"); err != nil {
		return err
	}
	q.limit, err = p.count("LIMIT")
	return err
}

// orderBy parses ORDER BY <path> [ASC|DESC]; a second key is refused.
func (p *parser) orderBy(q *Query) error {
	p.next()
	if err := p.expectKw("BY"); err != nil {
		return err
	}
	start := p.peek()
	if start.is("RANK") {
		return unsupported(start.off, "ORDER BY RANK")
	}
	e, err := p.expr()
	if err != nil {
		return err
	}
	if !isPath(e) {
		return unsupported(start.off, "ORDER BY on an expression that is not a property path")
	}
	q.orderBy = e
	if t := p.peek(); t.is("ASC") || t.is("DESC") {
		q.desc = p.next().is("DESC")
	}
	if t := p.peek(); t.isP(",") {
		return unsupported(t.off, "ORDER BY on more than one property")
	}
	return nil
}

// check resolves every identifier against the alias and places aggregates.
func (q *Query) check(alias string) error {
	resolve := func(e expr) error {
		if r, ok := e.(*rootExpr); ok && r.name != alias {
			return fmt.Errorf("%w at offset %d: identifier %q could not be resolved (the FROM alias is %q)", ErrSyntax, r.off, r.name, alias)
		}
		return nil
	}
	noAgg := func(where string) func(expr) error {
		return func(e expr) error {
			if a, ok := e.(*aggExpr); ok {
				return unsupported(a.off, "aggregate "+a.name+" "+where)
			}
			return resolve(e)
		}
	}
	if err := walk(q.where, noAgg("in WHERE")); err != nil {
		return err
	}
	if err := walk(q.orderBy, noAgg("in ORDER BY")); err != nil {
		return err
	}
	return q.checkItems(noAgg("inside an expression"))
}
