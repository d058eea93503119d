package builtin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/api"
)

// TestServedOnTheAPI: the host's JSON API lists the built-ins with their
// kind, offers their tools on /v1/tools and runs them through Host.Call,
// input check and refusals included.
func TestServedOnTheAPI(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(api.New(e.h, api.Options{}))
	defer srv.Close()
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		contain            string
	}{
		{"GET", "/v1/plugins", "", 200, `"id":"focus","name":"专注","nameEn":"Focus","kind":"builtin","version":"0.1.0"`},
		{"GET", "/v1/tools", "", 200, `"name":"focus__start"`},
		{"POST", "/v1/tools/focus__start/call", `{"actor":"user","input":{"label":"高数"}}`, 200, `"started":true`},
		{"POST", "/v1/tools/focus__today/call", `{"actor":"agent","input":{}}`, 200, `"label":"高数"`},
		{"POST", "/v1/tools/focus__start/call", `{"actor":"user","input":{"label":7}}`, 422, `"kind":"input"`},
		{"POST", "/v1/tools/focus__start/call", `{"actor":"user","input":{}}`, 422, `已经有一个正在进行的专注`},
		{"POST", "/v1/tools/authenticator__set/call", `{"actor":"agent","input":{"uri":"otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"}}`, 403, "userOnly"},
		{"GET", "/v1/plugins/focus/data/today", "", 200, `"minutes":0`},
	} {
		status, body := do(tc.method, tc.path, tc.body)
		if status != tc.status || !strings.Contains(body, tc.contain) {
			t.Errorf("%s %s %s: %d %s\nwant %d with %s", tc.method, tc.path, tc.body, status, body, tc.status, tc.contain)
		}
	}
	if _, body := do("GET", "/v1/tools", ""); strings.Contains(body, "authenticator__set") {
		t.Error("/v1/tools offers a userOnly tool")
	}
}
