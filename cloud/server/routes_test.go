package server

import (
	"strings"
	"testing"
)

// TestUnknownRoutesAndMethods: every /v1 answer to a path or method no route takes is the
// protocol's JSON error (404 not_found, 400 bad_request with a sorted Allow for a wrong method), and media types are
// compared without regard to case (RFC 9110 §8.3.1).
func TestUnknownRoutesAndMethods(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "demo", "store", "channels")
	tests := []struct {
		name, method, path string
		hdr                []string
		body               any
		status             int
		out, allow         string
	}{
		{"unknown /v1 path", "GET", "/v1/nope", nil, nil, 404, `{"error":{"code":"not_found","message":"no such endpoint: /v1/nope"}}`, ""},
		{"unknown root path", "GET", "/etc/passwd", nil, nil, 404, `{"error":{"code":"not_found","message":"no such endpoint: /etc/passwd"}}`, ""},
		{"too deep", "GET", "/v1/meta/x", nil, nil, 404, "", ""},
		{"wrong method on meta", "POST", "/v1/meta", nil, nil, 400, `{"error":{"code":"bad_request","message":"method POST is not allowed here"}}`, "GET, HEAD"},
		{"wrong method on a store key", "POST", "/v1/store/k", nil, nil, 400, "", "DELETE, GET, HEAD, PUT"},
		{"wrong method on a channel", "GET", "/v1/channels/abc", nil, nil, 400, "", "DELETE, PATCH"},
		{"odd method", "BREW", "/v1/devices", nil, nil, 400, "", "POST"},
		{"upper-case media type", "PUT", "/v1/store/k", []string{"Content-Type", "APPLICATION/JSON"}, `{"value":{}}`, 0, "", ""},
		{"media type with parameters", "PUT", "/v1/store/k2", []string{"Content-Type", "Application/Json; Charset=UTF-8"}, `{"value":{}}`, 0, "", ""},
		{"a look-alike media type", "PUT", "/v1/store/k3", []string{"Content-Type", "application/jsonp"}, `{"value":{}}`, 400, `{"error":{"code":"bad_request","message":"Content-Type must be application/json"}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tok, tc.body, tc.hdr...)
			if tc.status == 0 { // accepted: not a content-type refusal
				if r.status == 415 || strings.Contains(string(r.body), "Content-Type") {
					t.Errorf("%d %s", r.status, r.body)
				}
				return
			}
			if r.status != tc.status || (tc.out != "" && string(r.body) != tc.out+"\n") || r.code() == "" {
				t.Errorf("%d %s\nwant %d %s", r.status, r.body, tc.status, tc.out)
			}
			if got := r.header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
}
