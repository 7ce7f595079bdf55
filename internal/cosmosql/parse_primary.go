package cosmosql

import (
	"fmt"
	"strings"
)

// primary parses a literal, parameter, identifier, function call,
// parenthesized expression, array or object literal.
func (p *parser) primary() (expr, error) {
	t := p.peek()
	switch t.kind {
	case tNumber:
		p.next()
		return &litExpr{t.num}, nil
	case tString:
		p.next()
		return &litExpr{t.text}, nil
	case tParam:
		p.next()
		v, ok := p.params[t.text]
		if !ok {
			return nil, fmt.Errorf("%w: %s is used at offset %d but not given", ErrParameter, t.text, t.off)
		}
		return &litExpr{v}, nil
	case tIdent:
		return p.identPrimary()
	}
	switch {
	case t.isP("("):
		if p.peekAt(1).is("SELECT") {
			return nil, unsupported(t.off, "subquery")
		}
		p.next()
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		return e, p.expectP(")")
	case t.isP("["):
		elems, err := p.exprList("[", "]")
		if err != nil {
			return nil, err
		}
		return &arrayExpr{elems}, nil
	case t.isP("{"):
		return p.objectLit()
	}
	return nil, syntaxErr(t.off, "an expression", t)
}

// identPrimary parses what starts with a word: a keyword literal, a
// function call, or the FROM alias.
func (p *parser) identPrimary() (expr, error) {
	t := p.peek()
	up := strings.ToUpper(t.text)
	switch up {
	case "TRUE", "FALSE":
		p.next()
		return &litExpr{up == "TRUE"}, nil
	case "NULL":
		p.next()
		return &litExpr{nil}, nil
	case "UNDEFINED":
		p.next()
		return &litExpr{undefined}, nil
	case "EXISTS":
		return nil, unsupported(t.off, "subquery (EXISTS)")
	case "ARRAY":
		if p.peekAt(1).isP("(") {
			return nil, unsupported(t.off, "subquery (ARRAY)")
		}
	case "UDF":
		if p.peekAt(1).isP(".") && p.peekAt(2).kind == tIdent {
			return nil, unsupported(t.off, "user-defined function udf."+p.peekAt(2).text)
		}
	}
	if isReserved(t) {
		return nil, syntaxErr(t.off, "an expression", t)
	}
	if p.peekAt(1).isP("(") {
		return p.call()
	}
	p.next()
	return &rootExpr{name: t.text, off: t.off}, nil
}

// call parses name(args) for a supported system function or an aggregate.
func (p *parser) call() (expr, error) {
	t := p.next()
	name := strings.ToUpper(t.text)
	f, known := functions[name]
	if !known && !aggregates[name] {
		return nil, unsupported(t.off, "function "+name)
	}
	if p.peekAt(1).is("SELECT") {
		return nil, unsupported(t.off, "subquery")
	}
	args, err := p.exprList("(", ")")
	if err != nil {
		return nil, err
	}
	if aggregates[name] {
		if len(args) != 1 {
			return nil, syntaxMsg(t.off, "%s takes 1 argument, got %d", name, len(args))
		}
		return &aggExpr{name: name, arg: args[0], off: t.off}, nil
	}
	if len(args) < f.min || len(args) > f.max {
		want := fmt.Sprint(f.min)
		if f.max > f.min {
			want += " or " + fmt.Sprint(f.max)
		}
		return nil, syntaxMsg(t.off, "%s takes %s argument(s), got %d", name, want, len(args))
	}
	return &callExpr{name: name, args: args, fn: f.fn}, nil
}

// objectLit parses {key: expr, ...}; a key is a string or an identifier.
func (p *parser) objectLit() (expr, error) {
	p.next()
	o := &objectExpr{}
	for !p.peek().isP("}") {
		if len(o.keys) > 0 {
			if err := p.expectP(","); err != nil {
				return nil, err
			}
		}
		k := p.next()
		if k.kind != tString && k.kind != tIdent {
			return nil, syntaxErr(k.off, "an object member name", k)
		}
		if err := p.expectP(":"); err != nil {
			return nil, err
		}
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		o.keys, o.vals = append(o.keys, k.text), append(o.vals, v)
	}
	p.next()
	return o, nil
}
