package cosmosql

// likeExpr is x [NOT] LIKE pattern [ESCAPE 'c']. In the pattern % matches
// any run of characters, _ any one character, [abc], [a-f] one character
// of the set and [^...] one character outside it; the escape character
// makes the next one literal. Matching is case-sensitive, by code point.
type likeExpr struct {
	x, pat expr
	esc    rune // -1 when there is no ESCAPE
	neg    bool
	fixed  []likeElem // the compiled pattern when it is a string literal
}

func (e *likeExpr) children() []expr { return []expr{e.x, e.pat} }

// eval is undefined unless both sides are strings.
func (e *likeExpr) eval(doc any) any {
	s, ok := e.x.eval(doc).(string)
	if !ok {
		return undefined
	}
	elems := e.fixed
	if elems == nil {
		p, ok := e.pat.eval(doc).(string)
		if !ok {
			return undefined
		}
		elems = compileLike(p, e.esc)
	}
	return likeMatch([]rune(s), elems) != e.neg
}

type likeKind int

const (
	likeLit  likeKind = iota // one given character
	likeOne                  // _
	likeMany                 // %
	likeSet                  // [...] or [^...]
)

type likeElem struct {
	kind   likeKind
	r      rune
	ranges [][2]rune // likeSet: inclusive ranges
	negate bool      // likeSet: [^...]
}

// compileLike turns a pattern into elements; the result is never nil.
func compileLike(p string, esc rune) []likeElem {
	rs := []rune(p)
	elems := []likeElem{}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc && i+1 < len(rs):
			i++
			elems = append(elems, likeElem{kind: likeLit, r: rs[i]})
		case r == '%':
			elems = append(elems, likeElem{kind: likeMany})
		case r == '_':
			elems = append(elems, likeElem{kind: likeOne})
		case r == '[':
			el, next, ok := compileSet(rs, i+1)
			if !ok {
				elems = append(elems, likeElem{kind: likeLit, r: r})
				continue
			}
			elems, i = append(elems, el), next
		default:
			elems = append(elems, likeElem{kind: likeLit, r: r})
		}
	}
	return elems
}

// compileSet reads a set after '[' at rs[i]; it returns the index of the closing ']'.
func compileSet(rs []rune, i int) (likeElem, int, bool) {
	el := likeElem{kind: likeSet}
	if i < len(rs) && rs[i] == '^' {
		el.negate = true
		i++
	}
	for ; i < len(rs); i++ {
		if rs[i] == ']' {
			return el, i, true
		}
		lo, hi := rs[i], rs[i]
		if i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] != ']' {
			hi = rs[i+2]
			i += 2
		}
		el.ranges = append(el.ranges, [2]rune{lo, hi})
	}
	return likeElem{}, 0, false
}

// matches reports whether one character fits a non-% element.
func (el likeElem) matches(r rune) bool {
	switch el.kind {
	case likeLit:
		return r == el.r
	case likeSet:
		in := false
		for _, rg := range el.ranges {
			in = in || (r >= rg[0] && r <= rg[1])
		}
		return in != el.negate
	}
	return true
}

// likeMatch is wildcard matching that backtracks only to the last %: O(len(s)·len(elems)).
func likeMatch(s []rune, elems []likeElem) bool {
	si, pi := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(elems) && elems[pi].kind == likeMany:
			star, mark = pi, si
			pi++
		case pi < len(elems) && elems[pi].matches(s[si]):
			si++
			pi++
		case star >= 0:
			mark++
			si, pi = mark, star+1
		default:
			return false
		}
	}
	for pi < len(elems) && elems[pi].kind == likeMany {
		pi++
	}
	return pi == len(elems)
}

// like parses the pattern and optional ESCAPE after LIKE.
func (p *parser) like(x expr, neg bool) (expr, error) {
	pat, err := p.addExpr()
	if err != nil {
		return nil, err
	}
	e := &likeExpr{x: x, pat: pat, esc: -1, neg: neg}
	if p.peek().is("ESCAPE") {
		p.next()
		t := p.next()
		if t.kind != tString || len([]rune(t.text)) != 1 {
			return nil, syntaxErr(t.off, "a one-character string after ESCAPE", t)
		}
		e.esc = []rune(t.text)[0]
	}
	if l, ok := pat.(*litExpr); ok {
		if s, ok := l.v.(string); ok {
			e.fixed = compileLike(s, e.esc)
		}
	}
	return e, nil
}
