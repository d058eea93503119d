package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
)

// FuzzRequest sends arbitrary bodies and paths to the API: whatever
// arrives, the reply is JSON with a status below 500.
func FuzzRequest(f *testing.F) {
	f.Add("POST", "/v1/reviews", `{"source":""}`)
	f.Add("POST", "/v1/plugins", `{"hash":"sha256:1"}`)
	f.Add("PUT", "/v1/plugins/x/modes", `{"write":"auto"}`)
	f.Add("POST", "/v1/tools/a__b/call", `{"actor":"agent","input":[1,{"x":null}]}`)
	f.Add("POST", "/v1/confirmations/abc", `{"approve":true}`)
	f.Add("GET", "/v1/audit?limit=0", ``)
	f.Add("PUT", "/v1/plugins/x/enabled", `{"on":null}`)
	db, err := store.Open(context.Background(), filepath.Join(f.TempDir(), "data"))
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	h, _ := host.New(db)
	s := New(h, Options{})
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") || strings.Contains(path, "/reviews") && !strings.HasPrefix(body, `{"source":""`) {
			t.Skip() // invalid request lines, and reviews that would read arbitrary folders
		}
		req, err := http.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s %s: %d %s", method, path, body, w.Code, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); w.Code != 404 && w.Code != 405 && !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("%s %s: %d with content type %q", method, path, w.Code, ct)
		}
	})
}
