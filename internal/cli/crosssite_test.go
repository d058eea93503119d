package cli

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/api"
)

// TestCrossSiteEveryRoute replays what a browser sends when another web
// page posts to the host — the four "simple request" shapes that need no
// CORS preflight (no body, text/plain, a form, multipart), with and without
// the Origin and Sec-Fetch-Site headers a browser adds — against every
// state-changing route of `harness serve`, listed from the router itself
// (api.Server.Routes), so a route added later is covered too. Every one
// must be refused before its handler runs: 403 when the page is named by
// Origin or Sec-Fetch-Site, else 415. No reply carries a CORS header. A
// JSON request of the host's own origin gets past the guard (the test can
// fail).
func TestCrossSiteEveryRoute(t *testing.T) {
	t.Setenv(MCPTokenEnv, "")
	hf := hostFlags{data: t.TempDir()}
	ctx := context.Background()
	h, db, err := openHost(ctx, &hf)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := serveAPI(ctx, h, api.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	self := ts.URL

	type shape struct {
		name, ctype, body string
	}
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("actor", "user")
	mw.Close()
	shapes := []shape{
		{"no body", "", ""},
		{"text/plain", "text/plain;charset=UTF-8", `{"actor":"user","input":{}}`},
		{"form", "application/x-www-form-urlencoded", "actor=user&approve=true"},
		{"multipart", mw.FormDataContentType(), mp.String()},
	}
	type page struct {
		name   string
		hdr    map[string]string
		status int
	}
	pages := []page{
		{"no Origin (an old browser)", nil, http.StatusUnsupportedMediaType},
		{"Origin evil", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"Origin null", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"Origin other port", map[string]string{"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"Sec-Fetch-Site only", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	}
	wild := regexp.MustCompile(`\{[^}]*\}`)
	routes := srv.Routes()
	changing := 0
	for _, pattern := range routes {
		method, path, ok := strings.Cut(pattern, " ")
		methods := []string{method}
		if !ok {
			path, methods = pattern, []string{"POST", "PUT", "PATCH", "DELETE"}
		}
		path = wild.ReplaceAllString(strings.TrimSuffix(path, "{$}"), "x")
		for _, m := range methods {
			if m == "GET" || m == "HEAD" {
				continue
			}
			changing++
			for _, pg := range pages {
				for _, sh := range shapes {
					req, _ := http.NewRequest(m, self+path, strings.NewReader(sh.body))
					if sh.ctype != "" {
						req.Header.Set("Content-Type", sh.ctype)
					}
					for k, v := range pg.hdr {
						req.Header.Set(k, v)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != pg.status {
						t.Errorf("%s %s, %s, %s: %d %s; want %d", m, path, pg.name, sh.name, resp.StatusCode, b, pg.status)
					}
					for k := range resp.Header {
						if strings.HasPrefix(strings.ToLower(k), "access-control-") {
							t.Errorf("%s %s: CORS header %s", m, path, k)
						}
					}
				}
			}
			// The same route with JSON from its own origin gets past the guard.
			req, _ := http.NewRequest(m, self+path, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "Application/JSON; charset=utf-8")
			req.Header.Set("Origin", self)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusForbidden && strings.Contains(string(b), "cross_site") || resp.StatusCode == http.StatusUnsupportedMediaType {
				t.Errorf("%s %s from its own origin with JSON: %d %s", m, path, resp.StatusCode, b)
			}
		}
	}
	if changing < 15 {
		t.Fatalf("only %d state-changing routes found in %v", changing, routes)
	}
	// A preflight gets no CORS header either, so the browser sends nothing.
	req, _ := http.NewRequest("OPTIONS", self+"/v1/tools/x__y/call", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" || resp.StatusCode < 400 {
		t.Errorf("preflight: %d, Access-Control-Allow-Origin %q", resp.StatusCode, v)
	}
}
