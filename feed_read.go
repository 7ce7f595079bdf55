package ttlstore

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"time"
)

// Reading the change feed (the API is in feed.go): positions and tokens,
// and the page a read copies out of the ring and turns into Changes.

// feedPos is a position in the feed: after the first n changes of LSN lsn
// (and every change of a smaller LSN).
type feedPos struct {
	lsn uint64
	n   uint32
}

// endLocked is the position after the last visible change.
func (f *feed) endLocked() feedPos {
	pos := feedPos{lsn: f.visible}
	if f.visible == f.gone {
		pos.n = f.goneN
	}
	for p := f.next; p > f.first; p-- {
		if f.at(p-1).lsn <= f.visible {
			return f.posAfterLocked(p - 1)
		}
	}
	return pos
}

// posAfterLocked is the position after the record at p.
func (f *feed) posAfterLocked(p uint64) feedPos {
	lsn := f.at(p).lsn
	n := uint32(1)
	for q := p; q > f.first && f.at(q-1).lsn == lsn; q-- {
		n++
	}
	if q := p + 1 - uint64(n); q == f.first && lsn == f.gone {
		n += f.goneN
	}
	return feedPos{lsn: lsn, n: n}
}

// feedScratch holds a reader's buffers, for a loop that reads page after
// page and keeps none.
type feedScratch struct {
	recs    []feedRec
	after   []feedPos
	changes []Change
}

// findLocked returns the place in the ring of the first record after pos.
// f.mu must be held.
func (f *feed) findLocked(pos feedPos) uint64 {
	// The first record of a later LSN: the records are in LSN order.
	lo, hi := f.first, f.next
	for lo < hi {
		mid := lo + (hi-lo)/2
		if f.at(mid).lsn <= pos.lsn {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	// Back to the first record of pos.lsn, then past the n before pos.
	start := lo
	for start > f.first && f.at(start-1).lsn == pos.lsn {
		start--
	}
	skip := uint64(pos.n)
	if start == f.first && pos.lsn == f.gone {
		skip -= min(skip, uint64(f.goneN)) // those dropped
	}
	return min(start+skip, lo)
}

// read returns the changes of req's next page from pos, and the position
// after what it looked at; with sc, in sc's buffers. A page is empty only
// when nothing after pos is for req: a look at records that all turn out
// to be skipped (other modes' records, versions since replaced or removed)
// looks on.
func (f *feed) read(req FeedRequest, pos feedPos, c *Collection, sc *feedScratch) ([]Change, feedPos, error) {
	for {
		changes, next, more, err := f.readOnce(req, pos, c, sc)
		if err != nil || len(changes) > 0 || !more {
			return changes, next, err
		}
		pos = next
	}
}

// readOnce is one look of read: more reports whether records after the
// position it returns are committed, not looked at yet.
func (f *feed) readOnce(req FeedRequest, pos feedPos, c *Collection, sc *feedScratch) ([]Change, feedPos, bool, error) {
	const op = "read feed"
	max := req.MaxChanges
	if max == 0 {
		max = defaultMaxChanges
	}
	f.mu.Lock()
	if pos.lsn < f.gone || (pos.lsn == f.gone && pos.n < f.goneN) {
		f.mu.Unlock()
		return nil, pos, false, newErrorDetail(op, "", ErrTokenGone, "changes after LSN "+strconv.FormatUint(pos.lsn, 10)+" were dropped: the feed keeps those after LSN "+strconv.FormatUint(f.gone, 10))
	}
	if pos.lsn > f.lastLSNLocked() {
		f.mu.Unlock()
		return nil, pos, false, newErrorDetail(op, "", ErrInvalidToken, "LSN "+strconv.FormatUint(pos.lsn, 10)+" is ahead of the feed's last, "+strconv.FormatUint(f.lastLSNLocked(), 10)+": the token is from changes a crash lost")
	}
	p := f.findLocked(pos)
	// Copy what the page looks at, to convert without the lock: the
	// records asked for up to max, and those skipped, up to a bound.
	var recs []feedRec
	var after []feedPos
	if sc != nil {
		clear(sc.recs) // what they point to may go
		recs, after = sc.recs[:0], sc.after[:0]
	}
	cur := pos
	scanned := 0
	for ; p < f.next && len(recs) < max && scanned < 64*max; p++ {
		r := f.at(p)
		if r.lsn > f.visible {
			break
		}
		scanned++
		if r.lsn == cur.lsn {
			cur.n++
		} else {
			cur = feedPos{lsn: r.lsn, n: 1}
		}
		if wanted(req, r) {
			recs = append(recs, *r)
			after = append(after, cur)
		}
	}
	err := f.err
	more := p < f.next && f.at(p).lsn <= f.visible
	if more {
		err = nil // more to read before the failure
	}
	f.mu.Unlock()

	if req.Mode == LatestVersion {
		recs, after = latest(recs, after, c)
	}
	var changes []Change
	if sc != nil {
		clear(sc.changes)
		changes = sc.changes[:0]
	} else {
		changes = make([]Change, 0, len(recs))
	}
	for i := range recs {
		changes = append(changes, recs[i].change(req, after[i], f.id, c))
	}
	if sc != nil {
		sc.recs, sc.after, sc.changes = recs, after, changes
	}
	if len(changes) == 0 && err != nil {
		if errors.Is(err, ErrClosed) {
			err = newError(op, "", ErrClosed)
		}
		return changes, cur, false, err
	}
	return changes, cur, more, nil
}

// splitKey returns the id and the partition key encoding of a document's
// key.
func (c *Collection) splitKey(key string) (id, pk string) {
	if c.pk == nil {
		return key, ""
	}
	n := pkEncLen(key)
	return key[n:], key[:n]
}

// lastLSNLocked is the largest LSN a valid token can name.
func (f *feed) lastLSNLocked() uint64 { return max(f.visible, f.gone, f.seq) }

// wanted reports whether a read of req returns r (before LatestVersion
// keeps the latest of each document).
func wanted(req FeedRequest, r *feedRec) bool {
	switch r.op {
	case OpEvicted:
		// LatestVersion looks at evictions, as at deletes, only to
		// drop what they removed.
		return req.Evictions || req.Mode == LatestVersion
	case OpLoaded:
		return req.Loads
	case OpDelete:
		// LatestVersion looks at deletes only to drop what they removed.
		return true
	}
	return true
}

// latest keeps, of recs, the records that store the version of their
// document that is live now: the last of each document in recs, and of
// those the ones no later write replaced (its record comes later in the
// feed, where a read shows it) and no delete, expiry or eviction removed,
// whether or not the sweeper has. after follows. The check is against the
// collection's table, read without a lock after the feed's was released: a
// write that commits meanwhile is later in the feed than every record here.
func latest(recs []feedRec, after []feedPos, c *Collection) ([]feedRec, []feedPos) {
	if len(recs) == 0 {
		return recs, after
	}
	last := make(map[string]int, len(recs))
	for i := range recs {
		last[recs[i].key] = i
	}
	out, outAfter := recs[:0], after[:0]
	for i := range recs {
		r := recs[i]
		if last[r.key] != i || r.e == nil {
			continue
		}
		if d, live := c.readLive(r.key, false); !live || d.e.etag != r.e.etag {
			continue
		}
		out = append(out, r)
		outAfter = append(outAfter, after[i])
	}
	return out, outAfter
}

// change makes the Change of r for req, after which the feed is at pos.
func (r *feedRec) change(req FeedRequest, pos feedPos, id uint64, c *Collection) Change {
	ch := Change{Op: r.op, LSN: r.lsn, Time: time.Unix(r.at, 0).UTC(), TimeToLiveExpired: r.ttl,
		pos: pos, feed: id, mode: req.Mode, valid: true}
	var pk string
	ch.ID, pk = c.splitKey(r.key)
	if pk != "" && pk != "/u" {
		ch.PartitionKey = PartitionKey{enc: pk}
	}
	if r.e != nil {
		ch.Document = Document{e: r.e, exp: r.exp}
	}
	if r.op != OpCreate && r.op != OpLoaded {
		t := etagDigits(r.prevEtag)
		ch.PreviousETag = string(t[:])
		if req.Previous && r.old != nil {
			ch.Previous = Document{e: r.old, exp: r.oldExp}
		}
	}
	return ch
}

// Tokens: "f" and the URL-safe base64 (no padding) of a version byte (1),
// the feed's id (8 bytes, little-endian), the mode, and the position's LSN
// and n as uvarints.
const tokenVersion = 1

func encodeToken(id uint64, mode FeedMode, pos feedPos) string {
	var b [1 + 8 + 1 + 2*binary.MaxVarintLen64]byte
	raw := append(b[:0], tokenVersion)
	raw = le.AppendUint64(raw, id)
	raw = append(raw, byte(mode))
	raw = binary.AppendUvarint(raw, pos.lsn)
	raw = binary.AppendUvarint(raw, uint64(pos.n))
	return "f" + base64.RawURLEncoding.EncodeToString(raw)
}

func decodeToken(s string) (id uint64, mode FeedMode, pos feedPos, ok bool) {
	if len(s) < 2 || len(s) > 64 || s[0] != 'f' {
		return 0, 0, feedPos{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[1:])
	if err != nil || len(raw) < 1+8+1+2 || raw[0] != tokenVersion || raw[9] > byte(AllVersionsAndDeletes) {
		return 0, 0, feedPos{}, false
	}
	id, mode = le.Uint64(raw[1:]), FeedMode(raw[9])
	rest := raw[10:]
	lsn, k := binary.Uvarint(rest)
	if k <= 0 {
		return 0, 0, feedPos{}, false
	}
	n, k2 := binary.Uvarint(rest[k:])
	if k2 <= 0 || k+k2 != len(rest) || n > 1<<31 {
		return 0, 0, feedPos{}, false
	}
	return id, mode, feedPos{lsn: lsn, n: uint32(n)}, true
}
