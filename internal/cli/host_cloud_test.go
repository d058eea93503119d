package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/cloud"
)

const cloudNotesPlugin = `---
spec: 1
id: notes
name: 云笔记
description: 把笔记加密后存到云端。
version: 1.0.0
author: tester
cloud:
  protocol: 1
  uses: [store]
  e2e: true
  disclosure:
    zh: ['笔记加密后保存在云端服务器']
    en: ['Encrypted notes are kept on the cloud server']
tools:
  hello: tools/hello.yaml
i18n:
  en: { name: Cloud notes, description: Keeps notes encrypted in the cloud., tools: { hello: { title: Hello } } }
---
`

// The Cloud settings routes, as an attacker would try them: URLs that are not providers
// (other schemes, plain http off loopback, credentials in the URL, nothing listening), bodies
// with unknown fields, consent given by anyone but the person, plugins that do not exist or
// use no Cloud, and no secret in any reply.
func TestCloudRoutes(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	ctx := context.Background()
	st, err := server.OpenSQLite(ctx, filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 4
	ref, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	provider := httptest.NewServer(ref)
	defer provider.Close()

	h, db, err := openHost(ctx, &hostFlags{data: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer cloud.Release(db)
	dir := filepath.Join(t.TempDir(), "notes")
	os.MkdirAll(filepath.Join(dir, "tools"), 0o755)
	os.WriteFile(filepath.Join(dir, "PLUGIN.md"), []byte(cloudNotesPlugin), 0o644)
	os.WriteFile(filepath.Join(dir, "tools", "hello.yaml"), []byte("title: 你好\ndescription: Hi.\neffect: read\nreturn: \"'hi'\"\n"), 0o644)
	rv, err := h.Review(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, dir, rv.Hash); err != nil {
		t.Fatal(err)
	}
	srv := api.New(h, api.Options{})
	if err := cloudRoutes(ctx, h, srv); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	host := strings.TrimPrefix(provider.URL, "http://")

	tests := []struct {
		method, path, body string
		status             int
		want               []string // parts of the reply
	}{
		{"GET", "/v1/cloud", "", 200, []string{`"provider":"off"`, `"meta":null`, `"registered":false`, `"plugin":"notes"`, `"consented":false`}},
		{"GET", "/v1/cloud/status", "", 200, []string{`{"provider":"off","consented":false,"online":false,"available":false,"reason":"no Cloud provider is set","why":"no_provider"}`}},
		{"PUT", "/v1/cloud", `{}`, 400, []string{`"code":"bad_request"`, "url is required"}},
		{"PUT", "/v1/cloud", `{"url":"javascript:alert(1)"}`, 400, []string{"not an absolute URL"}},
		{"PUT", "/v1/cloud", `{"url":"ftp://example.org"}`, 400, []string{"use https"}},
		{"PUT", "/v1/cloud", `{"url":"http://169.254.169.254/latest"}`, 400, []string{"plain http only to localhost"}},
		{"PUT", "/v1/cloud", `{"url":"https://user:pw@example.org"}`, 400, []string{"no user name or password"}},
		{"PUT", "/v1/cloud", `{"url":"http://127.0.0.1:1"}`, 502, []string{`"code":"provider_unreachable"`}},
		{"PUT", "/v1/cloud", `{"url":"` + provider.URL + `","extra":1}`, 400, []string{`unknown field \"extra\"`}},
		{"POST", "/v1/cloud/test", `{"url":"` + ts.URL + `"}`, 502, []string{`"code":"provider_unreachable"`}}, // the host's own API is no provider
		{"POST", "/v1/cloud/test", `{"url":"` + provider.URL + `"}`, 200, []string{`"protocol":1`, `"services":["store","channels"]`, `"host":"` + host + `"`}},
		{"GET", "/v1/cloud/status", "", 200, []string{`"provider":"off"`}}, // a test sets nothing
		{"PUT", "/v1/cloud/plugins/notes/consent", `{"actor":"user"}`, 409, []string{`"code":"unavailable"`}},
		// requestConsent(): a built-in that needs Cloud while none is set asks for the panel.
		{"POST", "/v1/tools/card-share__start/call", `{"actor":"user"}`, 403, []string{`"code":"unavailable"`, `"consent":{"plugin":"card-share","provider":"",`}},
		{"PUT", "/v1/cloud", `{"url":"` + provider.URL + `"}`, 200, []string{`"provider":"custom"`, `"baseURL":"` + provider.URL + `"`, `"online":true`}},
		{"GET", "/v1/cloud/plugins/notes/consent", "", 200, []string{`"provider":"` + host + `"`, `"disclosureZh":["笔记加密后保存在云端服务器"]`, `"e2e":true`, `"uses":["store"]`, `"consented":false`, `"consent":null`, `"maxKeys":1000`}},
		{"POST", "/v1/tools/card-share__start/call", `{"actor":"user"}`, 403, []string{`"code":"consent_required"`, `"kind":"tool"`, "harness cloud consent card-share on",
			`"consent":{"plugin":"card-share","provider":"` + host + `","panel":"/v1/cloud/plugins/card-share/consent","settings":"/settings/cloud","command":"harness cloud consent card-share on"}`}},
		// Asking is not granting: asked twice, still nothing is allowed.
		{"POST", "/v1/tools/card-share__start/call", `{"actor":"user","input":{"consent":true}}`, 422, []string{`"code":"tool_failed"`, `"kind":"input"`}},
		{"POST", "/v1/tools/card-share__start/call", `{"actor":"user"}`, 403, []string{`"code":"consent_required"`}},
		{"GET", "/v1/cloud/plugins/card-share/consent", "", 200, []string{`"consented":false`, `"consent":null`}},
		{"PUT", "/v1/cloud/plugins/notes/consent", `{}`, 403, []string{`"code":"user_only"`}},
		{"PUT", "/v1/cloud/plugins/notes/consent", `{"actor":"agent"}`, 403, []string{`"code":"user_only"`}},
		{"PUT", "/v1/cloud/plugins/notes/consent", `{"actor":"scheduler"}`, 403, []string{`"code":"user_only"`}},
		{"GET", "/v1/cloud/plugins/notes/consent", "", 200, []string{`"consented":false`}},
		{"PUT", "/v1/cloud/plugins/notes/consent", `{"actor":"user"}`, 200, []string{`"consented":true`, `"consent":{"plugin":"notes","provider":"` + host + `"`, `"available":true`}},
		{"PUT", "/v1/cloud/plugins/nobody/consent", `{"actor":"user"}`, 404, []string{`"code":"not_found"`}},
		{"PUT", "/v1/cloud/plugins/todos/consent", `{"actor":"user"}`, 404, []string{"does not use Cloud"}},
		{"GET", "/v1/cloud/plugins/..%2F..%2Fetc/consent", "", 404, []string{`"code":"not_found"`}},
		{"DELETE", "/v1/cloud/plugins/notes/data", "", 200, []string{`"consented":true`, `"keys":0`}},
		{"DELETE", "/v1/cloud/plugins/notes/consent", "", 200, []string{`"consented":false`}},
		{"DELETE", "/v1/cloud/data", "", 200, []string{`"registered":false`}},
		{"PUT", "/v1/cloud", `{"url":"off"}`, 200, []string{`"provider":"off"`}},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
		if tc.method != "GET" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(b)
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s %s: %d %s, want %d", tc.method, tc.path, tc.body, resp.StatusCode, got, tc.status)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %s %s: %s\nlacks %s", tc.method, tc.path, tc.body, got, w)
			}
		}
		for _, secret := range []string{"signPriv", "storeSecret", "boxPriv", "#k="} {
			if strings.Contains(got, secret) {
				t.Errorf("%s %s: the reply holds %q", tc.method, tc.path, secret)
			}
		}
	}
}
