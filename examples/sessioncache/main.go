// Command sessioncache is an HTTP service that keeps login sessions in a
// ttlstore collection with sliding expiration: each request with a valid
// session cookie touches the session, restarting its 30-minute countdown;
// a session left idle for 30 minutes is gone.
//
// main exercises the handler end to end through net/http/httptest on a mock
// clock, so half an hour passes at once, and exits non-zero if the service
// does not behave as described.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

// idle is how long a session lives without a request.
const idle = 30 * 60

type session struct {
	ID   string `json:"id"`
	User string `json:"user"`
}

// server serves /login?user=NAME, which starts a session, and /me, which
// answers with the session's user or 401.
type server struct{ sessions *ttlstore.Collection }

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/login":
		user := r.URL.Query().Get("user")
		if user == "" {
			http.Error(w, "user is required", http.StatusBadRequest)
			return
		}
		token := newToken()
		if _, err := s.sessions.Create(session{ID: token, User: user}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: token, Path: "/", HttpOnly: true})
		fmt.Fprintf(w, "welcome %s\n", user)
	case "/me":
		cookie, err := r.Cookie("session")
		if err != nil {
			http.Error(w, "no session", http.StatusUnauthorized)
			return
		}
		d, err := s.sessions.Touch(cookie.Value) // sliding expiration
		if errors.Is(err, ttlstore.ErrNotFound) {
			http.Error(w, "session expired", http.StatusUnauthorized)
			return
		} else if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var sess session
		if err := d.Decode(&sess); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "you are %s\n", sess.User)
	default:
		http.NotFound(w, r)
	}
}

func newToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func main() {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
	sessions, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(idle), Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer sessions.Close()

	srv := httptest.NewServer(&server{sessions: sessions})
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}

	steps := []struct {
		wait time.Duration
		path string
		want int
	}{
		{0, "/me", http.StatusUnauthorized},
		{0, "/login?user=ada", http.StatusOK},
		{20 * time.Minute, "/me", http.StatusOK}, // touches: 30 more minutes
		{20 * time.Minute, "/me", http.StatusOK}, // 40 min after login, 20 after the touch
		{30*time.Minute - time.Second, "/me", http.StatusOK},
		{30 * time.Minute, "/me", http.StatusUnauthorized}, // idle for 30 minutes
	}
	start := clk.Now()
	for _, st := range steps {
		clk.Add(st.wait)
		resp, err := client.Get(srv.URL + st.path)
		if err != nil {
			log.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("+%-8v GET %-16s %d %s", clk.Now().Sub(start), st.path, resp.StatusCode, body)
		if resp.StatusCode != st.want {
			log.Fatalf("GET %s: status %d, want %d", st.path, resp.StatusCode, st.want)
		}
	}
	fmt.Printf("sessions: %+v\n", sessions.Stats())
}
