package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

func TestStoreCRUD(t *testing.T) {
	e := newEnv(t, nil)
	d := e.register()
	tok := e.token(d, "demo", "store")
	r := e.do("PUT", "/v1/store/history/2026-11-30", tok, `{"value":{"n":1}}`)
	if r.status != 200 || string(r.body) != `{"version":1}`+"\n" || r.header.Get("ETag") != `"1"` {
		t.Fatalf("put: %d %s %v", r.status, r.body, r.header)
	}
	e.clk.Add(time.Second)
	r = e.do("GET", "/v1/store/history/2026-11-30", tok, nil)
	want := `{"key":"history/2026-11-30","value":{"n":1},"version":1,"updatedAt":1796025600000}` + "\n"
	if r.status != 200 || string(r.body) != want {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	e.do("PUT", "/v1/store/history/2026-12-01", tok, `{"value":"x","ttlS":60}`)
	e.do("PUT", "/v1/store/prefs", tok, `{"value":true}`)
	r = e.do("GET", "/v1/store?prefix=history/", tok, nil)
	want = `{"items":[{"key":"history/2026-11-30","version":1,"updatedAt":1796025600000},{"key":"history/2026-12-01","version":2,"updatedAt":1796025601000}]}` + "\n"
	if string(r.body) != want {
		t.Errorf("list: %s", r.body)
	}
	r = e.do("GET", "/v1/store/history/2026-12-01", tok, nil)
	if !strings.Contains(string(r.body), `"expiresAt":1796025661000`) {
		t.Errorf("get with ttl: %s", r.body)
	}
	// Another plugin of the same device sees nothing.
	other := e.token(d, "other-plugin", "store")
	if r := e.do("GET", "/v1/store", other, nil); string(r.body) != `{"items":[]}`+"\n" {
		t.Errorf("other plugin: %s", r.body)
	}
	if r := e.do("DELETE", "/v1/store/prefs", tok, nil); r.status != 200 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/v1/store/prefs", tok, nil); r.status != 404 || r.code() != "not_found" {
		t.Errorf("delete twice: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/store/prefs", tok, nil); r.status != 404 {
		t.Errorf("get deleted: %d %s", r.status, r.body)
	}
	// A token without the store service is refused; no token is unauthorized.
	chOnly := e.token(d, "demo", "channels")
	if r := e.do("GET", "/v1/store", chOnly, nil); r.status != 403 ||
		string(r.body) != `{"error":{"code":"forbidden","message":"the token does not grant the store service"}}`+"\n" {
		t.Errorf("no service: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/store", "", nil); r.status != 401 {
		t.Errorf("no token: %d %s", r.status, r.body)
	}
}

func TestStoreIfMatchAndVersions(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "demo", "store")
	put := func(ifMatch, body string) resp {
		if ifMatch == "" {
			return e.do("PUT", "/v1/store/k", tok, body)
		}
		return e.do("PUT", "/v1/store/k", tok, body, "If-Match", ifMatch)
	}
	steps := []struct {
		ifMatch, body string
		status        int
		out           string
	}{
		{"0", `{"value":1}`, 200, `{"version":1}`},
		{"0", `{"value":1}`, 409, `{"error":{"code":"conflict","message":"\"k\" already exists (If-Match: 0)"}}`},
		{"2", `{"value":2}`, 409, `{"error":{"code":"conflict","message":"\"k\" is not at version 2"}}`},
		{"1", `{"value":2}`, 200, `{"version":2}`},
		{`"2"`, `{"value":3}`, 200, `{"version":3}`},
		{`W/"3"`, `{"value":3}`, 400, `{"error":{"code":"bad_request","message":"If-Match must be a version number"}}`},
		{"-1", `{"value":3}`, 400, `{"error":{"code":"bad_request","message":"If-Match must be a version number"}}`},
		{"", `{"value":4}`, 200, `{"version":4}`},
	}
	for i, s := range steps {
		r := put(s.ifMatch, s.body)
		if r.status != s.status || string(r.body) != s.out+"\n" {
			t.Errorf("step %d (If-Match %s): %d %s, want %d %s", i, s.ifMatch, r.status, r.body, s.status, s.out)
		}
	}
	// Versions never go backwards across delete…
	e.do("DELETE", "/v1/store/k", tok, nil)
	if r := put("0", `{"value":5}`); string(r.body) != `{"version":5}`+"\n" {
		t.Errorf("after delete: %s", r.body)
	}
	// …nor across expiry (swept or not).
	e.do("PUT", "/v1/store/k", tok, `{"value":6,"ttlS":1}`)
	e.clk.Add(2 * time.Second)
	if r := e.do("GET", "/v1/store/k", tok, nil); r.status != 404 {
		t.Errorf("expired value still readable: %d %s", r.status, r.body)
	}
	e.srv.Sweep(t.Context())
	if r := put("0", `{"value":7}`); string(r.body) != `{"version":7}`+"\n" {
		t.Errorf("after expiry: %s", r.body)
	}
}

func TestStoreIfMatchRace(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "demo", "store")
	e.do("PUT", "/v1/store/counter", tok, `{"value":0}`)
	for round := 0; round < 5; round++ {
		cur := fmt.Sprint(round + 1)
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = e.do("PUT", "/v1/store/counter", tok, fmt.Sprintf(`{"value":%d}`, i), "If-Match", cur).status
			}()
		}
		wg.Wait()
		if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
			t.Fatalf("round %d: statuses %v, want one 200 and one 409", round, statuses)
		}
	}
}

func TestStoreQuotas(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Limits = protocol.DefaultLimits()
		c.Limits.Store = protocol.StoreLimits{MaxBytes: 100, MaxKeys: 3, MaxValueBytes: 40}
	})
	tok := e.token(e.register(), "demo", "store")
	val := func(n int) string { return `{"value":"` + strings.Repeat("x", n-2) + `"}` } // n bytes of JSON value
	steps := []struct {
		key, body string
		status    int
		out       string
	}{
		{"a", val(41), 413, `{"error":{"code":"quota","message":"value is 41 bytes, the limit is 40"}}`},
		{"a", val(40), 200, `{"version":1}`},
		{"b", val(40), 200, `{"version":2}`},
		{"c", val(40), 413, `{"error":{"code":"quota","message":"the store is full: 100 bytes per plugin"}}`},
		{"c", val(10), 200, `{"version":3}`},
		{"d", val(1 + 1), 413, `{"error":{"code":"quota","message":"the store is full: 3 keys per plugin"}}`},
		{"a", val(30), 200, `{"version":4}`}, // replacing does not count the old value
	}
	for i, s := range steps {
		r := e.do("PUT", "/v1/store/"+s.key, tok, s.body)
		if r.status != s.status || string(r.body) != s.out+"\n" {
			t.Errorf("step %d: %d %s, want %d %s", i, r.status, r.body, s.status, s.out)
		}
	}
	big := `{"value":"` + strings.Repeat("x", 2000) + `"}`
	if r := e.do("PUT", "/v1/store/z", tok, big); r.status != 413 || r.code() != "payload_too_large" {
		t.Errorf("oversized body: %d %s", r.status, r.body)
	}
}

func TestStoreKeyTricks(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "demo", "store")
	e.do("PUT", "/v1/store/secret", tok, `{"value":1}`)
	tests := []struct{ path, msg string }{
		{"/v1/store/%2e%2e", `key: has a \"..\" segment`},
		{"/v1/store/a/%2e%2e/secret", `key: has a \"..\" segment`},
		{"/v1/store/a/../secret", `key: has a \"..\" segment`},
		{"/v1/store/./secret", `key: has a \".\" segment`},
		{"/v1/store/..%2Fsecret", `key: segment 1 contains an encoded '/'`},
		{"/v1/store/a%2fb", `key: segment 1 contains an encoded '/'`},
		{"/v1/store//secret", `key: has an empty segment`},
		{"/v1/store/a//b", `key: has an empty segment`},
		{"/v1/store/a/", `key: has an empty segment`},
		{"/v1/store/a%00b", `key: character '\\x00' at byte 1 is not allowed (A-Z a-z 0-9 . _ : / -)`},
		{"/v1/store/a%20b", `key: character ' ' at byte 1 is not allowed (A-Z a-z 0-9 . _ : / -)`},
		{"/v1/store/" + strings.Repeat("k", 257), `key: is 257 bytes, the limit is 256`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			for _, m := range []string{"GET", "PUT", "DELETE"} {
				var body any
				if m == "PUT" {
					body = `{"value":2}`
				}
				r := e.do(m, tc.path, tok, body)
				want := `{"error":{"code":"bad_request","message":"` + tc.msg + `"}}` + "\n"
				if r.status != 400 || string(r.body) != want {
					t.Errorf("%s: %d %s\nwant %s", m, r.status, r.body, want)
				}
			}
		})
	}
	if r := e.do("GET", "/v1/store/"+strings.Repeat("k", 256), tok, nil); r.status != 404 {
		t.Errorf("256-byte key: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/store/sec%72et", tok, nil); r.status != 200 {
		t.Errorf("encoded plain letter: %d %s", r.status, r.body)
	}
}

func TestStoreListCursor(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "demo", "store")
	for i := range storeListPage + 5 {
		e.do("PUT", fmt.Sprintf("/v1/store/k/%04d", i), tok, `{"value":0}`)
	}
	e.do("PUT", "/v1/store/k_other", tok, `{"value":0}`)
	var page protocol.StoreListResponse
	e.do("GET", "/v1/store?prefix=k/", tok, nil).into(t, &page)
	if len(page.Items) != storeListPage || page.Cursor == "" {
		t.Fatalf("first page: %d items, cursor %q", len(page.Items), page.Cursor)
	}
	var page2 protocol.StoreListResponse
	e.do("GET", "/v1/store?prefix=k/&cursor="+page.Cursor, tok, nil).into(t, &page2)
	if len(page2.Items) != 5 || page2.Cursor != "" || page2.Items[0].Key != "k/0200" {
		t.Fatalf("second page: %+v", page2)
	}
	if r := e.do("GET", "/v1/store?cursor=!!", tok, nil); r.status != 400 {
		t.Errorf("bad cursor: %d", r.status)
	}
}

func TestRequestsPerDevice(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.RequestsPerDevice = RatePolicy{Name: "requests", Quota: 2, Window: time.Minute} })
	d := e.register()
	tok := e.token(d, "demo", "store")
	other := e.token(d, "other", "store")
	e.do("GET", "/v1/store", tok, nil)
	if r := e.do("GET", "/v1/store", other, nil); r.status != 200 || r.header.Get("RateLimit") != `"requests";r=0;t=60` {
		t.Fatalf("second: %d %v", r.status, r.header)
	}
	r := e.do("GET", "/v1/store", tok, nil) // the limit is per device, across plugins
	if r.status != 429 || r.header.Get("Retry-After") != "60" ||
		string(r.body) != `{"error":{"code":"rate_limited","message":"over the requests rate limit: 2 per 60 s","retryAfterS":60}}`+"\n" {
		t.Errorf("third: %d %s %v", r.status, r.body, r.header)
	}
	e.clk.Add(time.Minute)
	if r := e.do("GET", "/v1/store", tok, nil); r.status != 200 {
		t.Errorf("next minute: %d", r.status)
	}
}
