// Command ttlstore-cosmos serves an Azure Cosmos DB-compatible endpoint
// (the NoSQL REST API, enough of it for the official SDKs) over ttlstore
// collections, whose items expire with Cosmos DB's exact time-to-live rules.
//
//	go run ./cmd/ttlstore-cosmos -addr 127.0.0.1:8081
//	go run ./cmd/ttlstore-cosmos -dir /var/lib/ttlstore -tls
//
// Point an SDK at it with the emulator's key (cosmoshttp.EmulatorKey), or
// the one given with -key. Without -dir everything is in memory; with it,
// every container is a durable collection under the directory, and a
// restart serves what the last run held. -tls serves HTTPS with a
// self-signed certificate made at start (or -cert and -keyfile).
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ttlstore-cosmos:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("ttlstore-cosmos", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8081", "address to listen on")
	dir := fs.String("dir", "", "directory to keep the containers in (empty: in memory)")
	key := fs.String("key", "", "the account's master key, base64 (empty: the emulator's well-known key)")
	useTLS := fs.Bool("tls", false, "serve HTTPS, with a self-signed certificate unless -cert is given")
	cert := fs.String("cert", "", "TLS certificate file (PEM); implies -tls")
	keyFile := fs.String("keyfile", "", "TLS private key file (PEM), with -cert")
	syncNever := fs.Bool("sync-never", false, "with -dir, do not fsync each write (see ttlstore.SyncNever)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := cosmoshttp.Options{Dir: *dir, Key: *key}
	if *syncNever {
		opts.Sync = ttlstore.SyncNever
	}
	srv, err := cosmoshttp.New(opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if *useTLS || *cert != "" {
		scheme = "https"
		tc, err := tlsConfig(*cert, *keyFile)
		if err != nil {
			return err
		}
		hs.TLSConfig = tc
		ln = tls.NewListener(ln, tc)
	}
	log.Printf("serving %s://%s/ (data: %s)", scheme, ln.Addr(), where(*dir))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return srv.Close()
}

func where(dir string) string {
	if dir == "" {
		return "in memory"
	}
	return dir
}

// tlsConfig loads the certificate given, or makes a self-signed one for
// localhost and 127.0.0.1, valid for a year.
func tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		return &tls.Config{Certificates: []tls.Certificate{c}}, nil
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "ttlstore-cosmos"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: priv}}}, nil
}
