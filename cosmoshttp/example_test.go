package cosmoshttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

// A Server in a test, driven here with signed requests of its own; code
// under test would point azcosmos.NewClientWithKey at hs.URL with
// cosmoshttp.EmulatorKey instead.
func Example() {
	clk := clock.NewMock()
	srv, _ := cosmoshttp.New(cosmoshttp.Options{Clock: clk})
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	do := func(method, path, resType, link, pk, body string) int {
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		date := time.Now().UTC().Format(http.TimeFormat)
		auth, _ := cosmoshttp.Sign(cosmoshttp.EmulatorKey, method, resType, link, date)
		req.Header.Set("x-ms-date", date)
		req.Header.Set("Authorization", auth)
		if pk != "" {
			req.Header.Set("x-ms-documentdb-partitionkey", pk)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println(do("POST", "/dbs", "dbs", "", "", `{"id":"shop"}`))
	fmt.Println(do("POST", "/dbs/shop/colls", "colls", "dbs/shop", "", `{"id":"carts","partitionKey":{"paths":["/user"]},"defaultTtl":3600}`))
	fmt.Println(do("POST", "/dbs/shop/colls/carts/docs", "docs", "dbs/shop/colls/carts", `["ada"]`, `{"id":"c1","user":"ada"}`))
	clk.Add(59 * time.Minute)
	fmt.Println(do("GET", "/dbs/shop/colls/carts/docs/c1", "docs", "dbs/shop/colls/carts/docs/c1", `["ada"]`, ""))
	clk.Add(time.Minute)
	fmt.Println(do("GET", "/dbs/shop/colls/carts/docs/c1", "docs", "dbs/shop/colls/carts/docs/c1", `["ada"]`, ""))
	// Output:
	// 201
	// 201
	// 201
	// 200
	// 404
}
