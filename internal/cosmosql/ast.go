package cosmosql

// expr is a node of a parsed expression. eval never fails: operands that do
// not fit an operator make its result undefined.
type expr interface {
	eval(doc any) any
	children() []expr
}

// litExpr is a literal, or a parameter substituted by its value.
type litExpr struct{ v any }

// rootExpr is the FROM alias: the document itself.
type rootExpr struct {
	name string
	off  int
}

// memberExpr is x.name or x["name"].
type memberExpr struct {
	x    expr
	name string
}

// indexExpr is x[idx] where idx is not a string literal.
type indexExpr struct{ x, idx expr }

// unaryExpr is -x or +x.
type unaryExpr struct {
	op string
	x  expr
}

// binaryExpr is an arithmetic (+ - * / %), concatenation (||) or
// comparison (= != <> < <= > >=) operator.
type binaryExpr struct {
	op   string
	l, r expr
}

type andExpr struct{ l, r expr }
type orExpr struct{ l, r expr }
type notExpr struct{ x expr }

// inExpr is x [NOT] IN (list...).
type inExpr struct {
	x    expr
	list []expr
	neg  bool
}

// betweenExpr is x [NOT] BETWEEN lo AND hi.
type betweenExpr struct {
	x, lo, hi expr
	neg       bool
}

// callExpr is a call of a supported system function.
type callExpr struct {
	name string
	args []expr
	fn   func(args []any) any
}

type arrayExpr struct{ elems []expr }

type objectExpr struct {
	keys []string
	vals []expr
}

// aggExpr is COUNT, SUM, MIN, MAX or AVG; allowed only as a whole SELECT item.
type aggExpr struct {
	name string
	arg  expr
	off  int
}

func (e *litExpr) children() []expr     { return nil }
func (e *rootExpr) children() []expr    { return nil }
func (e *memberExpr) children() []expr  { return []expr{e.x} }
func (e *indexExpr) children() []expr   { return []expr{e.x, e.idx} }
func (e *unaryExpr) children() []expr   { return []expr{e.x} }
func (e *binaryExpr) children() []expr  { return []expr{e.l, e.r} }
func (e *andExpr) children() []expr     { return []expr{e.l, e.r} }
func (e *orExpr) children() []expr      { return []expr{e.l, e.r} }
func (e *notExpr) children() []expr     { return []expr{e.x} }
func (e *inExpr) children() []expr      { return append([]expr{e.x}, e.list...) }
func (e *betweenExpr) children() []expr { return []expr{e.x, e.lo, e.hi} }
func (e *callExpr) children() []expr    { return e.args }
func (e *arrayExpr) children() []expr   { return e.elems }
func (e *objectExpr) children() []expr  { return e.vals }
func (e *aggExpr) children() []expr     { return []expr{e.arg} }

// walk calls f on e and every node below it, stopping at the first error.
func walk(e expr, f func(expr) error) error {
	if e == nil {
		return nil
	}
	if err := f(e); err != nil {
		return err
	}
	for _, c := range e.children() {
		if err := walk(c, f); err != nil {
			return err
		}
	}
	return nil
}

// pathName is the name a SELECT item without AS projects under: the last
// member of a property path (the alias itself for the bare alias), or "" for
// any other expression.
func pathName(e expr) string {
	switch x := e.(type) {
	case *memberExpr:
		if isPath(x.x) {
			return x.name
		}
	case *rootExpr:
		return x.name
	}
	return ""
}

// isPath reports whether e is the alias followed by members and indexes with literal operands.
func isPath(e expr) bool {
	switch x := e.(type) {
	case *rootExpr:
		return true
	case *memberExpr:
		return isPath(x.x)
	case *indexExpr:
		_, lit := x.idx.(*litExpr)
		return lit && isPath(x.x)
	}
	return false
}
