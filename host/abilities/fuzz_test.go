package abilities

import (
	"slices"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
)

// FuzzParseDuration: an accepted duration is positive, at most a year, and
// its number and unit read back to the same value.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30m", "2h", "1d", "15s", "0m", "-1h", "1.5h", "m", "99999999d", " 10m "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err != nil {
			if !strings.Contains(err.Error(), "is not a duration") {
				t.Fatalf("%q: error without the reason: %v", s, err)
			}
			return
		}
		if d <= 0 || d > maxDuration {
			t.Fatalf("%q → %v", s, d)
		}
		again, err := parseDuration(strings.TrimSpace(s))
		if err != nil || again != d {
			t.Fatalf("%q → %v, trimmed → %v, %v", s, d, again, err)
		}
	})
}

// FuzzTreeholeRequest: any JSON given as verify.treehole's request either
// fails with a message naming the request, or gives a GET/POST/PUT/DELETE
// to a path on Treehole, with a JSON body that parses when it says JSON.
func FuzzTreeholeRequest(f *testing.F) {
	for _, s := range []string{
		`{"url":"/chapi/api/course/score_v2"}`,
		`{"url":"/chapi/api/v3/events/list?page=1","query":{"limit":20,"q":"讲座 a&b"}}`,
		`{"url":"/x","method":"post","json":{"code":"123456"}}`,
		`{"url":"/x","form":{"a":"1","b":null}}`,
		`{"url":"https://evil.example/"}`,
		`{"url":"//evil.example/x"}`,
		`{"url":"/x","json":1,"body":"y"}`,
		`"/x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		v, err := expr.FromJSON([]byte(js))
		if err != nil {
			return
		}
		r, err := treeholeRequest(v)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "request") {
				t.Fatalf("%s: error %q does not name the request", js, err)
			}
			return
		}
		if !slices.Contains([]string{"GET", "POST", "PUT", "DELETE"}, r.method) {
			t.Fatalf("%s: method %q", js, r.method)
		}
		if !strings.HasPrefix(r.target, "/") || strings.HasPrefix(r.target, "//") {
			t.Fatalf("%s: target %q is not a path", js, r.target)
		}
		if r.ctype == "application/json" {
			if _, err := expr.FromJSON(r.body); err != nil {
				t.Fatalf("%s: JSON body %q: %v", js, r.body, err)
			}
		}
	})
}
