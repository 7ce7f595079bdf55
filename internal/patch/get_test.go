package patch_test

import (
	"testing"

	"github.com/ttlstore/ttlstore/internal/patch"
)

func TestGet(t *testing.T) {
	for _, tt := range []struct {
		name, doc, path string
		want            string
		found           bool
	}{
		{"top", `{"a":1}`, "/a", `1`, true},
		{"nested", `{"a":{"b":"x"}}`, "/a/b", `"x"`, true},
		{"spaces", ` { "a" : { "b" : null } } `, "/a/b", `null`, true},
		{"escaped name", `{"a/b":true,"c~d":false}`, "/a~1b", `true`, true},
		{"tilde", `{"a/b":true,"c~d":false}`, "/c~0d", `false`, true},
		{"escaped key", `{"\u0061":2}`, "/a", `2`, true},
		{"last duplicate", `{"a":1,"a":2}`, "/a", `2`, true},
		{"object value", `{"a":{"b":{"c":1}}}`, "/a/b", `{"c":1}`, true},
		{"absent", `{"a":1}`, "/b", ``, false},
		{"absent parent", `{"a":1}`, "/b/c", ``, false},
		{"through a scalar", `{"a":1}`, "/a/b", ``, false},
		{"through an array", `{"a":[{"b":1}]}`, "/a/b", ``, false},
		{"through an array by index", `{"a":[{"b":1}]}`, "/a/0/b", ``, false},
		{"empty name", `{"":3}`, "/", `3`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, found, err := patch.Get([]byte(tt.doc), tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if found != tt.found || string(v) != tt.want {
				t.Fatalf("Get(%s, %q) = %q, %v; want %q, %v", tt.doc, tt.path, v, found, tt.want, tt.found)
			}
		})
	}
	if _, _, err := patch.Get([]byte(`[1]`), "/a"); err == nil {
		t.Fatal("Get of an array: no error")
	}
	for _, bad := range []string{"", "a", "/a~2"} {
		if patch.CheckPath(bad) == "" {
			t.Errorf("CheckPath(%q) accepts it", bad)
		}
	}
	if msg := patch.CheckPath("/a/b"); msg != "" {
		t.Errorf("CheckPath(/a/b) = %q", msg)
	}
}
