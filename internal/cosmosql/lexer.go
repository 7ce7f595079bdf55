package cosmosql

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// tokKind is the lexical class of a token.
type tokKind int

const (
	tEOF    tokKind = iota
	tIdent          // identifier or keyword; keywords are matched case-insensitively by the parser
	tNumber         // numeric literal; num holds its value, text its spelling
	tString         // quoted string literal; text holds the decoded value
	tParam          // @name; text holds the name including '@'
	tPunct          // operator or punctuation; text holds it
)

// token is one lexeme of the query text.
type token struct {
	kind tokKind
	text string
	num  float64
	off  int // byte offset of the token's first character
}

// describe renders the token for an error message.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of query"
	case tString:
		return "string " + strconv.Quote(t.text)
	default:
		return strconv.Quote(t.text)
	}
}

// is reports whether t is the keyword kw (upper case), case-insensitively.
func (t token) is(kw string) bool {
	return t.kind == tIdent && strings.EqualFold(t.text, kw)
}

// isP reports whether t is the punctuation p.
func (t token) isP(p string) bool { return t.kind == tPunct && t.text == p }

// puncts lists operators, longest first so that the lexer is greedy.
var puncts = []string{">>>", "<>", "!=", "<=", ">=", "||", "??", "<<", ">>",
	"*", ",", ".", "(", ")", "[", "]", "{", "}", ":", "=", "<", ">",
	"+", "-", "/", "%", "?", "&", "|", "^", "~"}

// lex splits text into tokens, ending with one tEOF token.
func lex(text string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if i >= len(text) {
			return append(toks, token{kind: tEOF, off: i}), nil
		}
		tok, next, err := lexOne(text, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, tok)
		i = next
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// lexOne reads the token starting at text[i] and returns it and the offset after it.
func lexOne(text string, i int) (token, int, error) {
	c := text[i]
	switch {
	case c == '\'' || c == '"':
		return lexString(text, i)
	case c >= '0' && c <= '9':
		return lexNumber(text, i)
	case c == '@':
		j := identEnd(text, i+1)
		if j == i+1 {
			return token{}, 0, syntaxMsg(i, "expected a parameter name after '@'")
		}
		return token{kind: tParam, text: text[i:j], off: i}, j, nil
	}
	if j := identEnd(text, i); j > i {
		return token{kind: tIdent, text: text[i:j], off: i}, j, nil
	}
	for _, p := range puncts {
		if strings.HasPrefix(text[i:], p) {
			return token{kind: tPunct, text: p, off: i}, i + len(p), nil
		}
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return token{}, 0, syntaxMsg(i, "unexpected character %q", r)
}

// identEnd returns the end of the identifier starting at text[i] (i when there is none).
func identEnd(text string, i int) int {
	j := i
	for j < len(text) {
		r, n := utf8.DecodeRuneInString(text[j:])
		ok := r == '_' || unicode.IsLetter(r) || (j > i && unicode.IsDigit(r))
		if !ok || r == utf8.RuneError {
			break
		}
		j += n
	}
	return j
}

// lexNumber reads digits [. digits] [e [+-] digits].
func lexNumber(text string, i int) (token, int, error) {
	j := i
	digits := func() {
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
		}
	}
	digits()
	if j+1 < len(text) && text[j] == '.' && text[j+1] >= '0' && text[j+1] <= '9' {
		j++
		digits()
	}
	if j < len(text) && (text[j] == 'e' || text[j] == 'E') {
		k := j + 1
		if k < len(text) && (text[k] == '+' || text[k] == '-') {
			k++
		}
		if k < len(text) && text[k] >= '0' && text[k] <= '9' {
			j = k
			digits()
		}
	}
	f, err := strconv.ParseFloat(text[i:j], 64)
	if err != nil {
		return token{}, 0, syntaxMsg(i, "number %s out of range", text[i:j])
	}
	return token{kind: tNumber, text: text[i:j], num: f, off: i}, j, nil
}

// lexString reads a string quoted with text[i], decoding JSON-style escapes
// (\" \' \\ \/ \b \f \n \r \t \uXXXX, surrogate pairs combined).
func lexString(text string, i int) (token, int, error) {
	q := text[i]
	var b strings.Builder
	j := i + 1
	for j < len(text) {
		c := text[j]
		switch {
		case c == q:
			return token{kind: tString, text: b.String(), off: i}, j + 1, nil
		case c == '\\':
			n, err := lexEscape(text, j, &b)
			if err != nil {
				return token{}, 0, err
			}
			j = n
		default:
			b.WriteByte(c)
			j++
		}
	}
	return token{}, 0, syntaxMsg(i, "unterminated string")
}

var simpleEscapes = map[byte]byte{'"': '"', '\'': '\'', '\\': '\\', '/': '/',
	'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// lexEscape decodes the escape at text[j] (a backslash) into b and returns the offset after it.
func lexEscape(text string, j int, b *strings.Builder) (int, error) {
	if j+1 >= len(text) {
		return 0, syntaxMsg(j, "unterminated escape")
	}
	if e, ok := simpleEscapes[text[j+1]]; ok {
		b.WriteByte(e)
		return j + 2, nil
	}
	if text[j+1] != 'u' {
		return 0, syntaxMsg(j, "invalid escape \\%c", text[j+1])
	}
	r, ok := hex4(text, j+2)
	if !ok {
		return 0, syntaxMsg(j, "invalid \\u escape")
	}
	next := j + 6
	if utf16.IsSurrogate(r) && next+1 < len(text) && text[next] == '\\' && text[next+1] == 'u' {
		if r2, ok := hex4(text, next+2); ok {
			if c := utf16.DecodeRune(r, r2); c != unicode.ReplacementChar {
				r, next = c, next+6
			}
		}
	}
	b.WriteRune(r)
	return next, nil
}

// hex4 decodes four hex digits at text[i].
func hex4(text string, i int) (rune, bool) {
	if i+4 > len(text) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(text[i : i+4]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
