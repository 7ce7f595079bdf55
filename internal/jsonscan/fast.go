package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// The fast path.
//
// Every write runs Stamp or Strip, and nearly every document it is given is
// valid, so the work is split in two:
//
//   - fastScan (this file, with fast_nested.go, fast_tokens.go and swar.go)
//     validates the document and writes the stored form in one tight pass.
//     It never builds an error: at the first byte it does not like, for
//     whatever reason, it gives up and reports !ok.
//   - The reference scanner (scan and scanObject in jsonscan.go, and
//     scan.go) runs only when fastScan gave up. It starts again from the
//     beginning and is the one that decides which error to report, with its
//     offset and message, or, for a valid document that the fast path
//     declines (one nesting deeper than maxFastDepth), produces the output.
//
// Errors therefore cost a second pass, which does not matter, and the fast
// path may decline whatever it likes; it must only never accept what the
// reference scanner rejects, and must produce the same output and Fields
// for what it accepts. TestFastScanAgrees and FuzzFastScan check exactly
// that, byte for byte, errors included.
//
// What makes it fast, compared with the reference scanner:
//
//   - No calls on the common paths. Go passes arguments in registers but
//     keeps none of the caller's registers across a call, so a call in a
//     loop spills and reloads the loop's live variables. The loops call only
//     small functions that the compiler inlines (stopBytes, stringStop,
//     digitsEnd, lastBytes, skipSpace: see go build -gcflags=-m), and out of
//     line only for escapes and non-ASCII (stringTail), exponents, a
//     nested object or array (one call to skipNested for all of it), and
//     the rest of a string value longer than two words (stringRun, sixteen
//     bytes at a time, in assembly on amd64: a document whose bulk is a
//     170-byte value costs 28 % fewer instructions than with the word loop
//     here, and shorter strings the same).
//   - Whitespace costs one comparison (c <= ' ') where it may appear, so
//     compact input pays next to nothing for it; one space after a colon
//     is taken inline, longer runs by skipSpace.
//   - Few live variables: no error, no Fields copy (f is written in place),
//     and the state that is not needed for every token is kept in memory
//     (output), so the registers go to the loop.
//   - Word-at-a-time scanning (swar.go): strings eight bytes at a time, and
//     most keys and many values end in their first word; digits and runs of
//     spaces likewise; the last few bytes of the input in one word too.
//   - Bytes taken from the word already loaded rather than loaded again:
//     the key's class (the word, masked to the key, against the special
//     keys), the colon and the value's first byte after a short key, and the
//     comma and the next key's quote after a string value.
//   - Offsets compared as uint(i) < uint(n), which tells the compiler that
//     i >= 0 as well, so it drops its own bounds check on src[i].
//   - The kept top-level members are copied to dst as runs of src (see
//     output): for compact input whose stale stamp is at the end, as it is
//     in every stored document, that is one copy.
//
// What bounds the speed now is the chain, string after string, of loading
// a word at an offset that depends on where the previous string ended,
// classifying it and finding its first flagged byte: some 35 cycles for a
// member such as "name":"value". Scanning from offsets fixed in advance
// (the key's) to cut that chain, tried, won on such members and lost as
// much on the others.

// maxFastDepth bounds the nesting depth the fast path handles: skipNested
// keeps one bit per open container in a uint64, for the containers at
// depths 2 to 65 (the top-level object is depth 1). Deeper documents go to
// the reference scanner.
const maxFastDepth = 1 + 64

// fastScan is scanObject for valid input that nests at most maxFastDepth
// deep: it validates src, appends to dst the stored form up to StampAt and
// fills in *f, exactly as scanObject does on success. It reports !ok for
// every input scanObject rejects, and possibly for others; then *f is
// undefined, dst's spare capacity may have been written, and it returns
// dst with its length unchanged but its capacity grown as scanObject
// would grow it, for the caller to pass on to scan, so that dst is grown
// once at most.
func fastScan(dst, src []byte, maxDepth, extra int, f *Fields) (out []byte, ok bool) {
	n := len(src)
	i := 0
	if n > 0 && src[0] <= ' ' {
		i = skipSpace(src, 0)
	}
	if uint(i) >= uint(n) || src[i] != '{' || maxDepth < 1 {
		return dst, false
	}
	if need := n - i + extra; cap(dst)-len(dst) < need {
		dst = slices.Grow(dst, need)
	}
	o := output{dst: append(dst, '{'), maxDepth: maxDepth, runEnd: -2, dstLen: len(dst)}
	src = src[:n:n] // cap(src) is n too, one register fewer in the loop
	var c byte
	i++
	if uint(i) >= uint(n) {
		goto fail
	}
	if c = src[i]; c <= ' ' {
		if i = skipSpace(src, i); uint(i) >= uint(n) {
			goto fail
		}
		c = src[i]
	}
	if c == '}' {
		i++
	} else if c != '"' {
		goto fail
	} else {
		for {
			// A member; src[i] is the opening quote of its key.
			var (
				keyStart = i
				key      = keyOther
				valStart int
				esc      bool
				// after holds the bytes that follow a string value,
				// when the word in which the string ended held them;
				// else 0 (no valid input has a zero byte there).
				after uint64
			)
			if n-i > 8 {
				// The first word of the key. When the key ends in it,
				// the word gives the key's class, by comparison with the
				// special keys as little-endian words, and the bytes
				// after the key are at hand.
				x := binary.LittleEndian.Uint64(src[i+1:])
				if m := stopBytes(x); m == 0 {
					i = stringStop(src, i+9)
				} else if b := uint(bits.TrailingZeros64(m)) & 56; byte(x>>b) != '"' {
					i += 1 + int(b>>3)
				} else {
					switch b { // 8 times the key's length
					case 16:
						if uint16(x) == wordID {
							key = keyID
						}
					case 24:
						if k := uint32(x) & 0xffffff; k == wordTTL {
							key = keyTTL
						} else if k == wordTS {
							key = keyTS
						}
					case 40:
						if x&0xff_ffff_ffff == wordEtag {
							key = keyEtag
						}
					}
					i += 2 + int(b>>3)
					// Compact input has the colon, then the value.
					if x>>b>>8&0xff == ':' {
						if c = byte(x >> b >> 16); c > ' ' {
							i++
							goto value
						}
					}
					goto colon
				}
			} else {
				i = stringStop(src, i+1)
			}
			if uint(i) < uint(n) && src[i] == '"' {
				if i++; i-keyStart <= len(`"_etag"`) { // else too long to be special
					key = classifyKey(src[keyStart+1:i-1], false)
				}
			} else {
				// Not the end of a plain short key: an escape, non-ASCII
				// or the end of the input is near.
				if i, esc = stringTail(src, i); i < 0 {
					goto fail
				}
				key = classifyKey(src[keyStart+1:i-1], esc)
			}

		colon:
			// The colon, and the value's first byte in c.
			if uint(i) >= uint(n) {
				goto fail
			}
			if c = src[i]; c != ':' {
				if c > ' ' {
					goto fail
				}
				if i = skipSpace(src, i); uint(i) >= uint(n) || src[i] != ':' {
					goto fail
				}
			}
			i++
			if uint(i) >= uint(n) {
				goto fail
			}
			if c = src[i]; c <= ' ' {
				if c == ' ' && uint(i+1) < uint(n) && src[i+1] > ' ' {
					i++ // one space after the colon, as indented input has
					c = src[i]
				} else if i = skipSpace(src, i); uint(i) >= uint(n) {
					goto fail
				} else {
					c = src[i]
				}
			}

		value:
			// The value, which starts with c = src[i]: scanned here, but
			// for strings with escapes or non-ASCII (stringTail),
			// exponents (exponentEnd) and nested containers (skipNested),
			// whose code is in other functions.
			valStart = i
			esc = false
			switch {
			case c == '"':
				// As stringStop, but keeping the word the string ends in:
				// the first two words here, the rest in stringRun.
				if i++; n-i >= 8 {
					x := binary.LittleEndian.Uint64(src[i:])
					m := stopBytes(x)
					if m == 0 {
						if i += 8; n-i >= 8 {
							x = binary.LittleEndian.Uint64(src[i:])
							if m = stopBytes(x); m == 0 {
								i, x, m = stringRun(src, i+8)
							}
						}
					}
					if m != 0 {
						b := uint(bits.TrailingZeros64(m)) & 56
						i += int(b >> 3)
						if byte(x>>b) == '"' {
							i++
							after = x >> b >> 8
							goto member
						}
					}
				}
				if n-i < 8 && i < n && n >= 8 {
					// The last bytes of the input: the same in one
					// word, zero-filled; a zero byte stops the scan.
					x := lastBytes(src, i)
					b := uint(bits.TrailingZeros64(stopBytes(x))) & 56
					if byte(x>>b) == '"' {
						i += int(b>>3) + 1
						after = x >> b >> 8
						goto member
					}
				}
				if i, esc = stringTail(src, i); i < 0 {
					goto fail
				}
			case c-'0' < 10 || c == '-':
				// As in scanNumber, the byte after the number is left
				// to the caller: "01" is 0 followed by an error.
				if c == '-' {
					if i++; uint(i) >= uint(n) {
						goto fail
					}
					c = src[i]
				}
				if c == '0' {
					i++
				} else if c-'1' < 9 {
					i = digitsEnd(src, i+1)
				} else {
					goto fail
				}
				if uint(i) < uint(n) && src[i] == '.' {
					if i++; uint(i) >= uint(n) || src[i]-'0' >= 10 {
						goto fail
					}
					i = digitsEnd(src, i+1)
				}
				if uint(i) < uint(n) && src[i]|0x20 == 'e' {
					if i = exponentEnd(src, i); i < 0 {
						goto fail
					}
				}
			case c == '{' || c == '[':
				if i = skipNested(src, i, o.maxDepth); i < 0 {
					goto fail
				}
			case c == 't':
				if n-i < 4 || binary.LittleEndian.Uint32(src[i:]) != wordTrue {
					goto fail
				}
				i += 4
			case c == 'f':
				if n-i < 5 || binary.LittleEndian.Uint32(src[i+1:]) != wordAlse {
					goto fail
				}
				i += 5
			case c == 'n':
				if n-i < 4 || binary.LittleEndian.Uint32(src[i:]) != wordNull {
					goto fail
				}
				i += 4
			default:
				goto fail
			}

		member:
			// The member is src[keyStart:i].
			if key < keyTS { // not "_ts" or "_etag": keep it
				if keyStart != o.runEnd+1 { // not just a comma after the run
					o.flush(src, keyStart)
				}
				o.runEnd = i
				// The Fields, as in scanObject. A second id or ttl is
				// a duplicate, which the reference scanner reports.
				switch key {
				case keyID:
					if f.IDKind != KindNone {
						goto fail
					}
					f.IDKind, f.IDRaw = kindOf[src[valStart]], src[valStart:i:i]
					if f.IDKind == KindString {
						// Once the run is flushed, src[p] lands at
						// dst[p+off].
						off := len(o.dst) - o.runStart
						f.IDStart, f.IDEnd, f.IDEscaped = valStart+1+off, i-1+off, esc
					}
				case keyTTL:
					if f.TTLKind != KindNone {
						goto fail
					}
					f.TTLKind, f.TTLRaw = kindOf[src[valStart]], src[valStart:i:i]
				}
			}

			// A comma and the next key's opening quote, or the end. For
			// a string value in compact input they were in its last word.
			if after&0xffff == ','|'"'<<8 {
				i++
				continue
			}
			if uint(i) >= uint(n) {
				goto fail
			}
			if c = src[i]; c <= ' ' {
				if i = skipSpace(src, i); uint(i) >= uint(n) {
					goto fail
				}
				c = src[i]
			}
			if c != ',' {
				if c != '}' {
					goto fail
				}
				i++
				break
			}
			i++
			if uint(i) >= uint(n) {
				goto fail
			}
			if c = src[i]; c != '"' {
				if c > ' ' {
					goto fail
				}
				if i = skipSpace(src, i); uint(i) >= uint(n) || src[i] != '"' {
					goto fail
				}
			}
		}
	}

	// The top-level object closed at src[i-1].
	if i < n {
		if i = skipSpace(src, i); i < n {
			goto fail
		}
	}
	dst = o.dst
	if o.runEnd >= 0 {
		dst = append(dst, src[o.runStart:o.runEnd]...)
	}
	f.StampAt = len(dst)
	return dst, true

fail:
	// dst as it came, but for its capacity.
	return o.dst[:o.dstLen], false
}

// The special keys as little-endian words.
const (
	wordID   = 'i' | 'd'<<8
	wordTTL  = 't' | 't'<<8 | 'l'<<16
	wordTS   = '_' | 't'<<8 | 's'<<16
	wordEtag = '_' | 'e'<<8 | 't'<<16 | 'a'<<24 | 'g'<<32
)

// classifyKey returns the class of a top-level key whose raw content
// (between the quotes) is k; esc reports a backslash escape in k.
func classifyKey(k []byte, esc bool) int {
	switch {
	case esc:
		return classifyEscapedKey(k)
	case string(k) == "id":
		return keyID
	case string(k) == "ttl":
		return keyTTL
	case string(k) == "_ts":
		return keyTS
	case string(k) == "_etag":
		return keyEtag
	}
	return keyOther
}

// output is the state of fastScan that is not needed for every token: what
// it writes, and the run of src still to be written. fastScan passes its
// address to flush, so the compiler keeps it in memory rather than in
// registers, which the loop needs for itself. (It does not hold f: escape
// analysis sees o's contents leak through append, and f would with them,
// to the heap.)
type output struct {
	dst      []byte
	dstLen   int // len(dst) when fastScan was called
	maxDepth int

	// runStart:runEnd is a run of src to copy to dst as is, made of the
	// kept members seen so far and the commas between them, as in
	// scanObject. runEnd is -2 until a member is kept, so that no member
	// continues the run (starts at runEnd+1) before.
	runStart, runEnd int
}

// flush appends the run of src to o.dst, if there is one, and a comma, and
// starts a new run at next, the member that does not continue the run. It
// runs for the first member kept and after a member removed or whitespace
// between members, so for compact input once or twice; it is kept out of
// line (go:noinline) so that its code does not crowd the loop.
//
//go:noinline
func (o *output) flush(src []byte, next int) {
	if o.runEnd >= 0 {
		o.dst = append(o.dst, src[o.runStart:o.runEnd]...)
		o.dst = append(o.dst, ',')
	}
	o.runStart = next
}
