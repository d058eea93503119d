package cli

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
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
	// Every face's routes go through the one guard: the assistant's conversations, campus
	// sign-in and the web app's drawing are among the routes walked below.
	for _, want := range []string{"POST /v1/conversations/{id}/messages", "POST /v1/campus/login", "POST /v1/ui/draw", "POST /v1/ui/dashboard/events", "POST /v1/tools/{name}/call", "/mcp",
		"PUT /v1/model", "POST /v1/model/test", "POST /v1/remote-plugins/review", "POST /v1/remote-plugins"} {
		if !slices.Contains(routes, want) {
			t.Errorf("route %q is not among the guarded routes %v", want, routes)
		}
	}
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

// TestGetRoutesChangeNothing calls every GET route of `harness serve`, listed from the router,
// with real ids (the official shuttle plugin and its data source), and checks that no table
// but the audit log and the data-source cache (a data source runs a read tool as the user)
// gained, lost or changed a row, and that no reply carries a CORS header: a GET — the one
// request another page can make without a preflight — has no effect a page could use.
func TestGetRoutesChangeNothing(t *testing.T) {
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
	snapshot := func() map[string]string {
		rows, err := db.SQL.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('audit', 'datasource_cache', 'sqlite_sequence') ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			names = append(names, n)
		}
		rows.Close()
		out := map[string]string{}
		for _, n := range names {
			// Every row of the table, every column quoted: any change shows.
			cr, err := db.SQL.Query(`SELECT name FROM pragma_table_info(?)`, n)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for cr.Next() {
				var c string
				cr.Scan(&c)
				cols = append(cols, `quote("`+c+`")`)
			}
			cr.Close()
			var dump string
			q := `SELECT COALESCE(group_concat(` + strings.Join(cols, ` || ',' || `) + `, ';'), '') FROM "` + n + `"`
			if err := db.SQL.QueryRow(q).Scan(&dump); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			out[n] = dump
		}
		return out
	}
	values := map[string]string{"id": "shuttle", "source": "next", "service": "card", "name": "shuttle__next", "cid": "x", "turn": "x"}
	wild := regexp.MustCompile(`\{([^}.]*)(\.\.\.)?\}`)
	before := snapshot()
	gets := 0
	for _, pattern := range srv.Routes() {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok || method != "GET" {
			continue
		}
		gets++
		path = wild.ReplaceAllStringFunc(strings.TrimSuffix(path, "{$}"), func(m string) string {
			if v, ok := values[wild.FindStringSubmatch(m)[1]]; ok {
				return v
			}
			return "x"
		})
		for _, q := range []string{"", "?refresh=1"} {
			req, _ := http.NewRequest("GET", ts.URL+path+q, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			for k := range resp.Header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("GET %s: CORS header %s", path, k)
				}
			}
		}
	}
	if gets < 10 {
		t.Fatalf("only %d GET routes", gets)
	}
	after := snapshot()
	for n, b := range before {
		if after[n] != b {
			t.Errorf("GET routes changed table %s", n)
		}
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			t.Errorf("GET routes created table %s", n)
		}
	}
}
