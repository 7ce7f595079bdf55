package conformance

// The load test: 64 SDK clients over loopback, mixed operations, bounded in
// time (COSMOS_LOAD_SECONDS, 2 by default; the run is 30). Each
// client owns its own ids, so what every id must hold is known: after the
// run every acknowledged write is there, exactly; in the durable run, also
// after a kill -9 of the server in the middle of the load and a restart
// (an id whose last write was in flight at the kill may hold either
// version).

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

const loadClients = 64

func loadDuration() time.Duration {
	if s := os.Getenv("COSMOS_LOAD_SECONDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return 2 * time.Second
}

// idState is what one id holds: v, or nothing when gone. pending is the
// version of a write whose answer never came (the server died).
type idState struct {
	v, pendingV         int
	gone, pendingGone   bool
	pending, everExists bool
}

// loadClient is one client's ids and their states.
type loadClient struct {
	k     int
	pk    azcosmos.PartitionKey
	ids   []string
	state map[string]*idState
	lat   []time.Duration
	ops   int
}

func loadItem(id string, k, v int) []byte {
	return fmt.Appendf(nil, `{"id":%q,"pk":"p%d","v":%d,"pad":"%s"}`, id, k%8, v, strings.Repeat("x", 50+v%500))
}

// run drives c's operations until ctx ends or the server fails; it reports
// a violation of what an id must hold as an error.
func (lc *loadClient) run(ctx context.Context, c *azcosmos.ContainerClient) error {
	rng := rand.New(rand.NewPCG(uint64(lc.k), 7))
	v := 0
	for ctx.Err() == nil {
		v++
		t0 := time.Now()
		err := lc.step(c, rng, v)
		lc.lat = append(lc.lat, time.Since(t0))
		lc.ops++
		if err != nil {
			var re *azcore.ResponseError
			if errors.As(err, &re) {
				return err // a wrong answer, not a dead server
			}
			return nil // the server is gone: stop, with the write pending
		}
	}
	return nil
}

func (lc *loadClient) step(c *azcosmos.ContainerClient, rng *rand.Rand, v int) error {
	r := rng.IntN(100)
	if len(lc.ids) == 0 || r < 20 {
		id := fmt.Sprintf("c%d-%d", lc.k, len(lc.ids))
		lc.ids = append(lc.ids, id)
		st := &idState{gone: true, pending: true, pendingV: v}
		lc.state[id] = st
		if _, err := c.CreateItem(ctx, lc.pk, loadItem(id, lc.k, v), nil); err != nil {
			return err
		}
		*st = idState{v: v, everExists: true}
		return nil
	}
	id := lc.ids[rng.IntN(len(lc.ids))]
	st := lc.state[id]
	switch {
	case r < 60: // read
		resp, err := c.ReadItem(ctx, lc.pk, id, nil)
		if st.gone {
			if err == nil {
				return &azcore.ResponseError{ErrorCode: fmt.Sprintf("read of deleted %s found %s", id, resp.Value), StatusCode: 599}
			}
			var re *azcore.ResponseError
			if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
				return nil
			}
			return err
		}
		if err != nil {
			return err
		}
		if !strings.Contains(string(resp.Value), fmt.Sprintf(`"v":%d,`, st.v)) {
			return &azcore.ResponseError{ErrorCode: fmt.Sprintf("read of %s: %s, want v %d", id, resp.Value[:60], st.v), StatusCode: 599}
		}
		return nil
	case r < 80: // upsert
		st.pending, st.pendingV, st.pendingGone = true, v, false
		if _, err := c.UpsertItem(ctx, lc.pk, loadItem(id, lc.k, v), nil); err != nil {
			return err
		}
		*st = idState{v: v, everExists: true}
	case r < 90 && !st.gone: // patch
		var ops azcosmos.PatchOperations
		ops.AppendSet("/v", v)
		st.pending, st.pendingV, st.pendingGone = true, v, false
		if _, err := c.PatchItem(ctx, lc.pk, id, ops, nil); err != nil {
			return err
		}
		*st = idState{v: v, everExists: true}
	case r < 95 && !st.gone: // delete
		st.pending, st.pendingGone = true, true
		if _, err := c.DeleteItem(ctx, lc.pk, id, nil); err != nil {
			return err
		}
		*st = idState{gone: true, everExists: true}
	default: // a query of the client's partition
		pager := c.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c WHERE STARTSWITH(c.id, @p)", lc.pk,
			&azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@p", Value: fmt.Sprintf("c%d-", lc.k)}}})
		_, err := pager.NextPage(ctx)
		return err
	}
	return nil
}

// verify reads every id of the client and checks it holds an allowed
// version.
func (lc *loadClient) verify(c *azcosmos.ContainerClient) error {
	for _, id := range lc.ids {
		st := lc.state[id]
		resp, err := c.ReadItem(ctx, lc.pk, id, nil)
		var re *azcore.ResponseError
		notFound := errors.As(err, &re) && re.StatusCode == http.StatusNotFound
		if err != nil && !notFound {
			return err
		}
		okGone := st.gone || (st.pending && st.pendingGone)
		if notFound {
			if !okGone {
				return fmt.Errorf("%s is missing; it held v %d", id, st.v)
			}
			continue
		}
		got := string(resp.Value)
		if (!st.gone && strings.Contains(got, fmt.Sprintf(`"v":%d,`, st.v))) ||
			(st.pending && !st.pendingGone && strings.Contains(got, fmt.Sprintf(`"v":%d,`, st.pendingV))) {
			continue
		}
		return fmt.Errorf("%s holds %.60s; acknowledged: v %d gone %v, pending %v v %d gone %v", id, got, st.v, st.gone, st.pending, st.pendingV, st.pendingGone)
	}
	return nil
}

func loadContainer(t testing.TB, url string) *azcosmos.ContainerClient {
	cred, _ := azcosmos.NewKeyCredential(cosmoshttp.EmulatorKey)
	// No retries: a request the dead server never answered fails at
	// once, and no write is sent twice.
	client, err := azcosmos.NewClientWithKey(url, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	db, _ := client.NewDatabase("load")
	c, _ := db.NewContainer("c")
	return c
}

func createLoadContainer(t testing.TB, url string) {
	cred, _ := azcosmos.NewKeyCredential(cosmoshttp.EmulatorKey)
	client, _ := azcosmos.NewClientWithKey(url, cred, nil)
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "load"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := client.NewDatabase("load")
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
}

// runLoad runs the clients against url until d has passed or kill (if not
// nil) is called and returns; it returns the clients.
func runLoad(t *testing.T, url string, d time.Duration, kill func()) []*loadClient {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	clients := make([]*loadClient, loadClients)
	errs := make(chan error, loadClients)
	var wg sync.WaitGroup
	for k := range clients {
		lc := &loadClient{k: k, pk: azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", k%8)), state: map[string]*idState{}}
		clients[k] = lc
		c := loadContainer(t, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- lc.run(ctx, c)
		}()
	}
	start := time.Now()
	if kill != nil {
		time.Sleep(d / 2) // the load runs in real time; the kill comes halfway
		kill()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var lat []time.Duration
	ops := 0
	for _, lc := range clients {
		lat = append(lat, lc.lat...)
		ops += lc.ops
	}
	slices.Sort(lat)
	t.Logf("%d clients, %v: %d operations, %.0f/s, p50 %v, p99 %v", loadClients, elapsed.Round(time.Millisecond), ops,
		float64(ops)/elapsed.Seconds(), lat[len(lat)/2], lat[len(lat)*99/100])
	return clients
}

// TestLoad runs the load against a server in this process, then checks
// every id.
func TestLoad(t *testing.T) {
	srv, err := cosmoshttp.New(cosmoshttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	createLoadContainer(t, hs.URL)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	clients := runLoad(t, hs.URL, loadDuration(), nil)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("heap after the load: %d MiB (before: %d MiB), clients included", after.HeapAlloc>>20, before.HeapAlloc>>20)
	c := loadContainer(t, hs.URL)
	for _, lc := range clients {
		if err := lc.verify(c); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadKill9 runs the load against cmd/ttlstore-cosmos over a directory,
// kills it with SIGKILL halfway, starts it again over the directory and
// checks that every acknowledged write is there.
func TestLoadKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	bin := buildCommand(t)
	dir := t.TempDir()
	cmd, url := startServer(t, bin, dir)
	createLoadContainer(t, url)
	clients := runLoad(t, url, loadDuration(), func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	cmd2, url2 := startServer(t, bin, dir)
	defer func() { cmd2.Process.Signal(os.Interrupt); cmd2.Wait() }()
	c := loadContainer(t, url2)
	for _, lc := range clients {
		if err := lc.verify(c); err != nil {
			t.Fatal(err)
		}
	}
	if rss, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd2.Process.Pid)); err == nil {
		for _, line := range strings.Split(string(rss), "\n") {
			if strings.HasPrefix(line, "VmRSS") {
				t.Logf("restarted server: %s", strings.Join(strings.Fields(line), " "))
			}
		}
	}
}

// buildCommand builds cmd/ttlstore-cosmos and returns its path.
func buildCommand(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "ttlstore-cosmos")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ttlstore/ttlstore/cmd/ttlstore-cosmos").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestCommandTLS: the command with -tls serves HTTPS with a certificate of
// its own, and -key sets the account key; the SDK works over it.
func TestCommandTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	const key = "dGhpcyBpcyBhbm90aGVyIGFjY291bnQga2V5IGZvciB0aGUgdGVzdA=="
	cmd, url := startServer(t, buildCommand(t), t.TempDir(), "-tls", "-key", key)
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("serving %s", url)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // its certificate is self-signed
	defer tr.CloseIdleConnections()
	opts := &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}, Retry: policy.RetryOptions{MaxRetries: -1}}}
	for _, k := range []string{key, cosmoshttp.EmulatorKey} {
		cred, _ := azcosmos.NewKeyCredential(k)
		client, _ := azcosmos.NewClientWithKey(url, cred, opts)
		_, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "tls"}, nil)
		switch {
		case k == key && err != nil:
			t.Fatalf("with the server's key: %v", err)
		case k != key && (err == nil || !strings.Contains(err.Error(), "RESPONSE 401")):
			// (the SDK wraps the account read's error without %w)
			t.Fatalf("with the emulator's key on a server with its own: %v", err)
		}
	}
}

// startServer starts the command over dir on a free port and returns it
// with its URL, once it serves.
func startServer(t *testing.T, bin, dir string, extra ...string) (*exec.Cmd, string) {
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-dir", dir}, extra...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "serving "); ok {
			url, _, _ := strings.Cut(rest, " ")
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, strings.TrimSuffix(url, "/")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("the server did not start: %v", sc.Err())
	return nil, ""
}
