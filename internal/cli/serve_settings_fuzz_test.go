package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/agent"
)

// FuzzModelSettings sends any body to PUT /v1/model: the answer is 200 or a 400 with a message,
// never a panic or a 500; after a 200 the stored configuration loads and is usable (an http(s)
// base URL, a model name), and after a 400 nothing changed on disk.
func FuzzModelSettings(f *testing.F) {
	for _, s := range []string{`{}`, `{"preset":"mock"}`, `{"preset":"deepseek","apiKey":"sk-x"}`, `{"baseURL":"http://127.0.0.1:1/v1","model":"m"}`,
		`{"baseURL":"ftp://x","model":"m"}`, `{"apiKey":""}`, `{"model":"\u0000"}`, `{"preset":1}`, `[]`, `{"apiKey":"a b"}`, `null`, `{"baseURL":"https://h/v1?x=1","model":"m"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		t.Setenv("HARNESS_KEYRING", "off")
		dir := filepath.Join(t.TempDir(), "data")
		os.MkdirAll(dir, 0o700)
		if err := agent.SaveConfig(dir, agent.Config{BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: "sk-before-0123456789"}, true); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(filepath.Join(dir, agent.ConfigFile))
		m := &modelRoutes{dir: dir}
		req := httptest.NewRequest("PUT", "/v1/model", strings.NewReader(body))
		w := httptest.NewRecorder()
		err := m.set(w, req)
		switch {
		case err == nil:
			if w.Code != http.StatusOK {
				t.Fatalf("%q: %d", body, w.Code)
			}
			c, _, err := agent.LoadConfig(dir, nil)
			if err != nil || agent.CheckBaseURL(c.BaseURL) != nil || strings.TrimSpace(c.Model) == "" {
				t.Fatalf("%q: stored %+v, %v", body, c, err)
			}
			if strings.Contains(w.Body.String(), "sk-before-0123456789") {
				t.Fatalf("%q: the answer holds the key", body)
			}
		default:
			if err.Error() == "" {
				t.Fatalf("%q: an error without a message", body)
			}
			if after, _ := os.ReadFile(filepath.Join(dir, agent.ConfigFile)); string(after) != string(before) {
				t.Fatalf("%q refused (%v), yet model.json changed", body, err)
			}
		}
	})
}

// FuzzRemoteBody checks any URL and token the add-remote form may send: check accepts only
// what mcpx.CheckURL accepts and tokens of one word, and says which field is wrong otherwise.
func FuzzRemoteBody(f *testing.F) {
	for _, s := range [][2]string{{"https://example.org/mcp", ""}, {"http://127.0.0.1:8790/mcp", "demo-token"}, {"http://example.org/mcp", ""},
		{"https://u:p@example.org/mcp", ""}, {"", "x"}, {"https://example.org/mcp", "a\nb"}, {"javascript:alert(1)", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, u, tok string) {
		b := &remoteBody{URL: u, Token: tok}
		err := b.check()
		if err == nil {
			if strings.ContainsAny(b.Token, " \t\r\n") || len(b.Token) > MaxKeyLen || b.URL == "" {
				t.Fatalf("accepted %q %q", u, tok)
			}
			return
		}
		if !strings.HasPrefix(err.Error(), "url: ") && !strings.HasPrefix(err.Error(), "token: ") {
			t.Fatalf("%q %q: %v names no field", u, tok, err)
		}
	})
}
