package api

import (
	"context"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
)

// FuzzGuard sends arbitrary methods, Content-Type, Origin and
// Sec-Fetch-Site headers to a route behind the guard: whenever the route
// runs, the request was safe by the rules — no foreign Origin, no
// cross-site or same-site fetch, and a state change said application/json.
func FuzzGuard(f *testing.F) {
	f.Add("POST", "application/json", "", "")
	f.Add("POST", "text/plain", "https://evil.example", "cross-site")
	f.Add("DELETE", "", "", "")
	f.Add("PUT", "APPLICATION/JSON; charset=utf-8", "http://127.0.0.1:8788", "same-origin")
	f.Add("POST", "application/json", "http://127.0.0.1:8788/", "")
	f.Add("POST", "application/json", "HTTP://127.0.0.1:8788", "SAME-SITE")
	f.Add("GET", "", "null", "none")
	db, err := store.Open(context.Background(), f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	h, _ := host.New(db)
	s := New(h, Options{})
	ran := false
	s.Handle("/x", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }))
	f.Fuzz(func(t *testing.T, method, ctype, origin, site string) {
		req, err := http.NewRequest(method, "http://127.0.0.1:8788/x", strings.NewReader("{}"))
		if err != nil {
			return
		}
		for k, v := range map[string]string{"Content-Type": ctype, "Origin": origin, "Sec-Fetch-Site": site} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		req.Host = "127.0.0.1:8788"
		ran = false
		s.ServeHTTP(httptest.NewRecorder(), req)
		if !ran {
			return
		}
		if s := strings.ToLower(site); s == "cross-site" || s == "same-site" {
			t.Fatalf("ran with Sec-Fetch-Site %q", site)
		}
		if origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Scheme != "http" || !strings.EqualFold(u.Host, "127.0.0.1:8788") {
				t.Fatalf("ran with Origin %q", origin)
			}
		}
		if method != "GET" && method != "HEAD" && method != "OPTIONS" {
			if mt, _, err := mime.ParseMediaType(ctype); err != nil || mt != "application/json" {
				t.Fatalf("%s ran with Content-Type %q", method, ctype)
			}
		}
	})
}
