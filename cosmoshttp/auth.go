package cosmoshttp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"net/url"
	"strings"
)

// authorize checks the request's master-key signature: Authorization is
// "type=master&ver=1.0&sig=<base64 HMAC-SHA256>", URL-encoded, over
//
//	lower(verb) "\n" lower(resourceType) "\n" resourceLink "\n" lower(x-ms-date) "\n" "\n"
//
// where the resource link is the unescaped path of the resource (for a feed
// of resources, of its parent) as the SDKs sign it. The comparison is in
// constant time. The date is not checked against the clock: a test server
// runs on a mock clock, and what a replay could do is what the key's holder
// can do anyway on this endpoint.
func (s *Server) authorize(r *http.Request, resType, link string) error {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return errorf(http.StatusUnauthorized, "the request has no Authorization header")
	}
	if unesc, err := url.QueryUnescape(auth); err == nil {
		auth = unesc
	}
	var typ, sig string
	for _, part := range strings.Split(auth, "&") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "type":
			typ = v
		case "sig":
			sig = v
		}
	}
	if typ != "master" || sig == "" {
		return errorf(http.StatusUnauthorized, "the Authorization header is not a master-key token (type=master&ver=1.0&sig=...)")
	}
	date := r.Header.Get("x-ms-date")
	if date == "" {
		date = r.Header.Get("Date")
	}
	if date == "" {
		return errorf(http.StatusUnauthorized, "the request has no x-ms-date header")
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return errorf(http.StatusUnauthorized, "the Authorization signature is not base64")
	}
	want := s.sign(r.Method, resType, link, date)
	if !hmac.Equal(got, want) {
		return errorf(http.StatusUnauthorized, "the MAC signature found in the HTTP request is not the same as the computed signature (verb %s, resource type %q, resource link %q)", strings.ToLower(r.Method), resType, link)
	}
	return nil
}

// sign returns the HMAC-SHA256 of the string to sign under the key.
func (s *Server) sign(verb, resType, link, date string) []byte {
	m, _ := s.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, s.key)
	}
	m.Reset()
	buf := make([]byte, 0, 64+len(link)+len(date))
	buf = appendLower(buf, verb)
	buf = append(buf, '\n')
	buf = appendLower(buf, resType)
	buf = append(append(buf, '\n'), link...)
	buf = append(buf, '\n')
	buf = appendLower(buf, date)
	buf = append(buf, '\n', '\n')
	m.Write(buf)
	sum := m.Sum(buf[:0])
	s.macs.Put(m)
	return sum
}

func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Sign returns the value of the Authorization header that signs a request
// with verb on the resource link of type resType at date (an RFC 1123 date
// in GMT, the request's x-ms-date), under key (base64). Clients other than
// the SDKs, and tests, use it to sign their own requests.
func Sign(key, verb, resType, link, date string) (string, error) {
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return "", err
	}
	s := &Server{key: k}
	sig := base64.StdEncoding.EncodeToString(s.sign(verb, resType, link, date))
	return url.QueryEscape("type=master&ver=1.0&sig=" + sig), nil
}
