package cosmosql

import (
	"math"
	"strings"
)

func (e *litExpr) eval(any) any      { return e.v }
func (e *rootExpr) eval(doc any) any { return doc }
func (e *aggExpr) eval(any) any      { return undefined } // never evaluated per document

func (e *memberExpr) eval(doc any) any {
	if m, ok := e.x.eval(doc).(map[string]any); ok {
		if v, ok := m[e.name]; ok {
			return v
		}
	}
	return undefined
}

func (e *indexExpr) eval(doc any) any {
	x, idx := e.x.eval(doc), e.idx.eval(doc)
	switch c := x.(type) {
	case map[string]any:
		if k, ok := idx.(string); ok {
			if v, ok := c[k]; ok {
				return v
			}
		}
	case []any:
		if f, ok := toNum(idx); ok && f >= 0 && f == math.Trunc(f) && f < float64(len(c)) {
			return c[int(f)]
		}
	}
	return undefined
}

func (e *unaryExpr) eval(doc any) any {
	f, ok := toNum(e.x.eval(doc))
	if !ok {
		return undefined
	}
	if e.op == "-" {
		return numValue(-f)
	}
	return numValue(f)
}

func (e *binaryExpr) eval(doc any) any {
	l, r := e.l.eval(doc), e.r.eval(doc)
	switch e.op {
	case "=", "!=", "<>", "<", "<=", ">", ">=":
		return compareOp(e.op, l, r)
	case "||":
		ls, ok1 := l.(string)
		rs, ok2 := r.(string)
		if !ok1 || !ok2 {
			return undefined
		}
		return ls + rs
	}
	return arith(e.op, l, r)
}

// compareOp applies a comparison operator. Undefined operands and operands
// of different types give undefined; of the operators only = takes two
// arrays or two objects (deep equality), the others give undefined, as the
// Cosmos documentation states for != < <= > >=.
func compareOp(op string, l, r any) any {
	rl, rr := rank(l), rank(r)
	if rl == rankUndefined || rr == rankUndefined || rl != rr {
		return undefined
	}
	if op == "=" {
		return deepEqual(l, r)
	}
	if rl == rankArray || rl == rankObject {
		return undefined
	}
	c := compareScalars(l, r)
	switch op {
	case "!=", "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// arith applies + - * / % to two numbers; anything else, and division by zero, is undefined.
func arith(op string, l, r any) any {
	a, ok1 := toNum(l)
	b, ok2 := toNum(r)
	if !ok1 || !ok2 {
		return undefined
	}
	switch op {
	case "+":
		return numValue(a + b)
	case "-":
		return numValue(a - b)
	case "*":
		return numValue(a * b)
	case "/":
		return numValue(a / b)
	}
	return numValue(math.Mod(a, b))
}

// and3 is Cosmos's three-valued AND: false wins, then undefined; non-booleans count as undefined.
func and3(l, r any) any {
	lb, lok := l.(bool)
	rb, rok := r.(bool)
	switch {
	case (lok && !lb) || (rok && !rb):
		return false
	case lok && rok:
		return true
	}
	return undefined
}

// or3 is Cosmos's three-valued OR: true wins, then undefined; non-booleans count as undefined.
func or3(l, r any) any {
	lb, lok := l.(bool)
	rb, rok := r.(bool)
	switch {
	case (lok && lb) || (rok && rb):
		return true
	case lok && rok:
		return false
	}
	return undefined
}

func not3(v any) any {
	if b, ok := v.(bool); ok {
		return !b
	}
	return undefined
}

func (e *andExpr) eval(doc any) any { return and3(e.l.eval(doc), e.r.eval(doc)) }
func (e *orExpr) eval(doc any) any  { return or3(e.l.eval(doc), e.r.eval(doc)) }
func (e *notExpr) eval(doc any) any { return not3(e.x.eval(doc)) }

// eval of IN: undefined when x is undefined, true when x equals (same type,
// deep equality) any element, false otherwise.
func (e *inExpr) eval(doc any) any {
	x := e.x.eval(doc)
	if isUndef(x) {
		return undefined
	}
	found := false
	for _, el := range e.list {
		if deepEqual(x, el.eval(doc)) {
			found = true
			break
		}
	}
	return found != e.neg
}

// eval of BETWEEN is x >= lo AND x <= hi in three-valued logic.
func (e *betweenExpr) eval(doc any) any {
	x := e.x.eval(doc)
	v := and3(compareOp(">=", x, e.lo.eval(doc)), compareOp("<=", x, e.hi.eval(doc)))
	if e.neg {
		return not3(v)
	}
	return v
}

func (e *callExpr) eval(doc any) any {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		args[i] = a.eval(doc)
	}
	return e.fn(args)
}

// eval of an array literal drops undefined elements.
func (e *arrayExpr) eval(doc any) any {
	out := make([]any, 0, len(e.elems))
	for _, el := range e.elems {
		if v := el.eval(doc); !isUndef(v) {
			out = append(out, v)
		}
	}
	return out
}

// eval of an object literal omits members whose value is undefined.
func (e *objectExpr) eval(doc any) any {
	out := make(map[string]any, len(e.keys))
	for i, k := range e.keys {
		if v := e.vals[i].eval(doc); !isUndef(v) {
			out[k] = v
		}
	}
	return out
}

// truthy reports whether a WHERE condition keeps a document: only exactly true does.
func truthy(v any) bool { b, ok := v.(bool); return ok && b }

// strFold lowers s when fold is set (the ignoreCase argument of STARTSWITH and friends).
func strFold(s string, fold bool) string {
	if fold {
		return strings.ToLower(s)
	}
	return s
}
