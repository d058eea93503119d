package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/agent"
	"github.com/pkuinfo/harness/agent/mock"
	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/store"
)

// settingsServer is harness serve's API on a fresh data directory.
func settingsServer(t *testing.T) (*httptest.Server, *api.Server, *store.DB) {
	t.Helper()
	t.Setenv(MCPTokenEnv, "")
	t.Setenv("HARNESS_KEYRING", "off")
	for _, k := range []string{agent.EnvBaseURL, agent.EnvAPIKey, agent.EnvModel} {
		t.Setenv(k, "")
	}
	hf := hostFlags{data: filepath.Join(t.TempDir(), "data")}
	ctx := context.Background()
	h, db, err := openHost(ctx, &hf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv, err := serveAPI(ctx, h, api.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts, srv, db
}

// call sends a JSON request as the web app does and returns the status and the body.
func call(t *testing.T, ts *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if method != "GET" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Origin", ts.URL)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// provider is a stand-in model service that records the Authorization headers it gets; with
// echo it answers every request 401 with the header in its message, as a careless service might.
type provider struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newProvider(t *testing.T, echo bool) *provider {
	p := &provider{}
	m := mock.New(mock.Options{})
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.auth = append(p.auth, r.Header.Get("Authorization"))
		p.mu.Unlock()
		if echo {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + r.Header.Get("Authorization")}})
			return
		}
		m.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *provider) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.auth...)
}

const secretKey = "sk-attacker-wants-this-0123456789abcd"

// secretsNowhere fails when any GET route of srv, the data directory's files or the database
// holds one of the secrets in clear.
func secretsNowhere(t *testing.T, ts *httptest.Server, srv *api.Server, db *store.DB, secrets ...string) {
	t.Helper()
	wild := regexp.MustCompile(`\{([^}.]*)(\.\.\.)?\}`)
	for _, pattern := range srv.Routes() {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok || method != "GET" {
			continue
		}
		path = wild.ReplaceAllString(strings.TrimSuffix(path, "{$}"), "mcp-demo-canteen")
		_, body := call(t, ts, "GET", path, "")
		for _, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("GET %s returns a secret: %s", path, body)
			}
		}
	}
	db.SQL.Exec(`PRAGMA wal_checkpoint(FULL)`)
	filepath.WalkDir(filepath.Dir(db.Dir()), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds a secret in clear", p)
			}
		}
		return nil
	})
}

func TestModelRoutes(t *testing.T) {
	ts, srv, db := settingsServer(t)
	good := newProvider(t, false)

	// Nothing set yet.
	st, body := call(t, ts, "GET", "/v1/model", "")
	if st != 200 || !strings.Contains(body, `"set":false`) {
		t.Fatalf("GET /v1/model: %d %s", st, body)
	}
	st, body = call(t, ts, "GET", "/v1/model/presets", "")
	if st != 200 || !strings.Contains(body, `"name":"deepseek"`) || !strings.Contains(body, `"name":"mock"`) {
		t.Fatalf("presets: %d %s", st, body)
	}

	// Bad input: a clear error naming the field, and nothing written.
	for _, tc := range []struct{ body, field string }{
		{`{"preset":"nope"}`, "preset"},
		{`{"baseURL":"ftp://x","model":"m"}`, "baseURL"},
		{`{"baseURL":"https://u:p@example.org/v1","model":"m"}`, "baseURL"},
		{`{"baseURL":"https://example.org/v1"}`, "model"},
		{`{"preset":"mock","apiKey":"two words"}`, "apiKey"},
		{`{"preset":"mock","apiKey":"` + strings.Repeat("k", MaxKeyLen+1) + `"}`, "apiKey"},
		{`{"preset":"mock","key":"x"}`, ""},
		{`{"preset":"mock"} {"preset":"mock"}`, ""},
	} {
		st, body := call(t, ts, "PUT", "/v1/model", tc.body)
		if st != 400 || (tc.field != "" && !strings.Contains(body, `"field":"`+tc.field+`"`)) {
			t.Errorf("PUT %.60s: %d %s", tc.body, st, body)
		}
	}
	if _, err := os.Stat(filepath.Join(db.Dir(), agent.ConfigFile)); err == nil {
		t.Fatal("a refused PUT wrote model.json")
	}

	// Set the provider with a key: the answer shows only that it is set and its last four.
	st, body = call(t, ts, "PUT", "/v1/model", `{"preset":"mock","baseURL":"`+good.URL+`/v1","apiKey":"`+secretKey+`"}`)
	if st != 200 || !strings.Contains(body, `"set":true`) || !strings.Contains(body, `"hint":"…abcd"`) || !strings.Contains(body, `"model":"mock-agent"`) {
		t.Fatalf("PUT: %d %s", st, body)
	}
	if strings.Contains(body, secretKey) {
		t.Fatalf("PUT answers the key: %s", body)
	}

	// Test connection: a real request that carries the key to its own service.
	st, body = call(t, ts, "POST", "/v1/model/test", `{}`)
	if st != 200 || !strings.Contains(body, `"ok":true`) || !strings.Contains(body, `"modelListed":true`) {
		t.Fatalf("test: %d %s", st, body)
	}
	if g := good.got(); len(g) == 0 || g[len(g)-1] != "Bearer "+secretKey {
		t.Errorf("the provider got %q", g)
	}

	// A test against another service never carries the stored key there.
	evil := newProvider(t, false)
	st, body = call(t, ts, "POST", "/v1/model/test", `{"baseURL":"`+strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)+`/v1"}`)
	if st != 200 || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("test elsewhere: %d %s", st, body)
	}
	for _, a := range evil.got() {
		if strings.Contains(a, secretKey) {
			t.Errorf("the stored key went to another service: %q", a)
		}
	}

	// A service that echoes the key in its error: the answer has the key cut out.
	echo := newProvider(t, true)
	st, body = call(t, ts, "POST", "/v1/model/test", `{"baseURL":"`+echo.URL+`/v1","apiKey":"`+secretKey+`"}`)
	if st != 200 || !strings.Contains(body, `"ok":false`) || !strings.Contains(body, "401") || strings.Contains(body, secretKey) {
		t.Errorf("echoing provider: %d %s", st, body)
	}

	secretsNowhere(t, ts, srv, db, secretKey)

	// Another web page cannot even read the settings (nor, without a preflight the API never
	// answers, change them: TestCrossSiteEveryRoute).
	for _, path := range []string{"/v1/model", "/v1/model/presets", "/v1/remote-plugins"} {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(b), "baseURL") {
			t.Errorf("cross-site GET %s: %d %s", path, resp.StatusCode, b)
		}
	}

	// The key is sealed at rest: model.key holds no key, but the host reads it back.
	b, _ := os.ReadFile(filepath.Join(db.Dir(), agent.KeyFile))
	if !strings.HasPrefix(string(b), "sealed:") {
		t.Errorf("model.key: %q", b)
	}
	c, _, err := agent.LoadConfig(db.Dir(), nil)
	if err != nil || c.APIKey != secretKey {
		t.Errorf("LoadConfig: %q %v", c.APIKey, err)
	}

	// Moving to another service without a new key drops the old one instead of sending it there.
	st, body = call(t, ts, "PUT", "/v1/model", `{"preset":"deepseek"}`)
	if st != 200 || !strings.Contains(body, `"keyDropped":true`) || !strings.Contains(body, `"set":false`) || !strings.Contains(body, `"preset":"deepseek"`) {
		t.Errorf("PUT another service: %d %s", st, body)
	}
	// And "" removes a key on purpose.
	call(t, ts, "PUT", "/v1/model", `{"preset":"mock","baseURL":"`+good.URL+`/v1","apiKey":"`+secretKey+`"}`)
	st, body = call(t, ts, "PUT", "/v1/model", `{"apiKey":""}`)
	if st != 200 || !strings.Contains(body, `"set":false`) {
		t.Errorf("PUT remove key: %d %s", st, body)
	}
}

// TestModelChangeReachesServe: a provider chosen through PUT /v1/model answers the next turn of
// the running serve's assistant, with no restart.
func TestModelChangeReachesServe(t *testing.T) {
	ts, _, _ := settingsServer(t)
	st, body := call(t, ts, "POST", "/v1/conversations", `{}`)
	if st >= 300 {
		t.Fatalf("conversation: %d %s", st, body)
	}
	var conv struct{ ID string }
	json.Unmarshal([]byte(body), &conv)
	turn := func() string {
		_, b := call(t, ts, "POST", "/v1/conversations/"+conv.ID+"/messages", `{"text":"下一班校车什么时候"}`)
		return b
	}
	if b := turn(); !strings.Contains(b, "no model is configured") {
		t.Fatalf("turn without a model: %s", b)
	}
	p := newProvider(t, false)
	if st, body := call(t, ts, "PUT", "/v1/model", `{"preset":"mock","baseURL":"`+p.URL+`/v1"}`); st != 200 {
		t.Fatalf("PUT: %d %s", st, body)
	}
	if b := turn(); !strings.Contains(b, "shuttle__next") || len(p.got()) == 0 {
		t.Fatalf("turn after the change: %s", b)
	}
}

func TestRemotePluginRoutes(t *testing.T) {
	ts, srv, db := settingsServer(t)
	const tok = "canteen-token-0123456789-secret"
	demo := httptest.NewServer(canteen.Handler(tok))
	defer demo.Close()
	u := demo.URL + "/mcp"

	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/remote-plugins/review", `{}`, 400, `"field":"url"`},
		{"/v1/remote-plugins/review", `{"url":"http://example.org/mcp"}`, 400, `"field":"url"`},
		{"/v1/remote-plugins/review", `{"url":"` + u + `","token":"a b"}`, 400, `"field":"token"`},
		{"/v1/remote-plugins/review", `{"url":"` + u + `","hash":"sha256:x"}`, 400, `"field":"hash"`},
		{"/v1/remote-plugins/review", `{"url":"` + u + `"}`, 502, `"code":"token_required"`},
		{"/v1/remote-plugins/review", `{"url":"` + u + `","token":"wrong-token"}`, 502, `"code":"token_refused"`},
		{"/v1/remote-plugins", `{"url":"` + u + `","token":"` + tok + `"}`, 400, `"field":"hash"`},
		{"/v1/remote-plugins", `{"url":"` + u + `","token":"` + tok + `","hash":"sha256:0000"}`, 409, "changed its tools"},
	} {
		st, body := call(t, ts, "POST", tc.path, tc.body)
		if st != tc.status || !strings.Contains(body, tc.want) || strings.Contains(body, tok) {
			t.Errorf("POST %s %s: %d %s; want %d with %q", tc.path, tc.body, st, body, tc.status, tc.want)
		}
	}
	if _, body := call(t, ts, "GET", "/v1/remote-plugins", ""); strings.Contains(body, "demo-canteen") {
		t.Fatalf("added before its review: %s", body)
	}

	st, body := call(t, ts, "POST", "/v1/remote-plugins/review", `{"url":"`+u+`","token":"`+tok+`"}`)
	var sheet remoteSheet
	json.Unmarshal([]byte(body), &sheet)
	if st != 200 || sheet.ID != "mcp-demo-canteen" || !sheet.HasToken || !strings.HasPrefix(sheet.Hash, "sha256:") || strings.Contains(body, tok) {
		t.Fatalf("review: %d %s", st, body)
	}
	effects := map[string]string{}
	for _, tl := range sheet.Tools {
		effects[tl.Name] = tl.Effect + "/" + tl.Mode
	}
	if effects["menu"] != "read/auto" || effects["reserveSeat"] != "write/ask" {
		t.Errorf("the sheet's tools: %v", effects)
	}

	st, body = call(t, ts, "POST", "/v1/remote-plugins", `{"url":"`+u+`","token":"`+tok+`","hash":"`+sheet.Hash+`"}`)
	if st != 201 || !strings.Contains(body, `"id":"mcp-demo-canteen"`) || !strings.Contains(body, `"hasToken":true`) {
		t.Fatalf("add: %d %s", st, body)
	}
	// The token works from its sealed copy: the remote menu tool answers through Host.Call.
	st, body = call(t, ts, "POST", "/v1/tools/mcp-demo-canteen__menu/call", `{"actor":"user","input":{"canteen":"家园"}}`)
	if st != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("menu: %d %s", st, body)
	}
	if st, body := call(t, ts, "POST", "/v1/remote-plugins/review", `{"url":"`+u+`","token":"`+tok+`"}`); st != 409 {
		t.Errorf("review of an installed plugin: %d %s", st, body)
	}
	var stored string
	db.SQL.QueryRow(`SELECT token FROM mcpx_remote_plugins WHERE id = 'mcp-demo-canteen'`).Scan(&stored)
	if !strings.HasPrefix(stored, "sealed:") {
		t.Errorf("token column %q", stored)
	}
	secretsNowhere(t, ts, srv, db, tok)

	// The plugin page's buttons work on it: check for updates (its tools listed again, with the
	// sealed token), then remove, which forgets the token.
	if st, body := call(t, ts, "POST", "/v1/remote-plugins/mcp-demo-canteen/refresh", `{"lang":"en"}`); st != 200 || !strings.Contains(body, `"status":"current"`) || strings.Contains(body, tok) {
		t.Errorf("update: %d %s", st, body)
	}
	if st, body := call(t, ts, "POST", "/v1/remote-plugins/nope/refresh", `{}`); st != 404 {
		t.Errorf("refresh of no plugin: %d %s", st, body)
	}
	if st, body := call(t, ts, "DELETE", "/v1/plugins/mcp-demo-canteen", `{}`); st >= 300 {
		t.Errorf("remove: %d %s", st, body)
	}
	var n int
	db.SQL.QueryRow(`SELECT COUNT(*) FROM mcpx_remote_plugins`).Scan(&n)
	if n != 0 {
		t.Errorf("%d rows left after remove", n)
	}
}
