package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
)

// TestToken: with Options.Token every route, the ones added with Handle
// too, needs the bearer token, and the Host check is off; without it the
// Host check stays.
func TestToken(t *testing.T) {
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, _ := host.New(db)
	const unauthorized = `{"error":{"code":"unauthorized","message":"send the token of harness serve as \"Authorization: Bearer TOKEN\""}}` + "\n"
	tests := []struct {
		name, token, path, host, auth string
		status                        int
		body                          string
	}{
		{"no token asked, loopback", "", "/v1/health", "127.0.0.1", "", 200, `{"ok":true}` + "\n"},
		{"no token asked, foreign host", "", "/v1/health", "evil.example", "", 403, ""},
		{"token missing", "T0k", "/v1/health", "127.0.0.1", "", 401, unauthorized},
		{"token wrong", "T0k", "/v1/plugins", "127.0.0.1", "Bearer T0kk", 401, unauthorized},
		{"token without scheme", "T0k", "/v1/plugins", "127.0.0.1", "T0k", 401, unauthorized},
		{"token on a Handle route", "T0k", "/x", "127.0.0.1", "Bearer nope", 401, unauthorized},
		{"token right", "T0k", "/v1/health", "127.0.0.1", "Bearer T0k", 200, `{"ok":true}` + "\n"},
		{"token right, foreign host", "T0k", "/x", "harness.example", "Bearer T0k", 200, "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(h, Options{Token: tc.token})
			s.Handle("GET /x", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") }))
			req := httptest.NewRequest("GET", "http://"+tc.host+tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tc.status || (tc.body != "" && rec.Body.String() != tc.body) {
				t.Errorf("%d %q; want %d %q", rec.Code, rec.Body.String(), tc.status, tc.body)
			}
			if got := rec.Header().Get("WWW-Authenticate"); (tc.status == 401) != (got != "") {
				t.Errorf("WWW-Authenticate %q", got)
			}
			if strings.Contains(rec.Body.String(), tc.token) && tc.token != "" && tc.status == 401 {
				t.Errorf("the reply shows the token: %s", rec.Body.String())
			}
		})
	}
}

// TestTokenBruteForce: a client guessing tokens gets FreeFailures quick
// 401s, then a lockout that doubles with each further wrong guess, during
// which every request from its address — the right token included, so a
// guess cannot be confirmed — is 429 without being compared. Another
// address is not affected; the right token after the lockout ends the
// count. The clock is the test's, and the checks are on counters.
func TestTokenBruteForce(t *testing.T) {
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, _ := host.New(db)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tok := GenerateToken()
	s := New(h, Options{Token: tok, Now: func() time.Time { return now }})
	try := func(from, auth string) (int, string) {
		req := httptest.NewRequest("GET", "http://127.0.0.1/v1/health", nil)
		req.RemoteAddr = from
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec.Code, rec.Header().Get("Retry-After")
	}
	const attacker, other = "192.0.2.1:40000", "198.51.100.7:5000"
	codes := map[int]int{}
	for i := range 1000 {
		code, _ := try(attacker, fmt.Sprintf("Bearer guess%d", i))
		codes[code]++
	}
	if codes[401] != FreeFailures+1 || codes[429] != 1000-FreeFailures-1 {
		t.Fatalf("1000 guesses: %v; want %d answered 401, the rest 429", codes, FreeFailures+1)
	}
	if st := s.AuthStats(); st.Failed != FreeFailures+1 || st.Throttled != 1000-FreeFailures-1 || st.Clients != 1 {
		t.Fatalf("stats %+v", st)
	}
	if code, ra := try(attacker, "Bearer "+tok); code != 429 || ra != "1" {
		t.Fatalf("the right token in the lockout: %d Retry-After %q; want 429 1", code, ra)
	}
	if code, _ := try(other, "Bearer "+tok); code != 200 {
		t.Fatalf("another address: %d", code)
	}
	if code, _ := try("[2001:db8::1]:1", "Bearer "+tok); code != 200 {
		t.Fatalf("an IPv6 address: %d", code)
	}
	// Each further wrong guess after a lockout doubles the next one.
	for _, want := range []string{"2", "4", "8", "16"} {
		now = now.Add(time.Minute)
		if code, ra := try(attacker, "Bearer wrong"); code != 401 || ra != want {
			t.Fatalf("after the lockout: %d Retry-After %q; want 401 %s", code, ra, want)
		}
	}
	now = now.Add(time.Minute)
	if code, _ := try(attacker, "Bearer "+tok); code != 200 {
		t.Fatalf("the right token after the lockout: %d", code)
	}
	if code, _ := try(attacker, "Bearer wrong"); code != 401 {
		t.Fatalf("the count starts again after a right token: %d", code)
	}
	if st := s.AuthStats(); st.Clients != 1 || st.Failed != FreeFailures+1+4+1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestCheckToken: the 128-bit rule, and GenerateToken's tokens pass it.
func TestCheckToken(t *testing.T) {
	tests := []struct {
		tok, err string
	}{
		{"qz", "the token has 2 characters; it needs at least 22"},
		{"", "the token has 0 characters"},
		{"aaaaaaaaaaaaaaaaaaaaa", "the token has 21 characters"},
		{"aaaaaaaaaaaaaaaaaaaaaa", ""},
		{"AZaz09-_AZaz09-_AZaz09", ""},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaa aaa", "character 27 is not one of"},
		{"aaaaaaaaaaaaaaaaaaaaaaaa+/", "character 25 is not one of"},
		{"密码密码密码密码密码密码密码密码", "character 1 is not one of"},
	}
	for _, tc := range tests {
		err := CheckToken(tc.tok)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("CheckToken(%q) = %v; want %q", tc.tok, err, tc.err)
		}
		if err != nil && len(tc.tok) > 3 && strings.Contains(err.Error(), tc.tok) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
	seen := map[string]bool{}
	for range 100 {
		g := GenerateToken()
		if err := CheckToken(g); err != nil || len(g) != 43 || seen[g] {
			t.Fatalf("GenerateToken() = %q: %v", g, err)
		}
		seen[g] = true
	}
}
