package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
