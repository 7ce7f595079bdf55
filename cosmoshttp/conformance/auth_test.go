package conformance

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

func randomKey(t *testing.T) string {
	b := make([]byte, 64)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func TestAuthWrongKey(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", ttlp(-1))
	create(t, c, pkP, doc{"id": "a", "pk": "p", "v": 1})
	// Two clients: one with a wrong key (its first request, the account
	// read GET /, is refused, and azcosmos v1.5 then returns that error to
	// every call for minutes, wrapped without %w); one whose data-plane
	// requests carry a wrong signature (a policy after the SDK's signing),
	// so that each data-plane verb meets the 401 itself.
	clients := []struct {
		name string
		c    *azcosmos.Client
	}{
		{"wrong key", e.newClient(randomKey(t), false)},
		{"wrong data-plane signature", e.newClientWith(cosmoshttp.EmulatorKey, &azcosmos.ClientOptions{}, badSignature{})},
	}
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) { wrongKeyOps(t, cl.c) })
	}
	t.Run("nothing changed", func(t *testing.T) {
		d, st := read(t, c, pkP, "a")
		if st != 200 || d["v"] != 1.0 {
			t.Errorf("a: %d %v", st, d)
		}
		if n := count(t, c, azcosmos.NewPartitionKey()); n != 1 {
			t.Errorf("count %d, want 1", n)
		}
		r, err := c.Read(ctx, nil)
		if err != nil || ttlString(r.ContainerProperties.DefaultTimeToLive) != "-1" {
			t.Errorf("container: %v %+v", err, r.ContainerProperties)
		}
		if got := strings.Join(listDatabases(t, e.client, "SELECT * FROM c"), ","); got != "db" {
			t.Errorf("databases %q", got)
		}
	})
}

// badSignature replaces the signature of every data-plane request (all but
// GET /) with one made with another key.
type badSignature struct{}

func (badSignature) Do(req *policy.Request) (*http.Response, error) {
	if req.Raw().URL.Path != "/" && req.Raw().URL.Path != "" {
		sig := base64.StdEncoding.EncodeToString(make([]byte, 32))
		req.Raw().Header.Set("Authorization", url.QueryEscape("type=master&ver=1.0&sig="+sig))
	}
	return req.Next()
}

// is401 reports whether err is a 401, answered to the call itself or to
// the SDK's account read (which azcosmos wraps without %w).
func is401(err error) bool {
	return status(err) == http.StatusUnauthorized || (err != nil && strings.Contains(err.Error(), "RESPONSE 401"))
}

func wrongKeyOps(t *testing.T, bad *azcosmos.Client) {
	bc, _ := bad.NewContainer("db", "c")
	bdb, _ := bad.NewDatabase("db")
	ops := []struct {
		name string
		run  func() error
	}{
		{"read item", func() error { _, err := bc.ReadItem(ctx, pkP, "a", nil); return err }},
		{"create item", func() error { _, err := bc.CreateItem(ctx, pkP, []byte(`{"id":"b","pk":"p"}`), nil); return err }},
		{"upsert item", func() error { _, err := bc.UpsertItem(ctx, pkP, []byte(`{"id":"a","pk":"p","v":2}`), nil); return err }},
		{"replace item", func() error {
			_, err := bc.ReplaceItem(ctx, pkP, "a", []byte(`{"id":"a","pk":"p","v":2}`), nil)
			return err
		}},
		{"delete item", func() error { _, err := bc.DeleteItem(ctx, pkP, "a", nil); return err }},
		{"patch item", func() error {
			p := azcosmos.PatchOperations{}
			p.AppendSet("/v", 2)
			_, err := bc.PatchItem(ctx, pkP, "a", p, nil)
			return err
		}},
		{"query", func() error { _, _, err := query(t, bc, pkP, "SELECT * FROM c", 0); return err }},
		{"batch", func() error {
			b := bc.NewTransactionalBatch(pkP)
			b.DeleteItem("a", nil)
			_, err := bc.ExecuteTransactionalBatch(ctx, b, nil)
			return err
		}},
		{"replace container", func() error {
			_, err := bc.Replace(ctx, azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: ttlp(1), PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil)
			return err
		}},
		{"delete container", func() error { _, err := bc.Delete(ctx, nil); return err }},
		{"create database", func() error {
			_, err := bad.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "evil"}, nil)
			return err
		}},
		{"delete database", func() error { _, err := bdb.Delete(ctx, nil); return err }},
	}
	for _, op := range ops {
		t.Run(op.name+" 401", func(t *testing.T) {
			if err := op.run(); !is401(err) {
				t.Errorf("want 401, got %v", err)
			}
		})
	}
}

func TestAuthCustomKey(t *testing.T) {
	key := randomKey(t)
	e := newEnv(t, cosmoshttp.Options{Key: key})
	t.Run("emulator key refused 401", func(t *testing.T) {
		_, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "x"}, nil)
		if !is401(err) {
			t.Errorf("CreateDatabase with the emulator key: want 401, got %v", err)
		}
	})
	t.Run("the key works", func(t *testing.T) {
		good := e.newClient(key, false)
		if _, err := good.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "x"}, nil); err != nil {
			t.Fatal(err)
		}
		db, _ := good.NewDatabase("x")
		if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "ü c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
			t.Fatal(err)
		}
		c, _ := db.NewContainer("ü c")
		create(t, c, pkP, doc{"id": "% ü+", "pk": "p"})
		if _, st := read(t, c, pkP, "% ü+"); st != 200 {
			t.Errorf("read: %d", st)
		}
	})
	t.Run("invalid key refused by New", func(t *testing.T) {
		if _, err := cosmoshttp.New(cosmoshttp.Options{Key: "not base64!"}); err == nil {
			t.Error("New accepted a key that is not base64")
		}
	})
}

func TestAuthRaw(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	create(t, c, pkP, doc{"id": "a b", "pk": "p"})
	key := cosmoshttp.EmulatorKey
	item := itemPath("c", "a b")
	pkh := map[string]string{"x-ms-documentdb-partitionkey": pkHeader("p")}
	cases := []struct {
		name, method, path, key, resType, link string
		hdr                                    map[string]string
		want                                   int
	}{
		{"signed read works", "GET", item, key, "docs", "dbs/db/colls/c/docs/a b", pkh, 200},
		{"no Authorization: account", "GET", "/", "", "", "", nil, 401},
		{"no Authorization: list databases", "GET", "/dbs", "", "", "", nil, 401},
		{"no Authorization: read item", "GET", item, "", "", "", pkh, 401},
		{"no Authorization: delete item", "DELETE", item, "", "", "", pkh, 401},
		{"no Authorization: delete container", "DELETE", "/dbs/db/colls/c", "", "", "", nil, 401},
		{"no Authorization: delete database", "DELETE", "/dbs/db", "", "", "", nil, 401},
		{"signed for another verb", "DELETE", item, key, "docs", "dbs/db/colls/c/docs/a b", pkh, -1},
		{"signed for another link", "DELETE", item, key, "docs", "dbs/db/colls/c/docs/other", pkh, 401},
		{"signed with the escaped link", "DELETE", item, key, "docs", "dbs/db/colls/c/docs/a%20b", pkh, 401},
		{"signed for another type", "DELETE", item, key, "colls", "dbs/db/colls/c/docs/a b", pkh, 401},
		{"signed with another key", "DELETE", item, randomKey(t), "docs", "dbs/db/colls/c/docs/a b", pkh, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			signVerb := method
			if tc.want == -1 {
				signVerb = "GET" // signed as a read, sent as a delete
				tc.want = 401
			}
			resp, b := e.rawSigned(t, method, signVerb, tc.path, tc.key, tc.resType, tc.link, tc.hdr)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, b, tc.want)
			}
		})
	}
	t.Run("no x-ms-date 401", func(t *testing.T) {
		auth, _ := cosmoshttp.Sign(key, "DELETE", "docs", "dbs/db/colls/c/docs/a b", "")
		resp, b := e.raw(t, "DELETE", item, "", "", "", map[string]string{"Authorization": auth, "x-ms-date": "", "x-ms-documentdb-partitionkey": pkHeader("p")}, nil)
		if resp.StatusCode != 401 {
			t.Errorf("status %d (%s), want 401", resp.StatusCode, b)
		}
	})
	t.Run("garbage Authorization 401", func(t *testing.T) {
		for _, auth := range []string{"x", "type=master&ver=1.0&sig=", "type=master&ver=1.0&sig=%%%", "type=aad&ver=1.0&sig=abc", "type%3Dmaster%26ver%3D1.0%26sig%3DAAAA"} {
			resp, b := e.raw(t, "DELETE", item, "", "", "", map[string]string{"Authorization": auth, "x-ms-documentdb-partitionkey": pkHeader("p")}, nil)
			if resp.StatusCode != 401 {
				t.Errorf("Authorization %q: status %d (%s), want 401", auth, resp.StatusCode, b)
			}
		}
	})
	t.Run("nothing changed", func(t *testing.T) {
		if _, st := read(t, c, pkP, "a b"); st != 200 {
			t.Errorf("a b: %d", st)
		}
	})
}

// TestAccount: GET / answers account properties whose regions, if any,
// point at the host the request reached (another host would send the SDK
// elsewhere).
func TestAccount(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	resp, b := e.raw(t, "GET", "/", cosmoshttp.EmulatorKey, "", "", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /: %d %s", resp.StatusCode, b)
	}
	var acct struct {
		WritableLocations, ReadableLocations []struct{ Name, DatabaseAccountEndpoint string }
		EnableMultipleWriteLocations         bool
	}
	if err := json.Unmarshal(b, &acct); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	host := strings.TrimPrefix(e.hs.URL, "http://")
	for _, l := range append(acct.WritableLocations, acct.ReadableLocations...) {
		u, err := url.Parse(l.DatabaseAccountEndpoint)
		if err != nil || u.Host != host {
			t.Errorf("location %+v does not point at %s", l, host)
		}
	}
	if acct.EnableMultipleWriteLocations {
		t.Error("enableMultipleWriteLocations true")
	}
	t.Run("throughput options accepted", func(t *testing.T) {
		tp := azcosmos.NewManualThroughputProperties(400)
		if _, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "tp"}, &azcosmos.CreateDatabaseOptions{ThroughputProperties: &tp}); err != nil {
			t.Errorf("CreateDatabase with throughput: %v", err)
		}
		db, _ := e.client.NewDatabase("tp")
		at := azcosmos.NewAutoscaleThroughputProperties(4000)
		if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, &azcosmos.CreateContainerOptions{ThroughputProperties: &at}); err != nil {
			t.Errorf("CreateContainer with autoscale throughput: %v", err)
		}
	})
}

// TestTLS: the SDK over https (HTTP/2 where the SDK's transport offers it)
// against the handler in httptest.NewTLSServer.
func TestTLS(t *testing.T) {
	mock := newEnv(t, cosmoshttp.Options{}).mock
	srv, err := cosmoshttp.New(cosmoshttp.Options{Clock: mock})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewUnstartedServer(srv)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	defer hs.Close()
	cred, _ := azcosmos.NewKeyCredential(cosmoshttp.EmulatorKey)
	opts := &azcosmos.ClientOptions{}
	opts.Transport = hs.Client()
	client, err := azcosmos.NewClientWithKey(hs.URL, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := client.NewDatabase("db")
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: ttlp(10), PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	r, err := c.CreateItem(ctx, pkP, []byte(`{"id":"a","pk":"p"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("protocol %s", r.RawResponse.Proto)
	mock.Add(9500 * time.Millisecond)
	if _, err := c.ReadItem(ctx, pkP, "a", nil); status(err) != 404 {
		t.Errorf("read at _ts+10 over TLS: %v, want 404", err)
	}
}

// rawSigned is raw with the signature computed for signVerb.
func (e *env) rawSigned(t *testing.T, method, signVerb, path, key, resType, link string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	if key == "" || signVerb == method {
		return e.raw(t, method, path, key, resType, link, hdr, nil)
	}
	date := e.mock.Now().UTC().Format(http.TimeFormat)
	auth, err := cosmoshttp.Sign(key, signVerb, resType, link, date)
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]string{"Authorization": auth, "x-ms-date": date}
	for k, v := range hdr {
		h[k] = v
	}
	return e.raw(t, method, path, "", "", "", h, nil)
}

// TestConnectionString: the emulator-style connection string works.
func TestConnectionString(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	opts := &azcosmos.ClientOptions{}
	opts.Transport = e.hs.Client()
	client, err := azcosmos.NewClientFromConnectionString("AccountEndpoint="+e.hs.URL+"/;AccountKey="+cosmoshttp.EmulatorKey+";", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "cs"}, nil); err != nil {
		t.Errorf("CreateDatabase: %v", err)
	}
}
