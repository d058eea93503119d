package server

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// FuzzStorePath decodes arbitrary escaped paths as store keys. Invariants: an accepted key passes
// protocol.CheckStoreKey, and escaping it segment by segment decodes back to the same key.
func FuzzStorePath(f *testing.F) {
	for _, s := range []string{"a", "a/b", "%2e%2e", "..%2F", "a//b", "%00", "a%2fb", "sec%72et", "..", "a/./b", strings.Repeat("k", 257)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		key, err := decodeStoreKey(raw)
		if err != nil {
			return
		}
		if err := protocol.CheckStoreKey(key); err != nil {
			t.Fatalf("accepted %q as %q: %v", raw, key, err)
		}
		segs := strings.Split(key, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		again, err := decodeStoreKey(strings.Join(segs, "/"))
		if err != nil || again != key {
			t.Fatalf("%q → %q → %q, %v", raw, key, again, err)
		}
	})
}

// FuzzIfMatch parses arbitrary If-Match values. Invariant: an accepted value is a non-negative
// version whose decimal (or quoted decimal) form parses to itself.
func FuzzIfMatch(f *testing.F) {
	for _, s := range []string{"0", "5", `"5"`, `W/"5"`, "-1", "", `""`, "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		v, err := parseIfMatch(h)
		if err != nil || v == nil {
			return
		}
		if *v < 0 {
			t.Fatalf("%q → %d", h, *v)
		}
		for _, form := range []string{strconv.FormatInt(*v, 10), `"` + strconv.FormatInt(*v, 10) + `"`} {
			if w, err := parseIfMatch(form); err != nil || *w != *v {
				t.Fatalf("%q → %d, %q → %v %v", h, *v, form, w, err)
			}
		}
	})
}
