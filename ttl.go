package ttlstore

import (
	"math"
	"strconv"
	"time"

	"github.com/ttlstore/ttlstore/internal/jsonscan"
)

// Never is the ttl value, for a document or for DefaultTTL, that means the
// document never expires.
const Never int32 = -1

// MaxTTL is the largest time to live in seconds, 2147483647 (about 68 years),
// the same as Azure Cosmos DB's.
const MaxTTL int32 = math.MaxInt32

// TTL returns a pointer to n, for Options.DefaultTTL and SetDefaultTTL:
// TTL(3600) for an hour, TTL(Never) for "on, no default". A nil *int32 turns
// TTL off.
func TTL(n int32) *int32 { return &n }

// The pure rules. Nothing here reads a clock: time comes in as whole Unix
// seconds, so every rule can be tested with a table.
//
// Internally a DefaultTTL is an int32 where 0 means off (nil): 0 is never a
// valid ttl, so it is free to mean "absent". A document's own ttl uses the
// same convention: 0 means it has none.

// neverExpires is the expiry second of a document that never expires. It is
// larger than any second a clock can report, so "expired" comparisons need no
// special case.
const neverExpires int64 = math.MaxInt64

// validTTL reports whether n may be a document's ttl or a DefaultTTL:
// -1 or 1..MaxTTL (R6, R7).
func validTTL(n int64) bool { return n == int64(Never) || (n >= 1 && n <= int64(MaxTTL)) }

// effectiveTTL resolves the TTL matrix (R1). def is the DefaultTTL (0 = off),
// own is the document's ttl (0 = absent). It returns the seconds after _ts at
// which the document expires, or Never.
func effectiveTTL(def, own int32) int32 {
	switch {
	case def == 0: // TTL off: nothing expires, a document's own ttl is ignored
		return Never
	case own != 0: // -1 or m: the document's own ttl wins
		return own
	default: // -1 or n: inherit the default
		return def
	}
}

// expiryAt is the first whole Unix second at which a document written at ts
// with effective ttl is expired, or neverExpires (R2, R16). The sum saturates
// instead of overflowing.
func expiryAt(ts int64, ttl int32) int64 {
	if ttl < 0 {
		return neverExpires
	}
	if ts > neverExpires-int64(ttl) {
		return neverExpires
	}
	return ts + int64(ttl)
}

// isExpired reports whether a document whose expiry second is exp is expired
// at the whole second now: the boundary second itself is expired (R2).
func isExpired(exp, now int64) bool { return now >= exp }

// unixSeconds is the whole Unix second containing t, rounding down also
// before 1970, which is what time.Time.Unix does.
func unixSeconds(t time.Time) int64 { return t.Unix() }

// parseTTL checks a document's top-level ttl as the scanner found it (R6) and
// returns it with 0 for absent. Only a plain JSON integer literal is taken:
// 10.0 and 1e1 are rejected although their value is an integer, because typed
// decoders (an int32 field in Go, an int in the Cosmos SDKs) reject them too
// and the stored document must decode where it was written.
func parseTTL(kind jsonscan.Kind, raw []byte) (int32, string) {
	switch kind {
	case jsonscan.KindNone:
		return 0, ""
	case jsonscan.KindNumber:
		if n, ok := parseIntLiteral(raw); ok && validTTL(n) {
			return int32(n), ""
		}
		return 0, "ttl " + quoteRaw(raw) + " is not -1 or an integer from 1 to 2147483647"
	default:
		return 0, "ttl " + quoteRaw(raw) + " is a JSON " + kind.String() + ", not a number"
	}
}

// parseIntLiteral parses -?[0-9]+ of at most 11 digits; anything else, such
// as a fraction or an exponent, is not ok.
func parseIntLiteral(raw []byte) (int64, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	digits := raw
	if neg {
		digits = raw[1:]
	}
	if len(digits) == 0 || len(digits) > 11 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// quoteRaw shows a raw JSON value in an error message, cut to 64 bytes.
func quoteRaw(raw []byte) string {
	const max = 64
	if len(raw) > max {
		return string(raw[:max]) + "…"
	}
	return string(raw)
}

// checkDefaultTTL validates a DefaultTTL for the operation op (R7) and
// converts it to the internal form (0 = off).
func checkDefaultTTL(op string, p *int32) (int32, error) {
	if p == nil {
		return 0, nil
	}
	if !validTTL(int64(*p)) {
		return 0, newErrorDetail(op, "", ErrInvalidTTL,
			"DefaultTTL "+strconv.FormatInt(int64(*p), 10)+" is not nil, -1 or an integer from 1 to 2147483647")
	}
	return *p, nil
}
