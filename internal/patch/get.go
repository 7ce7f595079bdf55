package patch

import "errors"

// CheckPath returns what is wrong with path as a JSON Pointer to a place
// in a document (see Apply), or "" when nothing is.
func CheckPath(path string) string { return checkPath(path) }

// Get returns the JSON value at path in doc, a JSON object, as its bytes
// in doc (not a copy), and true; or nil and false when there is none.
// Only objects are walked into: a path through an array or a scalar, or
// through a member that is absent, finds nothing. Where an object has
// several members of one name, the last counts, as for Apply. path must
// be a valid path (CheckPath). doc must be valid JSON, as for Apply; the
// error is ErrInvalidDocument for what is not JSON where Get walked.
func Get(doc []byte, path string) ([]byte, bool, error) {
	p, f := rootOf(doc)
	if f != nil {
		return nil, false, errors.New(f.detail)
	}
	rest := path
	for rest != "" {
		var seg string
		seg, rest = nextSegment(rest)
		if !p.object {
			return nil, false, nil
		}
		s, f := lookupMember(doc, p, unescape(seg))
		if f != nil {
			return nil, false, errors.New(f.detail)
		}
		if s.found.val < 0 {
			return nil, false, nil
		}
		if rest == "" {
			return doc[s.found.val:s.found.end], true, nil
		}
		q, ok := placeOf(doc, s.found)
		if !ok {
			return nil, false, nil
		}
		p = q
	}
	return nil, false, nil
}
