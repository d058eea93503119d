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

// TestGuard: the content-type and origin rules of every state change, as an
// attacker's page and as honest clients send them. The route answers 200
// "ran" when the guard lets the request through.
func TestGuard(t *testing.T) {
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, _ := host.New(db)
	s := New(h, Options{})
	ran := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ran") })
	s.Handle("POST /x", ran)
	s.Handle("GET /x", ran)
	s.HandleProtocol("/p", "Mcp-Session-Id", ran)
	tests := []struct {
		name, method, path, ctype, body string
		hdr                             map[string]string
		status                          int
	}{
		{"json", "POST", "/x", "application/json", "{}", nil, 200},
		{"json, empty body", "POST", "/x", "application/json", "", nil, 200},
		{"json upper case, parameters", "POST", "/x", "APPLICATION/JSON; charset=UTF-8", "{}", nil, 200},
		{"json, own origin", "POST", "/x", "application/json", "{}", map[string]string{"Origin": "http://127.0.0.1:8788", "Sec-Fetch-Site": "same-origin"}, 200},
		{"no content type, empty body", "POST", "/x", "", "", nil, 415},
		{"text/plain", "POST", "/x", "text/plain", "{}", nil, 415},
		{"json lookalike", "POST", "/x", "application/jsonx", "{}", nil, 415},
		{"json in a parameter", "POST", "/x", "text/plain; a=application/json", "{}", nil, 415},
		{"malformed media type", "POST", "/x", "application/json;;;=", "{}", nil, 415},
		{"form", "POST", "/x", "application/x-www-form-urlencoded", "a=1", nil, 415},
		{"json, foreign origin", "POST", "/x", "application/json", "{}", map[string]string{"Origin": "https://evil.example"}, 403},
		{"json, origin of another port", "POST", "/x", "application/json", "{}", map[string]string{"Origin": "http://127.0.0.1:9999"}, 403},
		{"json, https origin of the same host", "POST", "/x", "application/json", "{}", map[string]string{"Origin": "https://127.0.0.1:8788"}, 403},
		{"json, null origin", "POST", "/x", "application/json", "{}", map[string]string{"Origin": "null"}, 403},
		{"json, Sec-Fetch-Site same-site", "POST", "/x", "application/json", "{}", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"GET cross-site", "GET", "/x", "", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"GET foreign origin", "GET", "/x", "", "", map[string]string{"Origin": "https://evil.example"}, 403},
		{"GET plain", "GET", "/x", "", "", nil, 200},
		{"GET typed by the user", "GET", "/x", "", "", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"protocol DELETE with its header", "DELETE", "/p", "", "", map[string]string{"Mcp-Session-Id": "s1"}, 200},
		{"protocol DELETE without its header", "DELETE", "/p", "", "", nil, 415},
		{"protocol DELETE with a body", "DELETE", "/p", "", "x", map[string]string{"Mcp-Session-Id": "s1"}, 415},
		{"protocol DELETE cross-site", "DELETE", "/p", "", "", map[string]string{"Mcp-Session-Id": "s1", "Origin": "https://evil.example"}, 403},
		{"protocol POST text/plain", "POST", "/p", "text/plain", "{}", nil, 415},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1:8788"+tc.path, strings.NewReader(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Errorf("%d %s; want %d", rec.Code, rec.Body.String(), tc.status)
			}
			if tc.status != 200 && rec.Body.String() == "ran" {
				t.Error("the handler ran")
			}
			if rec.Header().Get("Access-Control-Allow-Origin") != "" {
				t.Error("a CORS header was sent")
			}
		})
	}
	if got := s.Routes(); len(got) < 20 || got[len(got)-1] != "/p" {
		t.Errorf("Routes() = %v", got)
	}
}
