package server

import (
	"fmt"
	"testing"
)

// TestStoreTTLOverflow: a ttlS so large that now + ttlS·1000 overflows int64 is refused 400; it
// was accepted and stored a value that was already expired (a 200 for a write that kept
// nothing, and a row that escapes the live count until the sweep).
func TestStoreTTLOverflow(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "demo", "store")
	for _, ttl := range []string{"9223372036854775807", "9223372036854775", "9223372036854776"} {
		r := e.do("PUT", "/v1/store/k", tok, fmt.Sprintf(`{"value":1,"ttlS":%s}`, ttl))
		if r.status != 400 || r.code() != "bad_request" {
			t.Errorf("ttlS %s: %d %s, want 400 bad_request", ttl, r.status, r.body)
		}
	}
	// The longest TTL that is still taken is kept and readable.
	if r := e.do("PUT", "/v1/store/k", tok, `{"value":1,"ttlS":3153600000}`); r.status != 200 {
		t.Fatalf("ttlS of 100 years: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/store/k", tok, nil); r.status != 200 {
		t.Errorf("get after a long ttlS: %d %s", r.status, r.body)
	}
}
