package interp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
)

// TestPaginateNextMethod checks, as an attacker who controls the input
// (or the page) would try it, that paginate's next.method can only be one
// of the documented methods: anything else fails the step, names it, and
// sends nothing. A method in another case is the method ("post" is POST).
func TestPaginateNextMethod(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
input:
  m: { type: string }
steps:
  - let: all
    paginate:
      request: { url: 'https://a.example.com/pages?p=0', as: json }
      items: page.items
      next: "pageIndex == 0 ? { method: input.m, url: 'https://a.example.com/pages?p=1' } : null"
return: all
`})
	var (
		mu   sync.Mutex
		sent []string
	)
	rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.Method+" "+r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"items":[1]}`))
	}))
	const refused = `http: tools/main.yaml:7:5: steps[0] (let all): paginate next.method: `
	tests := []struct {
		m, want, sent string
	}{
		{"POST", "", "GET p=0|POST p=1"},
		{"post", "", "GET p=0|POST p=1"},
		{"Delete", "", "GET p=0|DELETE p=1"},
		{"PROPFIND", refused + `"PROPFIND" is not a method`, "GET p=0"},
		{"propfind", refused + `"propfind" is not a method`, "GET p=0"},
		{"CONNECT", refused + `"CONNECT" is not a method`, "GET p=0"},
		{"TRACE", refused + `"TRACE" is not a method`, "GET p=0"},
		{" GET", refused + `" GET" is not a method`, "GET p=0"},
		{"GET ", refused + `"GET " is not a method`, "GET p=0"},
		{"GET\r\nX-Injected: 1", refused + `"GET\r\nX-Injected: 1" is not a method`, "GET p=0"},
		{"PO\u017fT", refused + `"POſT" is not a method`, "GET p=0"}, // ſ folds to s in Unicode
		{"", refused + `"" is not a method`, "GET p=0"},
	}
	for _, tc := range tests {
		t.Run(tc.m, func(t *testing.T) {
			mu.Lock()
			sent = nil
			mu.Unlock()
			in := expr.NewObject(1)
			in.Set("m", tc.m)
			_, err := interp.Run(context.Background(), p, "main", in, interp.Options{Transport: rt})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			} else {
				var e *interp.Error
				if !errors.As(err, &e) || !strings.HasPrefix(e.Kind+": "+e.Error(), tc.want) {
					t.Fatalf("err = %v\nwant %s…", err, tc.want)
				}
			}
			mu.Lock()
			got := strings.Join(sent, "|")
			mu.Unlock()
			if got != tc.sent {
				t.Errorf("sent %s, want %s", got, tc.sent)
			}
		})
	}
}
