package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/benbjohnson/clock"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

// Example shows the official SDK against the handler on a mock clock: an
// item in a container with defaultTtl 10 is there 9 seconds later and gone
// at 10.
func Example() {
	mock := clock.NewMock()
	mock.Set(time.Unix(1_700_000_000, 0))
	srv, _ := cosmoshttp.New(cosmoshttp.Options{Clock: mock})
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	cred, _ := azcosmos.NewKeyCredential(cosmoshttp.EmulatorKey)
	opts := &azcosmos.ClientOptions{}
	opts.Transport = hs.Client()
	client, _ := azcosmos.NewClientWithKey(hs.URL, cred, opts)
	ctx := context.Background()
	client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil)
	db, _ := client.NewDatabase("db")
	ttl := int32(10)
	db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "sessions", DefaultTimeToLive: &ttl,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user"}}}, nil)
	c, _ := db.NewContainer("sessions")
	pk := azcosmos.NewPartitionKeyString("ann")
	c.CreateItem(ctx, pk, []byte(`{"id":"s1","user":"ann"}`), nil)

	mock.Add(9 * time.Second)
	_, err := c.ReadItem(ctx, pk, "s1", nil)
	fmt.Println("after 9 s:", err == nil)

	mock.Add(time.Second)
	_, err = c.ReadItem(ctx, pk, "s1", nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		fmt.Println("after 10 s:", re.StatusCode)
	}
	// Output:
	// after 9 s: true
	// after 10 s: 404
}
