package ttlstore

import (
	"context"
	"iter"
	"runtime"
	"strconv"
	"time"
)

// The change feed: every create, replace and delete of a collection, in
// commit order, with the expiries marked, read in pages from a token (a
// position) that a reader saves to resume. This file has the API; how a
// read makes its page and what a token holds are in feed_read.go, what the
// feed keeps in feed_ring.go, and how a durable collection keeps it in its
// log in feed_durable.go.

// ChangeFeedOptions turns on a collection's change feed (Options.ChangeFeed)
// and says how much of it to keep. The zero value turns it off: the
// collection then keeps nothing and its writes pay nothing for the feed.
type ChangeFeedOptions struct {
	// RetainBytes bounds the memory the feed keeps: the changes, and the
	// versions of documents they hold (counted even while the collection
	// still stores them). The oldest changes are dropped past it, and a
	// token that named them gets ErrTokenGone. 0 means
	// DefaultFeedRetainBytes when RetainFor is set, and no feed when it is
	// not. The feed's memory is not counted in MaxBytes.
	RetainBytes int64

	// RetainFor drops changes older than this (by their commit time,
	// whole seconds), whatever their size. 0 means no bound in time.
	RetainFor time.Duration
}

// DefaultFeedRetainBytes is the feed's RetainBytes when only RetainFor is
// set.
const DefaultFeedRetainBytes = 64 << 20

func (o ChangeFeedOptions) on() bool { return o.RetainBytes != 0 || o.RetainFor != 0 }

// checkChangeFeed returns ErrInvalidOptions for a negative bound.
func checkChangeFeed(op string, o ChangeFeedOptions) error {
	switch {
	case o.RetainBytes < 0:
		return newErrorDetail(op, "", ErrInvalidOptions, "ChangeFeed.RetainBytes "+strconv.FormatInt(o.RetainBytes, 10)+" is negative")
	case o.RetainFor < 0:
		return newErrorDetail(op, "", ErrInvalidOptions, "ChangeFeed.RetainFor "+o.RetainFor.String()+" is negative")
	}
	return nil
}

// FeedMode is how a feed is read, as in Cosmos DB.
type FeedMode uint8

const (
	// LatestVersion, the zero value, returns creates and replaces: each
	// document once, at the place of its latest change, with the version
	// that is live when the page is read. A version a later write
	// replaced is not returned (the later one is, at its place, on this
	// page or a later one), nor one a delete, an expiry (swept or not) or
	// an eviction removed: from a token, a reader gets the documents
	// changed since and live now, as Azure Cosmos DB's latest-version
	// feed. Deletes and expiries do not appear.
	LatestVersion FeedMode = iota

	// AllVersionsAndDeletes returns every change in commit order: each
	// create and replace (Upsert, Replace, Patch, Touch and a batch's
	// writes), and each delete, with TimeToLiveExpired set when the
	// document had expired (removed by the sweeper, by a DefaultTTL
	// change, or by a write to its id after it expired).
	AllVersionsAndDeletes
)

// String returns the mode's name.
func (m FeedMode) String() string {
	switch m {
	case LatestVersion:
		return "LatestVersion"
	case AllVersionsAndDeletes:
		return "AllVersionsAndDeletes"
	}
	return "FeedMode(" + strconv.Itoa(int(m)) + ")"
}

// ChangeOp is what a change did.
type ChangeOp uint8

const (
	// OpCreate stored a document under an id that had no live document.
	OpCreate ChangeOp = iota + 1
	// OpReplace stored a new version of a live document.
	OpReplace
	// OpDelete removed a document: deleted (Delete, DeletePartition, a
	// batch's delete), or expired (TimeToLiveExpired).
	OpDelete
	// OpEvicted removed a live document to keep the collection within
	// its bound. Not a Cosmos DB operation: returned only when the
	// request asks for evictions.
	OpEvicted
	// OpLoaded stored a document that ReadOrLoad's load function
	// returned. Not a Cosmos DB operation: returned only when the request
	// asks for loads.
	OpLoaded
)

// String returns the operation's name: "create", "replace", "delete",
// "evicted" or "loaded".
func (o ChangeOp) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpReplace:
		return "replace"
	case OpDelete:
		return "delete"
	case OpEvicted:
		return "evicted"
	case OpLoaded:
		return "loaded"
	}
	return "ChangeOp(" + strconv.Itoa(int(o)) + ")"
}

// Change is one change of a collection, as its feed returns it.
type Change struct {
	Op ChangeOp
	// LSN is the change's sequence number: the changes of one commit (a
	// transactional batch, a sweep's batch, a DeletePartition) share one,
	// and a later commit has a larger one. Unlike Cosmos DB's, the order
	// is total, across partition keys.
	LSN uint64
	// Time is the commit's time, whole seconds, UTC (Cosmos DB's crts).
	Time time.Time
	// ID and PartitionKey name the document, for every operation.
	ID           string
	PartitionKey PartitionKey
	// TimeToLiveExpired is set on a delete that removed an expired
	// document.
	TimeToLiveExpired bool
	// Document is the version stored, for OpCreate, OpReplace and
	// OpLoaded; the zero Document otherwise.
	Document Document
	// PreviousETag is the _etag of the version the change replaced or
	// removed; "" for OpCreate and OpLoaded. A reader that kept each
	// document's last _etag can check from it that it missed no version.
	PreviousETag string
	// Previous is that version itself, when the request asks for it
	// (FeedRequest.Previous) and the feed still holds it; the zero
	// Document otherwise. (Cosmos DB does not return it.)
	Previous Document

	pos   feedPos // the position after this change
	feed  uint64
	mode  FeedMode
	valid bool
}

// Token returns the position just after ch, from which a later read
// resumes (FeedRequest.Token); "" for a Change the feed did not return.
func (ch Change) Token() string {
	if !ch.valid {
		return ""
	}
	return encodeToken(ch.feed, ch.mode, ch.pos)
}

// FeedStart is where a read without a token starts.
type FeedStart uint8

const (
	// FeedFromBeginning, the zero value, starts at the oldest change the
	// feed keeps. (Cosmos DB's all-versions mode cannot start there.)
	FeedFromBeginning FeedStart = iota
	// FeedFromNow starts after the last change committed: the first read
	// returns nothing but a token.
	FeedFromNow
	// FeedFromTime starts at the first change kept whose commit time is
	// FeedRequest.StartTime or later.
	FeedFromTime
)

// FeedRequest says what to read from a collection's feed.
type FeedRequest struct {
	// Mode is how to read (LatestVersion, the zero value, or
	// AllVersionsAndDeletes). A token remembers it: a token from a read
	// in another mode is refused.
	Mode FeedMode
	// Token resumes after the position a page or a Change returned. ""
	// starts at Start.
	Token string
	// Start, with StartTime for FeedFromTime, is where a read without a
	// token starts.
	Start     FeedStart
	StartTime time.Time
	// MaxChanges is the most changes a page holds; 0 means 1000.
	MaxChanges int
	// Evictions asks AllVersionsAndDeletes for OpEvicted changes, Loads
	// for OpLoaded ones (both modes); without them the feed skips those
	// changes, as Cosmos DB has no such operations.
	Evictions, Loads bool
	// Previous asks for Change.Previous.
	Previous bool
}

// FeedPage is a page of changes and the token to read the next page from.
type FeedPage struct {
	Changes []Change
	// Token is the position after the last change the read looked at
	// (which may be after the last one returned: a page skips the changes
	// its request does not ask for). Pass it as FeedRequest.Token.
	Token string
}

// defaultMaxChanges is a page's size when the request does not say.
const defaultMaxChanges = 1000

// ReadFeed returns the next page of the collection's change feed after
// req.Token (or from req.Start): at most req.MaxChanges changes, in commit
// order, and the token to resume from. It returns an empty page, with the
// same position, when there is nothing new; it never waits (see WaitFeed).
//
// Errors: ErrNoChangeFeed when the collection was made without
// Options.ChangeFeed; ErrInvalidToken for a token that is malformed, is
// from another collection, or from a read in another mode; ErrTokenGone
// for a token older than what the feed keeps (changes after it were
// dropped: read again from the beginning, or rebuild); ErrClosed after
// Close; and, in a durable collection whose log failed, the log's ErrIO
// once every change before the failure is read.
//
// ReadFeed may be called from any number of goroutines; each reader keeps
// its own token.
func (c *Collection) ReadFeed(req FeedRequest) (FeedPage, error) {
	f, pos, err := c.feedStart(req)
	if err != nil {
		return FeedPage{}, err
	}
	changes, next, err := f.read(req, pos, c, nil)
	return f.page(req, changes, next), err
}

// page is a FeedPage of changes, the feed then at next.
func (f *feed) page(req FeedRequest, changes []Change, next feedPos) FeedPage {
	return FeedPage{Changes: changes, Token: encodeToken(f.id, req.Mode, next)}
}

// WaitFeed is ReadFeed, except that it waits, when there is nothing new,
// until a change the request asks for is committed or ctx ends (returning
// ctx's error). A waiting reader costs nothing: no timer, no polling.
// Close ends the wait with ErrClosed.
func (c *Collection) WaitFeed(ctx context.Context, req FeedRequest) (FeedPage, error) {
	f, pos, err := c.feedStart(req)
	if err != nil {
		return FeedPage{}, err
	}
	changes, next, err := f.wait(ctx, req, pos, c, nil)
	return f.page(req, changes, next), err
}

// wait is WaitFeed from pos, reusing sc's buffers when sc is not nil. It
// returns the changes and the position after them.
func (f *feed) wait(ctx context.Context, req FeedRequest, pos feedPos, c *Collection, sc *feedScratch) ([]Change, feedPos, error) {
	for {
		seen := f.published.Load()
		changes, next, err := f.read(req, pos, c, sc)
		if err != nil || len(changes) > 0 {
			return changes, next, err
		}
		pos = next
		// Nothing new. A writer that commits within a few microseconds
		// (a busy collection) is caught by yielding a few times, which
		// saves both sides a park and a wake-up; then the reader parks,
		// at no cost until a writer wakes it.
		for i := 0; i < spinYields && f.published.Load() == seen; i++ {
			runtime.Gosched()
		}
		if f.published.Load() != seen {
			continue
		}
		f.waiting.Add(1)
		f.mu.Lock()
		ch, moved := f.changed, f.visible != seen || f.err != nil
		f.mu.Unlock()
		if !moved {
			select {
			case <-ch:
			case <-ctx.Done():
				f.waiting.Add(-1)
				return nil, pos, ctx.Err()
			}
		}
		f.waiting.Add(-1)
	}
}

// spinYields is how many times a reader that found nothing new yields the
// processor before it parks.
const spinYields = 50

// Feed returns the collection's changes from req, one at a time, waiting
// for new ones (WaitFeed) until ctx ends or the loop stops. The iteration
// ends after yielding an error: ctx's, or one ReadFeed would return. Each
// Change's Token resumes after it.
func (c *Collection) Feed(ctx context.Context, req FeedRequest) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		f, pos, err := c.feedStart(req)
		if err != nil {
			yield(Change{}, err)
			return
		}
		var sc feedScratch // the pages are this loop's own: reused
		for {
			changes, next, err := f.wait(ctx, req, pos, c, &sc)
			for _, ch := range changes {
				if !yield(ch, nil) {
					return
				}
			}
			if err != nil {
				yield(Change{}, err)
				return
			}
			pos = next
		}
	}
}

// feedStart checks req and returns the feed and the position to read from.
func (c *Collection) feedStart(req FeedRequest) (*feed, feedPos, error) {
	const op = "read feed"
	f := c.feed
	if f == nil {
		return nil, feedPos{}, newError(op, "", ErrNoChangeFeed)
	}
	if c.closed.Load() {
		return nil, feedPos{}, newError(op, "", ErrClosed)
	}
	if req.Mode > AllVersionsAndDeletes {
		return nil, feedPos{}, newErrorDetail(op, "", ErrInvalidOptions, "Mode "+req.Mode.String()+" is not a FeedMode")
	}
	if req.MaxChanges < 0 {
		return nil, feedPos{}, newErrorDetail(op, "", ErrInvalidOptions, "MaxChanges "+strconv.Itoa(req.MaxChanges)+" is negative")
	}
	if req.Token != "" {
		id, mode, pos, ok := decodeToken(req.Token)
		switch {
		case !ok:
			return nil, feedPos{}, newErrorDetail(op, "", ErrInvalidToken, "malformed: "+strconv.Quote(req.Token))
		case id != f.id:
			return nil, feedPos{}, newErrorDetail(op, "", ErrInvalidToken, "the token is another collection's")
		case mode != req.Mode:
			return nil, feedPos{}, newErrorDetail(op, "", ErrInvalidToken, "the token is from a read in "+mode.String()+", not "+req.Mode.String())
		}
		return f, pos, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch req.Start {
	case FeedFromBeginning:
		return f, feedPos{lsn: f.gone, n: f.goneN}, nil
	case FeedFromNow:
		return f, f.endLocked(), nil
	case FeedFromTime:
		t := req.StartTime.Unix()
		if req.StartTime.Nanosecond() != 0 {
			t++ // the changes of whole seconds from then on
		}
		pos := feedPos{lsn: f.gone, n: f.goneN}
		for p := f.first; p < f.next; p++ {
			r := f.at(p)
			if r.lsn > f.visible || r.at >= t {
				break
			}
			if r.lsn == pos.lsn {
				pos.n++
			} else {
				pos = feedPos{lsn: r.lsn, n: 1}
			}
		}
		return f, pos, nil
	}
	return nil, feedPos{}, newErrorDetail(op, "", ErrInvalidOptions, "Start "+strconv.Itoa(int(req.Start))+" is not a FeedStart")
}
