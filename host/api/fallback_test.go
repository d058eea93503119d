package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
)

// TestFallbackJSON: what no route takes, whatever the path or method, answers the documented
// JSON error shape — 404 not_found, or 405 method_not_allowed with Allow listing the methods
// the path does take (a route added with Handle too) — never net/http's plain text.
func TestFallbackJSON(t *testing.T) {
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, _ := host.New(db)
	s := New(h, Options{})
	s.HandleFunc("GET /v1/extra", func(w http.ResponseWriter, r *http.Request) error { return nil })
	tests := []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/v1/nope", 404, "not_found", ""},
		{"GET", "/", 404, "not_found", ""},
		{"GET", "/v1/plugins/a/b/c/d", 404, "not_found", ""},
		{"GET", "/v1/%2e%2e/etc/passwd", 404, "not_found", ""},
		{"DELETE", "/v1/health", 405, "method_not_allowed", "GET, HEAD"},
		{"OPTIONS", "/v1/health", 405, "method_not_allowed", "GET, HEAD"},
		{"GET", "/v1/tools/x/call", 405, "method_not_allowed", "POST"},
		{"PATCH", "/v1/plugins/notes", 405, "method_not_allowed", "GET, HEAD, DELETE"},
		{"PUT", "/v1/plugins", 405, "method_not_allowed", "GET, HEAD, POST"},
		{"POST", "/v1/extra", 405, "method_not_allowed", "GET, HEAD"},
		{"BREW", "/v1/audit", 405, "method_not_allowed", "GET, HEAD"},
		{"GET", "/v1/plugins/x/rollforward", 405, "method_not_allowed", "POST"},
		{"DELETE", "/v1/plugins/x/versions", 405, "method_not_allowed", "GET, HEAD"},
		// The version routes themselves, for a plugin that is not there (or a path trick).
		{"GET", "/v1/plugins/nope/versions", 404, "not_found", ""},
		{"POST", "/v1/plugins/nope/rollforward", 404, "not_found", ""},
		{"GET", "/v1/plugins/..%2f..%2fetc/versions", 404, "not_found", ""},
		{"GET", "/v1/plugins/%00/versions", 404, "not_found", ""},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(tc.method, "http://127.0.0.1:8788"+tc.path, nil)
		if tc.method != "GET" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != tc.status || body.Error.Code != tc.code ||
			body.Error.Message == "" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d %s %q (%v); want %d %s", tc.method, tc.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), err, tc.status, tc.code)
		}
		if got := rec.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
}
