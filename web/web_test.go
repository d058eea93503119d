package web

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/i18n"
)

// TestBuildIsFresh fails when a source changed without `npm run build`: build.mjs records the
// SHA-256 of every input in testdata/sources.sha256 next to the dist/ it wrote.
func TestBuildIsFresh(t *testing.T) {
	list, err := os.ReadFile("testdata/sources.sha256")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(list)), "\n")
	if len(lines) < 8 {
		t.Fatalf("testdata/sources.sha256 lists %d inputs", len(lines))
	}
	listed := map[string]bool{}
	for _, l := range lines {
		want, p, ok := strings.Cut(l, "  ")
		if !ok {
			t.Fatalf("bad line %q", l)
		}
		listed[p] = true
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
			t.Errorf("%s changed since the last build: run `npm ci && npm run build` in web/", p)
		}
	}
	filepath.Walk("src", func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && !listed[p] {
			t.Errorf("%s is not an input of the last build: run npm run build", p)
		}
		return nil
	})
}

// TestStrings fails when a string is missing in zh-Hans or English, is empty, or when the code
// asks for a key neither table has.
func TestStrings(t *testing.T) {
	read := func(p string) map[string]string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return m
	}
	zh, en := read("src/strings/zh-Hans.json"), read("src/strings/en.json")
	for k, v := range zh {
		if _, ok := en[k]; !ok {
			t.Errorf("en.json lacks %q", k)
		}
		if strings.TrimSpace(v) == "" {
			t.Errorf("zh-Hans.json: %q is empty", k)
		}
	}
	for k, v := range en {
		if _, ok := zh[k]; !ok {
			t.Errorf("zh-Hans.json lacks %q", k)
		}
		if strings.TrimSpace(v) == "" {
			t.Errorf("en.json: %q is empty", k)
		}
	}
	use := regexp.MustCompile(`\b(?:t|QRError)\('([a-zA-Z]+\.[a-zA-Z.]+|[a-zA-Z]+)'`)
	prefix := regexp.MustCompile(`'((?:size|mode|effect|type)\.)' *\+`)
	files, _ := filepath.Glob("src/*.ts*")
	var used []string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range use.FindAllStringSubmatch(string(b), -1) {
			used = append(used, m[1])
		}
		for _, m := range prefix.FindAllStringSubmatch(string(b), -1) {
			found := false
			for k := range zh {
				found = found || strings.HasPrefix(k, m[1])
			}
			if !found {
				t.Errorf("%s: no keys start with %s", f, m[1])
			}
		}
	}
	sort.Strings(used)
	if len(used) < 50 {
		t.Fatalf("found only %d uses of t(): is the pattern right?", len(used))
	}
	for _, k := range used {
		if _, ok := zh[k]; !ok {
			t.Errorf("the code uses %q, which the strings lack", k)
		}
	}
}

// TestHandler checks the page and assets: every app route answers the page, assets carry the
// strict CSP, the page has no inline script or style, a missing asset is 404, and gzip is used
// when accepted.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	get := func(p string, hdr ...string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	for _, p := range []string{"/", "/chat", "/plugins/shuttle", "/p/focus/main", "/settings"} {
		resp, body := get(p)
		if resp.StatusCode != 200 || !strings.Contains(body, `<div id="app">`) {
			t.Errorf("GET %s: %d %.60q", p, resp.StatusCode, body)
		}
		if resp.Header.Get("Content-Security-Policy") != CSP || !strings.Contains(CSP, "default-src 'self'") {
			t.Errorf("GET %s: CSP %q", p, resp.Header.Get("Content-Security-Policy"))
		}
		if regexp.MustCompile(`<script>|<script [^>]*>[^<]+</script>`).MatchString(body) || !strings.Contains(body, `<script type="module" src="/assets/app.js">`) {
			t.Errorf("GET %s: inline script", p)
		}
		if strings.Contains(body, "<style") || strings.Contains(body, " style=") || strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("GET %s: inline style or another origin in the page", p)
		}
	}
	resp, body := get("/assets/app.js", "Accept-Encoding", "gzip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("app.js: %d %v", resp.StatusCode, resp.Header)
	}
	if len(body) > 150<<10 {
		t.Errorf("app.js is %d bytes compressed; the budget is 150 KB", len(body))
	}
	if resp, _ := get("/assets/../web.go"); resp.StatusCode != 404 {
		t.Errorf("/assets/../web.go: %d", resp.StatusCode)
	}
	if resp, _ := get("/assets/nope.js"); resp.StatusCode != 404 {
		t.Errorf("/assets/nope.js: %d", resp.StatusCode)
	}
}

// TestDrawRoute draws the shuttle widget through POST /v1/ui/draw and tries the route as an
// attacker would: another origin, a form post, a write tool as a binding, a document that is
// not genui, unknown fields, and a plugin that is not installed.
func TestDrawRoute(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := host.New(db)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := h.Review(ctx, "../plugins/shuttle")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, "../plugins/shuttle", rv.Hash); err != nil {
		t.Fatal(err)
	}
	srv := api.New(h, api.Options{})
	Routes(srv, h)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	post := func(body string, hdr ...string) (int, string) {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/ui/draw", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	cases := []struct {
		name, body string
		hdr        []string
		status     int
		want       string
	}{
		{"widget zh", `{"plugin":"shuttle","widget":"next","size":"md"}`, nil, 200, `"title":"下一班校车"`},
		{"widget sizes", `{"plugin":"shuttle","widget":"next","size":"sm"}`, nil, 200, `"sizes":["sm","md","lg"]`},
		{"widget en", `{"plugin":"shuttle","widget":"next","size":"lg","locale":"en"}`, nil, 200, `"title":"Next shuttle"`},
		{"read time", `{"plugin":"shuttle","widget":"next","locale":"en"}`, nil, 200, `"updated":"` + i18n.FormatClock(time.Now()) + `"`},
		{"widget resolves templates", `{"plugin":"shuttle","widget":"next"}`, nil, 200, `"dividers":true,"type":"List"`},
		{"other origin", `{"plugin":"shuttle","widget":"next"}`, []string{"Origin", "https://evil.example"}, 403, "cross_site"},
		{"form post", `{"plugin":"shuttle","widget":"next"}`, []string{"Content-Type", "text/plain"}, 415, "bad_content_type"},
		{"unknown field", `{"plugin":"shuttle","widget":"next","run":"rm"}`, nil, 400, "unknown field"},
		{"two documents", `{"plugin":"shuttle","widget":"next","screen":"x"}`, nil, 400, "one of"},
		{"bad size", `{"plugin":"shuttle","widget":"next","size":"xl"}`, nil, 400, "size"},
		{"no such widget", `{"plugin":"shuttle","widget":"nope"}`, nil, 404, "no widget"},
		{"not installed", `{"plugin":"ghost","widget":"x"}`, nil, 404, "ghost"},
		{"inline not genui", `{"document":{"ui":1,"kind":"screen","title":"x","root":{"type":"Script","src":"x"}}}`, nil, 400, "Script"},
		{"inline reads a plugin", `{"document":{"ui":1,"kind":"screen","title":"x","data":{"a":{"source":"next"}},"root":{"type":"Text","text":"${data.a}"}}}`, nil, 400, ""},
		{"inline ok", `{"document":{"ui":1,"kind":"screen","title":"表","root":{"type":"Button","text":"记","action":{"tool":"notes__add","args":{"text":"x"},"confirm":"记下?"}}}}`, nil, 200, `"args":{"text":"x"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(tc.body, tc.hdr...)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s; want %d with %q", status, body, tc.status, tc.want)
			}
		})
	}
}

// TestDrawUserOnlyBinding: a plugin's screen may read with a userOnly read tool (card-share's
// link, for its QR code); a card bound to that tool, or an inline document naming it, may not.
func TestDrawUserOnlyBinding(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := host.New(db, builtin.Option(builtin.All()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	srv := api.New(h, api.Options{})
	Routes(srv, h)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for _, tc := range []struct{ name, body, want string }{
		{"screen", `{"plugin":"card-share","screen":"main"}`, `"state":"ok"`},
		{"card on the link tool", `{"tool":"card-share.link","document":{"ui":1,"kind":"widget","title":"x","description":"d","i18n":{"en":{"title":"x"}},"data":{"tool":{"source":"tool"}},"root":{"type":"QRCode","value":"${data.tool.link}"}}}`, `not userOnly`},
		{"inline document", `{"plugin":"card-share","document":{"ui":1,"kind":"screen","title":"x","data":{"l":{"tool":"link"}},"root":{"type":"QRCode","value":"${data.l.link}"}}}`, `unknown tool \"link\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(ts.URL+"/v1/ui/draw", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("%d %s; want %q", resp.StatusCode, b, tc.want)
			}
		})
	}
}
