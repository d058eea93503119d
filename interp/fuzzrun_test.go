package interp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
	"github.com/pkuinfo/harness/lang/expr"
)

// cannedTransport answers every request at once, without any network:
// JSON for paths containing "json", an HTML table otherwise.
type cannedTransport struct{}

func (cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	body, ct := `<table><tr class="r"><td><a href="/x">一</a></td><td>12人</td></tr></table>`, "text/html; charset=utf-8"
	if strings.Contains(r.URL.Path, "json") {
		body, ct = `{"items":[1,2],"next":null,"rows":[{"room":"101"}]}`, "application/json"
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// FuzzRun loads an arbitrary tool file and runs it whether or not it
// validated, with an arbitrary input, checking the interpreter's
// invariants: it never panics, every error is an *interp.Error with a
// known kind, and every result is JSON within the 1 MB limit.
// Seeds are in testdata/fuzz/FuzzRun.
func FuzzRun(f *testing.F) {
	f.Add("title: T\ndescription: d\neffect: read\nsteps:\n  - let: r\n    request: { url: https://a.example.com/json }\nreturn: r.rows\n", `{}`)
	f.Add("title: T\ndescription: d\neffect: read\ninput:\n  n: { type: integer, default: 3 }\nsteps:\n  - let: xs\n    each: range(input.n)\n    concurrency: 2\n    value: item * 2\nreturn: xs\n", `{"n":4}`)
	f.Add("title: T\ndescription: d\neffect: read\nsteps:\n  - let: p\n    request: { url: https://a.example.com/page }\n    as: html\n  - let: rows\n    extract: { from: p, each: tr.r, fields: { a: 'td a | attr href | url', n: 'td:nth-child(2) | num' } }\nreturn: rows\n", ``)
	f.Add("title: T\ndescription: d\neffect: read\nsteps:\n  - let: all\n    paginate: { request: { url: https://a.example.com/json }, next: page.next, items: page.items }\n  - try:\n      - check: len(all) > 5\n        error: few\n    catch:\n      - let: e\n        value: error\nreturn: '{ all, e }'\n", `{}`)
	f.Add("title: T\ndescription: d\neffect: read\nsteps:\n  - let: c\n    cache: { key: k, ttl: 1m, staleOnError: true }\n    steps:\n      - kv: set\n        key: a\n        value: 1\n  - let: g\n    kv: get\n    key: a\nreturn: '[c, g]'\n", `{}`)
	f.Fuzz(func(t *testing.T, tool, input string) {
		if len(tool) > 4096 {
			return
		}
		p, _ := loadPluginDiags(t, map[string]string{"main": tool})
		if p == nil || p.Tool("main") == nil {
			return
		}
		in, err := expr.FromJSON([]byte(input))
		if err != nil {
			in = nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		v, err := interp.Run(ctx, p, "main", in, interp.Options{Transport: cannedTransport{}, KV: kvstore.NewMemory(), Abilities: &fakeAbilities{}, Now: func() time.Time { return fixedNow }})
		if err != nil {
			var e *interp.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *interp.Error: %v", err, err)
			}
			switch e.Kind {
			case interp.KindCheck, interp.KindHTTP, interp.KindTimeout, interp.KindLimit, interp.KindExpression, interp.KindAbility, interp.KindInput, interp.KindSession:
			default:
				t.Fatalf("unknown kind %q: %v", e.Kind, e)
			}
			return
		}
		b, err := expr.ToJSON(v, "")
		if err != nil || len(b) > interp.MaxResult {
			t.Fatalf("result is not JSON within 1 MB: %v (%d bytes)", err, len(b))
		}
	})
}
