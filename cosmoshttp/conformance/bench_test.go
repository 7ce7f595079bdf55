package conformance

// The endpoint's speed, through the official SDK, on realistic data: 100
// partitions of 100 items each, 100 B to 2 KB, each with its own ttl spread
// from an hour to 30 days.
//
// By default the targets are in this process, behind httptest servers:
// "ttlstore" (cosmoshttp in memory) and, for point reads only, "constant"
// (a handler that answers every read with one canned item, so that
// ttlstore minus constant is the handler's own cost beyond the SDK's and
// the loopback's). COSMOS_BENCH_TARGETS names servers in other processes
// instead, as name=url pairs separated by commas, e.g.
//
//	COSMOS_BENCH_TARGETS=ttlstore=http://127.0.0.1:8082,cosmium=http://127.0.0.1:8081
//
// so that two servers are measured alike (each in its own process). Each
// benchmark reports the median and 99th percentile latency (p50-µs,
// p99-µs) besides ns/op.

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

const (
	benchParts = 100
	benchPer   = 100
)

type benchTarget struct {
	name string
	url  string
	stop func()
}

func benchTargets(b *testing.B) []benchTarget {
	if env := os.Getenv("COSMOS_BENCH_TARGETS"); env != "" {
		var ts []benchTarget
		for _, kv := range strings.Split(env, ",") {
			name, url, _ := strings.Cut(kv, "=")
			ts = append(ts, benchTarget{name: name, url: url, stop: func() {}})
		}
		return ts
	}
	srv, err := cosmoshttp.New(cosmoshttp.Options{})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	cs := httptest.NewServer(constantHandler())
	return []benchTarget{
		{"ttlstore", hs.URL, func() { hs.Close(); srv.Close() }},
		{"constant", cs.URL, cs.Close},
	}
}

// constantHandler answers the account and every item read with a canned
// answer, and anything else with 201: the SDK's and loopback's cost alone.
// The item is of the data's mean size (about 1 KB), and the answer carries
// the headers cosmoshttp's do, so that only the handler's work differs.
func constantHandler() http.Handler {
	item := []byte(`{"id":"p0-0","pk":"p0","cat":0,"v":0,"ttl":86400,"pad":"` + strings.Repeat("x", 1010) + `","_ts":1700000000,"_etag":"\"0cf41eb06246cb2b\"","_rid":"AAAAAAAAAAAAAAAAAAAAAA==","_self":"dbs/x/colls/y/docs/AAAAAAAAAAAAAAAAAAAAAA==/","_attachments":"attachments/"}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("etag", `"0cf41eb06246cb2b"`)
		w.Header().Set("x-ms-request-charge", "1")
		w.Header().Set("x-ms-activity-id", "00000000-0000-0000-0000-000000000001")
		w.Header().Set("x-ms-session-token", "0:-1#1")
		switch {
		case r.URL.Path == "/":
			w.Write([]byte(`{"id":"x","writableLocations":[],"readableLocations":[]}`))
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Length", strconv.Itoa(len(item)))
			w.Write(item)
		default:
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"id":"x","_ts":1700000000,"_etag":"\"1\""}`))
		}
	})
}

// benchItem returns item i of partition p: 100 B to 2 KB, a ttl from an
// hour to 30 days.
func benchItem(rng *rand.Rand, p, i, v int) []byte {
	pad := strings.Repeat("x", 60+rng.IntN(1900))
	return fmt.Appendf(nil, `{"id":"p%d-%d","pk":"p%d","cat":%d,"v":%d,"ttl":%d,"pad":"%s"}`,
		p, i, p, i%10, v, 3600+rng.IntN(30*86400-3600), pad)
}

// benchContainer creates a database and container on the target, filled,
// and returns the container.
func benchContainer(b *testing.B, url string) *azcosmos.ContainerClient {
	cred, _ := azcosmos.NewKeyCredential(cosmoshttp.EmulatorKey)
	client, err := azcosmos.NewClientWithKey(url, cred, nil)
	if err != nil {
		b.Fatal(err)
	}
	dbName := fmt.Sprintf("bench%d", time.Now().UnixNano())
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: dbName}, nil); err != nil {
		b.Fatal(err)
	}
	db, _ := client.NewDatabase(dbName)
	ttl := int32(-1)
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: &ttl,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		b.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	rng := rand.New(rand.NewPCG(1, 2))
	for p := range benchParts {
		for i := range benchPer {
			if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", p)), benchItem(rng, p, i, 0), nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Cleanup(func() { db.Delete(ctx, nil) })
	return c
}

// BenchmarkSDK measures each operation through the SDK against each target.
func BenchmarkSDK(b *testing.B) {
	targets := benchTargets(b)
	defer func() {
		for _, t := range targets {
			t.stop()
		}
	}()
	ops := []struct {
		name string
		run  func(c *azcosmos.ContainerClient, rng *rand.Rand, n int) error
	}{
		{"create", func(c *azcosmos.ContainerClient, rng *rand.Rand, n int) error {
			p := rng.IntN(benchParts)
			_, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", p)), benchItem(rng, p, benchPer+n, 0), nil)
			return err
		}},
		{"read", func(c *azcosmos.ContainerClient, rng *rand.Rand, n int) error {
			p, i := rng.IntN(benchParts), rng.IntN(benchPer)
			_, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", p)), fmt.Sprintf("p%d-%d", p, i), nil)
			return err
		}},
		{"upsert", func(c *azcosmos.ContainerClient, rng *rand.Rand, n int) error {
			p, i := rng.IntN(benchParts), rng.IntN(benchPer)
			_, err := c.UpsertItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", p)), benchItem(rng, p, i, n), nil)
			return err
		}},
		{"query", func(c *azcosmos.ContainerClient, rng *rand.Rand, n int) error {
			p := rng.IntN(benchParts)
			// The partition is in the WHERE clause too: cosmium does not
			// scope a query to the partition key it is sent with.
			pk := fmt.Sprintf("p%d", p)
			pager := c.NewQueryItemsPager("SELECT * FROM c WHERE c.pk = @pk AND c.cat = @cat", azcosmos.NewPartitionKeyString(pk),
				&azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@pk", Value: pk}, {Name: "@cat", Value: rng.IntN(10)}}})
			page, err := pager.NextPage(ctx)
			if err == nil && len(page.Items) != benchPer/10 {
				err = fmt.Errorf("query returned %d items, want %d", len(page.Items), benchPer/10)
			}
			return err
		}},
		{"patch", func(c *azcosmos.ContainerClient, rng *rand.Rand, n int) error {
			p, i := rng.IntN(benchParts), rng.IntN(benchPer)
			var ops azcosmos.PatchOperations
			ops.AppendSet("/v", n)
			_, err := c.PatchItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", p)), fmt.Sprintf("p%d-%d", p, i), ops, nil)
			return err
		}},
	}
	for _, op := range ops {
		for _, t := range targets {
			if t.name == "constant" && op.name != "read" {
				continue
			}
			b.Run(fmt.Sprintf("op=%s/target=%s", op.name, t.name), func(b *testing.B) {
				c := benchContainer(b, t.url)
				rng := rand.New(rand.NewPCG(3, 4))
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for n := range b.N {
					t0 := time.Now()
					if err := op.run(c, rng, n); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-µs")
			})
		}
	}
}
