package patch

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Paths are JSON Pointers (RFC 6901) as Cosmos DB takes them: a '/' before
// each segment, "~1" for a '/' inside a member name and "~0" for a '~'.
// The root pointer "" names the whole document, which no operation may
// replace, so every path begins with '/'. "/" names the member whose name
// is empty.

// checkPath reports what is wrong with path as an operation's path, or ""
// when nothing is.
func checkPath(path string) string {
	if path == "" {
		return "empty path: a path begins with '/'"
	}
	if path[0] != '/' {
		return "path does not begin with '/'"
	}
	ascii := true
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '~' && (i+1 == len(path) || path[i+1] != '0' && path[i+1] != '1'):
			return "'~' not followed by '0' or '1' at byte " + strconv.Itoa(i)
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if !ascii && !utf8.ValidString(path) {
		return "path is not valid UTF-8"
	}
	return ""
}

// nextSegment splits the checked path p, which begins with '/', into its
// first segment, still escaped, and the rest ("" when seg was the last).
func nextSegment(p string) (seg, rest string) {
	p = p[1:]
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// unescape decodes "~1" and "~0" in the checked segment seg.
func unescape(seg string) string {
	if strings.IndexByte(seg, '~') < 0 {
		return seg
	}
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
}

// isPrefix reports whether the checked path a names the same place as the
// checked path b or a place that contains it: a's segments, decoded, are
// the first segments of b's.
func isPrefix(a, b string) bool {
	for a != "" {
		if b == "" {
			return false
		}
		var sa, sb string
		sa, a = nextSegment(a)
		sb, b = nextSegment(b)
		if sa != sb && unescape(sa) != unescape(sb) {
			return false
		}
	}
	return true
}

// overlaps reports whether one of the checked paths a and b contains the
// other (or they are the same), so that changing one changes the other.
func overlaps(a, b string) bool { return isPrefix(a, b) || isPrefix(b, a) }

// arrayIndex parses seg as an array index: "0", or a decimal number
// without a leading zero or a sign. It reports false for anything else,
// "-" included, and for numbers too large to be an index.
func arrayIndex(seg string) (int, bool) {
	if seg == "" || len(seg) > 18 || seg[0] == '0' && len(seg) > 1 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// appendKey appends name to dst as a JSON string: '"' and '\\' escaped,
// control characters as \u escapes, everything else, valid UTF-8, as is.
func appendKey(dst []byte, name string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
