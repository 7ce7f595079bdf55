// Package conformance drives the official Azure Cosmos DB Go SDK (azcosmos)
// against cosmoshttp's handler over loopback and checks that every answer
// is the one Azure Cosmos DB gives, and that every TTL rule of
// /work/shared/spec/ttl-semantics.md (cited as R1..R18 in test names) holds
// through the SDK.
//
// # Running
//
// The suite runs twice, against both pinned SDK versions: azcosmos v1.4.1
// (go.mod) and v1.5.0 (go15.mod with the build tag azcosmos15, which adds
// the change feed, feed ranges and ReadManyItems tests):
//
//	./run.sh                     # both
//	go test ./...                # v1.4.1
//	go test -modfile=go15.mod -tags azcosmos15 ./...
//
// # Files
//
// helpers_test.go (this file): env (a server on a mock clock, its
// httptest listener, SDK clients), raw signed requests, query and status
// helpers, and the invariant run when each test ends (a cross-partition
// SELECT *, point reads of what it returned and COUNT agree).
// databases_test.go, containers_test.go, items_test.go, ttl_test.go,
// patch_test.go, batch_test.go, query_test.go, errors_test.go, auth_test.go,
// durable_test.go, changefeed_test.go (v1.5 only), example_test.go.
//
// # Clock
//
// Time comes from a *clock.Mock shared by every container of a server; a
// test moves it (env.at, env.advance) and never sleeps. The mock starts half
// a second past a whole second, so that every expiry check also checks that
// _ts is whole seconds and that the boundary second is expired (R2). Unless
// a test asks for a sweeper, none runs: expiry must hold on every read by
// itself (R9); tests that matter to the sweeper run in both modes.
//
// SDK clients are built with retries off (a conformance test wants the
// first answer, and the SDK would retry a 5xx for seconds).
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/benbjohnson/clock"
	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/cosmoshttp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Keep-alive connections of clients whose test ended; each
		// env closes its server, which closes them, but the goroutines
		// take a moment to notice.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// start is where every env's mock clock starts: half a second past a whole
// second, so that a test also checks that _ts is whole seconds and that
// expiry compares whole seconds (R2).
var start = time.Unix(1_700_000_000, 500_000_000)

var ctx = context.Background()

// env is one server on a mock clock, served over loopback, with an SDK
// client for it.
type env struct {
	t      *testing.T
	mock   *clock.Mock
	opts   cosmoshttp.Options
	srv    *cosmoshttp.Server
	hs     *httptest.Server
	client *azcosmos.Client
	db     *azcosmos.DatabaseClient
}

// newEnv starts a server with opts (its Clock replaced by a fresh mock at
// start), and a client that uses the emulator key. The server, its
// listener and the client's connections are closed when the test ends.
func newEnv(t *testing.T, opts cosmoshttp.Options) *env {
	t.Helper()
	mock := clock.NewMock()
	mock.Set(start)
	opts.Clock = mock
	if opts.SweepInterval == 0 {
		// No sweeper: expiry must hold on every read by itself (R9).
		// Tests that want the sweeper too pass an interval.
		opts.SweepInterval = ttlstore.ManualSweep
	}
	e := &env{t: t, mock: mock, opts: opts}
	e.serve()
	t.Cleanup(e.stop)
	return e
}

// serve starts (or restarts) the server over e.opts.
func (e *env) serve() {
	e.t.Helper()
	srv, err := cosmoshttp.New(e.opts)
	if err != nil {
		e.t.Fatalf("cosmoshttp.New: %v", err)
	}
	e.srv = srv
	e.hs = httptest.NewServer(srv)
	e.client = e.newClient(cosmoshttp.EmulatorKey, false)
	e.db = nil
}

// stop closes the listener, then the server.
func (e *env) stop() {
	if e.hs != nil {
		e.hs.Close()
		e.hs = nil
	}
	if e.srv != nil {
		if err := e.srv.Close(); err != nil {
			e.t.Errorf("Server.Close: %v", err)
		}
		e.srv = nil
	}
}

// restart stops the server and starts a new one over the same options (for
// a durable server, the same Dir), keeping the clock.
func (e *env) restart() {
	e.t.Helper()
	e.stop()
	e.serve()
}

// newClient returns an SDK client for the server signing with key; content
// sets ClientOptions.EnableContentResponseOnWrite.
func (e *env) newClient(key string, content bool) *azcosmos.Client {
	e.t.Helper()
	return e.newClientWith(key, &azcosmos.ClientOptions{EnableContentResponseOnWrite: content})
}

// newClientWith returns an SDK client for the server signing with key,
// with opts (whose Transport and Retry it sets) and extra per-retry
// policies, which run after the SDK signs.
func (e *env) newClientWith(key string, opts *azcosmos.ClientOptions, perRetry ...policy.Policy) *azcosmos.Client {
	e.t.Helper()
	cred, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		e.t.Fatalf("NewKeyCredential: %v", err)
	}
	opts.PerRetryPolicies = append(opts.PerRetryPolicies, perRetry...)
	opts.Transport = e.hs.Client()
	// The SDK retries 429 and 5xx for seconds; a conformance test wants
	// the first answer.
	opts.Retry.MaxRetries = -1
	c, err := azcosmos.NewClientWithKey(e.hs.URL, cred, opts)
	if err != nil {
		e.t.Fatalf("NewClientWithKey: %v", err)
	}
	return c
}

// advance moves every container's clock by d.
func (e *env) advance(d time.Duration) { e.mock.Add(d) }

// advanceTo moves the clock to the instant t (which must not be in the
// past).
func (e *env) advanceTo(t time.Time) {
	e.t.Helper()
	d := t.Sub(e.mock.Now())
	if d < 0 {
		e.t.Fatalf("advanceTo %v: the clock is already at %v", t, e.mock.Now())
	}
	e.mock.Add(d)
}

// database returns the client of database "db", creating it on first use.
func (e *env) database() *azcosmos.DatabaseClient {
	e.t.Helper()
	if e.db != nil {
		return e.db
	}
	if _, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil && status(err) != http.StatusConflict {
		e.t.Fatalf("CreateDatabase db: %v", err)
	}
	db, err := e.client.NewDatabase("db")
	if err != nil {
		e.t.Fatal(err)
	}
	e.db = db
	return db
}

// container creates container id in database "db" partitioned on /pk with
// defaultTTL, and returns its client.
func (e *env) container(id string, defaultTTL *int32) *azcosmos.ContainerClient {
	e.t.Helper()
	db := e.database()
	_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     id,
		DefaultTimeToLive:      defaultTTL,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
	}, nil)
	if err != nil {
		e.t.Fatalf("CreateContainer %s (defaultTtl %s): %v", id, ttlString(defaultTTL), err)
	}
	c, err := db.NewContainer(id)
	if err != nil {
		e.t.Fatal(err)
	}
	t := e.t
	t.Cleanup(func() {
		// The client of the server running now (a test may restart it).
		if e.hs != nil {
			cur, _ := e.client.NewContainer("db", id)
			checkConsistent(t, cur)
		}
	})
	return c
}

// checkConsistent is the suite's invariant, run when a test that made a
// container ends: a cross-partition SELECT *, point reads of what it
// returns and COUNT agree, at the clock's current time. A container the
// test deleted is skipped.
func checkConsistent(t *testing.T, c *azcosmos.ContainerClient) {
	t.Helper()
	if _, err := c.Read(ctx, nil); status(err) == http.StatusNotFound {
		return
	} else if err != nil {
		t.Errorf("invariant: read container %s: %v", c.ID(), err)
		return
	}
	items, _, err := query(t, c, azcosmos.NewPartitionKey(), "SELECT * FROM c", 0)
	if err != nil {
		t.Errorf("invariant: SELECT * in %s: %v", c.ID(), err)
		return
	}
	for _, it := range items {
		d := parse(t, it)
		var pk azcosmos.PartitionKey
		switch v := d["pk"].(type) {
		case string:
			pk = azcosmos.NewPartitionKeyString(v)
		case float64:
			pk = azcosmos.NewPartitionKeyNumber(v)
		case bool:
			pk = azcosmos.NewPartitionKeyBool(v)
		case nil:
			if _, ok := d["pk"]; !ok {
				continue // no /pk: not addressable through the SDK
			}
			pk = azcosmos.NullPartitionKey
		default:
			continue
		}
		id, _ := d["id"].(string)
		r, err := c.ReadItem(ctx, pk, id, nil)
		if err != nil {
			t.Errorf("invariant: %s/%s is in SELECT * but its read fails: %v", c.ID(), id, err)
			continue
		}
		if string(r.Value) != string(it) {
			t.Errorf("invariant: %s/%s: read\n%s\nquery\n%s", c.ID(), id, r.Value, it)
		}
	}
	cnt := mustQuery(t, c, azcosmos.NewPartitionKey(), "SELECT VALUE COUNT(1) FROM c")
	if len(cnt) != 1 || string(cnt[0]) != jsonString(len(items)) {
		t.Errorf("invariant: %s: COUNT %s, SELECT * %d items", c.ID(), joined(cnt), len(items))
	}
}

// ttlp returns a pointer to n, for DefaultTimeToLive.
func ttlp(n int32) *int32 { return &n }

func ttlString(p *int32) string {
	if p == nil {
		return "off"
	}
	b, _ := json.Marshal(*p)
	return string(b)
}

// status returns the HTTP status of an SDK error (*azcore.ResponseError),
// 0 for nil, and -1 for an error that carries no response.
func status(err error) int {
	if err == nil {
		return 0
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return -1
}

// wantStatus fails the test unless err is a response error with code (0:
// no error).
func wantStatus(t *testing.T, what string, err error, code int) {
	t.Helper()
	if got := status(err); got != code {
		t.Errorf("%s: status %d, want %d (err: %v)", what, got, code, err)
	}
}

// errorBody returns the body of an SDK response error, parsed as Cosmos
// DB's {"code","message"}.
func errorBody(t *testing.T, err error) (code, message string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		t.Fatalf("not a response error: %v", err)
	}
	// azcore keeps the body readable after the error was built.
	b, _ := io.ReadAll(re.RawResponse.Body)
	var body struct{ Code, Message string }
	if jerr := json.Unmarshal(b, &body); jerr != nil {
		t.Errorf("error body is not JSON {code,message}: %q", b)
	}
	return body.Code, body.Message
}

// doc is a JSON object.
type doc = map[string]any

// jsonDoc marshals d.
func jsonDoc(t *testing.T, d doc) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parse unmarshals a JSON object.
func parse(t *testing.T, b []byte) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("not a JSON object: %q: %v", b, err)
	}
	return d
}

// create creates d in c under partition key pk and returns the response.
func create(t *testing.T, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey, d doc) azcosmos.ItemResponse {
	t.Helper()
	r, err := c.CreateItem(ctx, pk, jsonDoc(t, d), nil)
	if err != nil {
		t.Fatalf("CreateItem %v: %v", d, err)
	}
	return r
}

// read reads id and returns it parsed, or nil and the status of the error.
func read(t *testing.T, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey, id string) (doc, int) {
	t.Helper()
	r, err := c.ReadItem(ctx, pk, id, nil)
	if err != nil {
		return nil, status(err)
	}
	return parse(t, r.Value), r.RawResponse.StatusCode
}

// tsOf returns a document's _ts, failing unless it is a JSON integer.
func tsOf(t *testing.T, d doc) int64 {
	t.Helper()
	f, ok := d["_ts"].(float64)
	if !ok || f != float64(int64(f)) {
		t.Fatalf("_ts %v (%T) is not an integer", d["_ts"], d["_ts"])
	}
	return int64(f)
}

// query runs q (with params, name/value pairs) under pk with page size
// pageSize (0: the server's), and returns every item of every page and the
// number of pages.
func query(t *testing.T, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey, q string, pageSize int32, params ...any) ([][]byte, int, error) {
	t.Helper()
	opts := &azcosmos.QueryOptions{PageSizeHint: pageSize}
	for i := 0; i+1 < len(params); i += 2 {
		opts.QueryParameters = append(opts.QueryParameters, azcosmos.QueryParameter{Name: params[i].(string), Value: params[i+1]})
	}
	pager := c.NewQueryItemsPager(q, pk, opts)
	var items [][]byte
	pages := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return items, pages, err
		}
		pages++
		if pages > 1000 {
			t.Fatalf("query %q: more than 1000 pages", q)
		}
		items = append(items, page.Items...)
	}
	return items, pages, nil
}

// mustQuery is query failing the test on an error.
func mustQuery(t *testing.T, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey, q string, params ...any) [][]byte {
	t.Helper()
	items, _, err := query(t, c, pk, q, 0, params...)
	if err != nil {
		t.Fatalf("query %q: %v", q, err)
	}
	return items
}

// ids returns the "id" of each item, in order.
func ids(t *testing.T, items [][]byte) []string {
	t.Helper()
	out := []string{}
	for _, it := range items {
		id, _ := parse(t, it)["id"].(string)
		out = append(out, id)
	}
	return out
}

// joined renders raw JSON items as one comma-separated string.
func joined(items [][]byte) string {
	s := make([]string, len(items))
	for i, it := range items {
		s[i] = string(it)
	}
	return strings.Join(s, ",")
}

// count runs SELECT VALUE COUNT(1) under pk and returns the number.
func count(t *testing.T, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey) int {
	t.Helper()
	items := mustQuery(t, c, pk, "SELECT VALUE COUNT(1) FROM c")
	if len(items) != 1 {
		t.Fatalf("COUNT: %d items (%s), want 1", len(items), joined(items))
	}
	var n int
	if err := json.Unmarshal(items[0], &n); err != nil {
		t.Fatalf("COUNT: %q is not a number", items[0])
	}
	return n
}

// raw sends a request the SDK cannot send, signed with key unless key is
// empty. path is the escaped path ("/dbs/db/colls/c/docs"); resType and link
// are what is signed.
func (e *env) raw(t *testing.T, method, path, key, resType, link string, hdr map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.hs.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// The handler does not check the date against its clock (a mock).
	date := e.mock.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2020-11-05")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		auth, err := cosmoshttp.Sign(key, method, resType, link, date)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", auth)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.hs.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// itemPath returns the escaped path of an item of container c in "db".
func itemPath(c, id string) string {
	return "/dbs/db/colls/" + url.PathEscape(c) + "/docs/" + url.PathEscape(id)
}

// pkHeader is the x-ms-documentdb-partitionkey value of a string key.
func pkHeader(s string) string {
	b, _ := json.Marshal([]string{s})
	return string(b)
}

// shortErr is the message of an SDK error's body, or the error.
func shortErr(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.RawResponse != nil {
		b, _ := io.ReadAll(re.RawResponse.Body)
		var body struct{ Message string }
		if json.Unmarshal(b, &body) == nil && body.Message != "" {
			return body.Message
		}
	}
	return fmt.Sprint(err)
}
