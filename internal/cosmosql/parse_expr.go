package cosmosql

import (
	"strings"
)

// maxDepth bounds expression nesting so that hostile input cannot exhaust the stack.
const maxDepth = 200

// reserved are the keywords that cannot be used as an identifier (alias or
// property root). After '.' any word is a member name.
var reserved = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "AND": true, "OR": true, "NOT": true,
	"IN": true, "BETWEEN": true, "TOP": true, "VALUE": true, "AS": true, "ORDER": true,
	"BY": true, "ASC": true, "DESC": true, "OFFSET": true, "LIMIT": true, "JOIN": true,
	"GROUP": true, "DISTINCT": true, "EXISTS": true, "LIKE": true, "ESCAPE": true,
	"TRUE": true, "FALSE": true, "NULL": true, "UNDEFINED": true, "UDF": true, "HAVING": true,
}

func isReserved(t token) bool { return t.kind == tIdent && reserved[strings.ToUpper(t.text)] }

// expr parses a full expression, refusing the conditional and coalesce operators.
func (p *parser) expr() (expr, error) {
	e, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	switch t := p.peek(); {
	case t.isP("??"):
		return nil, unsupported(t.off, "coalesce operator ??")
	case t.isP("?"):
		return nil, unsupported(t.off, "conditional operator ?:")
	}
	return e, nil
}

func (p *parser) orExpr() (expr, error) {
	l, err := p.andExpr()
	for err == nil && p.peek().is("OR") {
		p.next()
		var r expr
		if r, err = p.andExpr(); err == nil {
			l = &orExpr{l, r}
		}
	}
	return l, err
}

func (p *parser) andExpr() (expr, error) {
	l, err := p.notExpr()
	for err == nil && p.peek().is("AND") {
		p.next()
		var r expr
		if r, err = p.notExpr(); err == nil {
			l = &andExpr{l, r}
		}
	}
	return l, err
}

func (p *parser) notExpr() (expr, error) {
	if !p.peek().is("NOT") {
		return p.cmpExpr()
	}
	p.next()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.notExpr()
	if err != nil {
		return nil, err
	}
	return &notExpr{x}, nil
}

var cmpOps = map[string]bool{"=": true, "!=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}
var bitOps = map[string]bool{"&": true, "|": true, "^": true, "<<": true, ">>": true, ">>>": true}

// cmpExpr parses a sum optionally followed by one comparison, [NOT] IN or [NOT] BETWEEN.
func (p *parser) cmpExpr() (expr, error) {
	l, err := p.addExpr()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tPunct && cmpOps[t.text]:
		p.next()
		r, err := p.addExpr()
		if err != nil {
			return nil, err
		}
		return &binaryExpr{t.text, l, r}, nil
	case t.kind == tPunct && bitOps[t.text]:
		return nil, unsupported(t.off, "bitwise operator "+t.text)
	}
	neg := false
	if t.is("NOT") && (p.peekAt(1).is("IN") || p.peekAt(1).is("BETWEEN") || p.peekAt(1).is("LIKE")) {
		neg = true
		p.next()
		t = p.peek()
	}
	switch {
	case t.is("IN"):
		p.next()
		return p.inList(l, neg)
	case t.is("BETWEEN"):
		p.next()
		return p.between(l, neg)
	case t.is("LIKE"):
		p.next()
		return p.like(l, neg)
	}
	return l, nil
}

// inList parses "(v1, v2, ...)" after IN.
func (p *parser) inList(x expr, neg bool) (expr, error) {
	if t := p.peek(); t.isP("(") && p.peekAt(1).is("SELECT") {
		return nil, unsupported(t.off, "subquery")
	}
	list, err := p.exprList("(", ")")
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, syntaxErr(p.peek().off, "a value in the IN list", p.peek())
	}
	return &inExpr{x, list, neg}, nil
}

func (p *parser) between(x expr, neg bool) (expr, error) {
	lo, err := p.addExpr()
	if err != nil {
		return nil, err
	}
	if err := p.expectKw("AND"); err != nil {
		return nil, err
	}
	hi, err := p.addExpr()
	if err != nil {
		return nil, err
	}
	return &betweenExpr{x, lo, hi, neg}, nil
}

func (p *parser) addExpr() (expr, error) {
	l, err := p.mulExpr()
	for err == nil {
		t := p.peek()
		if !t.isP("+") && !t.isP("-") && !t.isP("||") {
			break
		}
		p.next()
		var r expr
		if r, err = p.mulExpr(); err == nil {
			l = &binaryExpr{t.text, l, r}
		}
	}
	return l, err
}

func (p *parser) mulExpr() (expr, error) {
	l, err := p.unaryExpr()
	for err == nil {
		t := p.peek()
		if !t.isP("*") && !t.isP("/") && !t.isP("%") {
			break
		}
		p.next()
		var r expr
		if r, err = p.unaryExpr(); err == nil {
			l = &binaryExpr{t.text, l, r}
		}
	}
	return l, err
}

func (p *parser) unaryExpr() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.peek()
	switch {
	case t.isP("~"):
		return nil, unsupported(t.off, "bitwise operator ~")
	case t.isP("-") || t.isP("+"):
		p.next()
		x, err := p.unaryExpr()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{t.text, x}, nil
	}
	return p.postfixExpr()
}

// postfixExpr parses a primary followed by any number of .name and [index].
func (p *parser) postfixExpr() (expr, error) {
	x, err := p.primary()
	for err == nil {
		switch t := p.peek(); {
		case t.isP("."):
			p.next()
			n := p.next()
			if n.kind != tIdent {
				return nil, syntaxErr(n.off, "a property name after '.'", n)
			}
			x = &memberExpr{x, n.text}
		case t.isP("["):
			p.next()
			var idx expr
			if idx, err = p.expr(); err == nil {
				err = p.expectP("]")
			}
			if l, ok := idx.(*litExpr); ok {
				if s, ok := l.v.(string); ok {
					x = &memberExpr{x, s}
					continue
				}
			}
			x = &indexExpr{x, idx}
		default:
			return x, nil
		}
	}
	return nil, err
}

// exprList parses open [expr {, expr}] close.
func (p *parser) exprList(open, close string) ([]expr, error) {
	if err := p.expectP(open); err != nil {
		return nil, err
	}
	var list []expr
	for !p.peek().isP(close) {
		if len(list) > 0 {
			if err := p.expectP(","); err != nil {
				return nil, err
			}
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		list = append(list, e)
	}
	p.next()
	return list, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return syntaxMsg(p.peek().off, "expression nested more than %d deep", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }
