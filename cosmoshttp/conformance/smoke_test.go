package conformance

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/benbjohnson/clock"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

func TestSmoke(t *testing.T) {
	mock := clock.NewMock()
	srv, err := cosmoshttp.New(cosmoshttp.Options{Clock: mock})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cred, _ := azcosmos.NewKeyCredential(cosmoshttp.EmulatorKey)
	client, err := azcosmos.NewClientWithKey(hs.URL, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := client.NewDatabase("db")
	ttl := int32(10)
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: &ttl,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.CreateItem(ctx, pk, []byte(`{"id":"a b%","pk":"p","v":1}`), nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.ReadItem(ctx, pk, "a b%", nil)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(r.Value, &m)
	if m["v"] != 1.0 {
		t.Fatalf("read %s", r.Value)
	}
	pager := c.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", pk, nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Items) != 1 || string(page.Items[0]) != "1" {
		t.Fatalf("count: %v %q", err, page.Items)
	}
	mock.Add(10e9)
	if _, err := c.ReadItem(ctx, pk, "a b%", nil); err == nil {
		t.Fatal("read after expiry")
	}
}
