package cosmoshttp

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttlstore/ttlstore"
)

// EmulatorKey is the master key of the Azure Cosmos DB emulator, well known
// and published by Microsoft: the key a Server checks when Options.Key is
// empty, so that code written against the emulator works unchanged.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Options configures a Server. The zero value is a working default: the
// emulator's key, containers in memory, the wall clock.
type Options struct {
	// Key is the account's master key, base64 as the Azure portal shows it.
	// Every request must be signed with it (see the package documentation).
	// Empty means EmulatorKey.
	Key string

	// Dir, when not empty, makes every container a durable collection in
	// Dir/<database>/<container> (see ttlstore.Open), with its properties
	// beside it, so that a Server started again over Dir serves what the
	// last one held. Empty keeps everything in memory.
	Dir string

	// Sync is the durable containers' sync policy (ttlstore.SyncPolicy);
	// ignored in memory.
	Sync ttlstore.SyncPolicy

	// Clock is every container's clock: a test passes a *clock.Mock to move
	// time, and items expire exactly as it says. nil means the wall clock.
	Clock ttlstore.Clock

	// MaxDocumentSize is the largest item accepted, in bytes of JSON; a
	// larger body is refused with 413 before it is read whole. Zero means
	// 2 MiB, Azure Cosmos DB's limit.
	MaxDocumentSize int

	// FeedRetainBytes is how much of each container's change feed is kept
	// (ttlstore.ChangeFeedOptions.RetainBytes). Zero means
	// ttlstore.DefaultFeedRetainBytes.
	FeedRetainBytes int64

	// SweepInterval is every container's ttlstore.Options.SweepInterval.
	// Zero means ttlstore.DefaultSweepInterval; ttlstore.ManualSweep starts
	// no sweeper (see Sweep).
	SweepInterval time.Duration
}

// Server is an http.Handler that speaks enough of Azure Cosmos DB's NoSQL
// REST API for the official SDKs, over ttlstore collections. It is safe for
// concurrent use; Close it to stop the containers' sweepers and release a
// Dir.
type Server struct {
	opts Options
	key  []byte

	maxDoc int
	macs   sync.Pool // of hash.Hash: HMAC-SHA256 under key, reset before use

	mu     sync.RWMutex // mu protects dbs, their colls, closed and lock
	dbs    map[string]*database
	closed bool
	lock   io.Closer // Dir/LOCK, held from New to Close; nil in memory
}

// ServeHTTP answers one request of the Cosmos DB REST API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r)
}

// New returns a Server configured by opts. With opts.Dir it locks the
// directory (the file LOCK in it, until Close) and opens every container
// it holds, and fails with the first error: an error matching
// ttlstore.ErrLocked when another Server, in this process or another,
// has the directory; the error of the first container whose files are
// corrupt, which is not skipped.
func New(opts Options) (*Server, error) {
	key := opts.Key
	if key == "" {
		key = EmulatorKey
	}
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(k) == 0 {
		return nil, fmt.Errorf("%w: Key is not base64", ttlstore.ErrInvalidOptions)
	}
	if opts.MaxDocumentSize < 0 {
		return nil, fmt.Errorf("%w: MaxDocumentSize %d is negative", ttlstore.ErrInvalidOptions, opts.MaxDocumentSize)
	}
	s := &Server{opts: opts, key: k, dbs: map[string]*database{}, maxDoc: opts.MaxDocumentSize}
	if s.maxDoc == 0 {
		s.maxDoc = 2 << 20
	}
	if opts.Dir != "" {
		if err := s.load(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close closes every container's collection (syncing durable ones),
// releases the directory's lock, and returns the first error. Requests after Close are answered 503. Close is
// idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var first error
	for _, db := range s.dbs {
		for _, ct := range db.colls {
			if err := ct.c.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	if s.lock != nil {
		// After the containers, so that no other Server opens the
		// directory while they are still being closed.
		if err := s.lock.Close(); err != nil && first == nil {
			first = fmt.Errorf("%w: unlock %s: %v", ttlstore.ErrIO, s.opts.Dir, err)
		}
	}
	return first
}

// Sweep runs one sweep of every container now, on the caller's goroutine,
// and returns how many expired items it removed (ttlstore.Collection.Sweep):
// the change feed's TTL deletes are written then. Reads never wait for a
// sweep; a test that reads the feed's deletes sets SweepInterval to
// ttlstore.ManualSweep and calls Sweep after moving the clock.
func (s *Server) Sweep() int {
	s.mu.RLock()
	var cs []*ttlstore.Collection
	for _, db := range s.dbs {
		for _, ct := range db.colls {
			cs = append(cs, ct.c)
		}
	}
	s.mu.RUnlock()
	n := 0
	for _, c := range cs {
		n += c.Sweep()
	}
	return n
}

// route is a request's place in the resource tree, from its escaped path:
// each segment unescaped, the resource type and link it is signed with.
type route struct {
	segs    []string // unescaped: "dbs", db, "colls", c, "docs", id
	resType string   // "dbs", "colls", "docs", "pkranges", or "" for the account
	link    string   // the resource link signed: the resource, or a feed's parent
}

func parseRoute(escaped string) (route, error) {
	escaped = strings.Trim(escaped, "/")
	var rt route
	if escaped == "" {
		return rt, nil
	}
	for _, seg := range strings.Split(escaped, "/") {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return rt, errorf(http.StatusBadRequest, "the path segment %q is not a valid escape", seg)
		}
		rt.segs = append(rt.segs, u)
	}
	n := len(rt.segs)
	if n%2 == 1 {
		rt.resType = rt.segs[n-1]
		rt.link = strings.Join(rt.segs[:n-1], "/")
	} else {
		rt.resType = rt.segs[n-2]
		rt.link = strings.Join(rt.segs, "/")
	}
	return rt, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rt, err := parseRoute(r.URL.EscapedPath())
	if err == nil {
		err = s.authorize(r, rt.resType, rt.link)
	}
	if err == nil {
		err = s.dispatch(w, r, rt)
	}
	if err != nil {
		writeError(w, err)
	}
}

// dispatch runs the handler of the request's resource and verb.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, rt route) error {
	segs := rt.segs
	switch {
	case len(segs) == 0:
		if r.Method == http.MethodGet {
			return s.account(w, r)
		}
	case segs[0] != "dbs":
	case len(segs) == 1:
		return s.databases(w, r)
	case len(segs) == 2:
		return s.databaseOne(w, r, segs[1])
	case segs[2] != "colls":
	case len(segs) == 3:
		return s.containers(w, r, segs[1])
	case len(segs) == 4:
		return s.containerOne(w, r, segs[1], segs[3])
	case len(segs) == 5 && segs[4] == "pkranges":
		return s.pkranges(w, r, segs[1], segs[3])
	case segs[4] != "docs":
	case len(segs) == 5:
		return s.items(w, r, segs[1], segs[3])
	case len(segs) == 6:
		return s.itemOne(w, r, segs[1], segs[3], segs[5])
	}
	return errorf(http.StatusNotFound, "%s %s: no such resource on this endpoint (it serves databases, containers, items and partition key ranges)", r.Method, r.URL.EscapedPath())
}

// lookup returns the container named by db and coll, or a 404 naming what
// is missing.
func (s *Server) lookup(db, coll string) (*container, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errorf(http.StatusServiceUnavailable, "%v", errServerClosed)
	}
	d, ok := s.dbs[db]
	if !ok {
		return nil, errorf(http.StatusNotFound, "database %q not found", db)
	}
	ct, ok := d.colls[coll]
	if !ok {
		return nil, errorf(http.StatusNotFound, "container %q not found in database %q", coll, db)
	}
	return ct, nil
}

// readBody reads a request's body, refusing one larger than limit with 413
// before reading it whole.
func readBody(r *http.Request, limit int) ([]byte, error) {
	if r.ContentLength > int64(limit) {
		return nil, errorf(http.StatusRequestEntityTooLarge, "the request body is %d bytes; the limit is %d", r.ContentLength, limit)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "reading the request body: %v", err)
	}
	if len(b) > limit {
		return nil, errorf(http.StatusRequestEntityTooLarge, "the request body is over the limit of %d bytes", limit)
	}
	return b, nil
}

// writeJSON answers status with body and the headers every answer carries.
// The constant headers are set as canonical keys with shared values, which
// costs no allocation (net/http does not change a value it sends).
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = hvJSON
	h["X-Ms-Request-Charge"] = hvCharge
	h["X-Ms-Activity-Id"] = []string{activityID()}
	// Every answer carries a session token, as Cosmos DB's do: the SDKs
	// keep it and send it back. One replica holds everything here, so any
	// token is as good as another.
	h["X-Ms-Session-Token"] = hvSession
	if body == nil {
		w.WriteHeader(status)
		return
	}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

var (
	hvJSON    = []string{"application/json"}
	hvCharge  = []string{"1"}
	hvSession = []string{"0:-1#1"}
)

var activityN atomic.Uint64

// activityID returns a fresh x-ms-activity-id, in the GUID form clients
// log.
func activityID() string {
	var b [36]byte
	copy(b[:], "00000000-0000-0000-0000-000000000000")
	n := activityN.Add(1)
	for i := 35; i > 23 && n > 0; i-- {
		b[i] = "0123456789abcdef"[n&15]
		n >>= 4
	}
	return string(b[:])
}
