package cosmosql

import (
	"fmt"
	"math"
	"strings"
)

// parser is a recursive-descent parser over the token list.
type parser struct {
	toks   []token
	pos    int
	depth  int
	params map[string]any // decoded parameter values by name
}

func (p *parser) peek() token { return p.toks[p.pos] }

// peekAt looks k tokens ahead; past the end it returns the final tEOF.
func (p *parser) peekAt(k int) token {
	if p.pos+k >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.pos+k]
}

// next consumes one token; at the end it keeps returning tEOF.
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) expectKw(kw string) error {
	if t := p.peek(); !t.is(kw) {
		return syntaxErr(t.off, kw, t)
	}
	p.next()
	return nil
}

func (p *parser) expectP(s string) error {
	if t := p.peek(); !t.isP(s) {
		return syntaxErr(t.off, "'"+s+"'", t)
	}
	p.next()
	return nil
}

// decodeParams checks and decodes the parameters by name.
func decodeParams(params []Param) (map[string]any, error) {
	m := make(map[string]any, len(params))
	for _, prm := range params {
		if !strings.HasPrefix(prm.Name, "@") || identEnd(prm.Name, 1) != len(prm.Name) || len(prm.Name) == 1 {
			return nil, fmt.Errorf("%w: name %q is not @ followed by an identifier", ErrParameter, prm.Name)
		}
		if _, dup := m[prm.Name]; dup {
			return nil, fmt.Errorf("%w: %s is given twice", ErrParameter, prm.Name)
		}
		if len(prm.Value) == 0 {
			m[prm.Name] = undefined // {"name":"@x"} without a value: Cosmos treats it as undefined
			continue
		}
		v, err := decodeJSON(prm.Value)
		if err != nil {
			return nil, fmt.Errorf("%w: value of %s is not valid JSON: %v", ErrParameter, prm.Name, err)
		}
		m[prm.Name] = v
	}
	return m, nil
}

func newParser(text string, params map[string]any) (*parser, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	return &parser{toks: toks, params: params}, nil
}

// count parses a TOP, OFFSET or LIMIT count: a non-negative integer literal or parameter.
func (p *parser) count(clause string) (int, error) {
	t := p.next()
	var v any
	switch t.kind {
	case tNumber:
		v = t.num
	case tParam:
		pv, ok := p.params[t.text]
		if !ok {
			return 0, fmt.Errorf("%w: %s is used at offset %d but not given", ErrParameter, t.text, t.off)
		}
		f, ok := toNum(pv)
		if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return 0, fmt.Errorf("%w: %s used as the %s count must be a non-negative integer", ErrParameter, t.text, clause)
		}
		return int(f), nil
	default:
		return 0, syntaxErr(t.off, "an integer after "+clause, t)
	}
	f := v.(float64)
	if f != math.Trunc(f) || f > math.MaxInt32 || strings.ContainsAny(t.text, ".eE") {
		return 0, syntaxErr(t.off, "an integer after "+clause, t)
	}
	return int(f), nil
}
