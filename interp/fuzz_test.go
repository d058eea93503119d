package interp

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
)

// FuzzReadAs feeds arbitrary replies through the reply parser (charset
// detection and decoding, BOM handling, JSON, HTML) and checks its
// invariants: no panic; text is valid UTF-8; a JSON value re-encodes and
// decodes to an equal value; a response object always has its four keys.
// Seeds are in testdata/fuzz/FuzzReadAs.
func FuzzReadAs(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"b":null}]}`), "application/json", uint8(0), 200)
	f.Add([]byte("\xef\xbb\xbf{\"ok\":true}"), "text/plain", uint8(1), 200)
	f.Add([]byte("<meta charset=gbk>\xb6\xfe\xbd\xcc"), "text/html", uint8(2), 200)
	f.Add([]byte("\xa5_\xa8\xca"), "text/plain; charset=big5", uint8(3), 404)
	f.Add([]byte("<table><tr><td>1"), "", uint8(4), 200)
	ases := []string{"", "json", "text", "html", "response"}
	f.Fuzz(func(t *testing.T, body []byte, ct string, as uint8, status int) {
		rep := &reply{Status: status, URL: "https://a.example.com/x", Header: http.Header{"Content-Type": {ct}}, Body: body}
		mode := ases[int(as)%len(ases)]
		v, err := readAs(rep, mode, "https://a.example.com/x")
		// The charged reader (the json and html built-ins) reads the same value or fails the same way.
		cv, cerr := readAsCharged(context.Background(), rep, mode, "https://a.example.com/x", expr.NewBudget(MaxOperations))
		if (err == nil) != (cerr == nil) {
			t.Fatalf("uncharged: %v; charged: %v", err, cerr)
		}
		if cerr != nil {
			var ce, ue *Error
			if !errors.As(cerr, &ce) || !errors.As(err, &ue) || ce.Kind != ue.Kind {
				t.Fatalf("charged error %v, uncharged %v", cerr, err)
			}
		} else if _, isNode := v.(*expr.Node); !isNode && !expr.Equal(v, cv) {
			t.Fatalf("charged value %v, uncharged %v", cv, v)
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			return
		}
		switch x := v.(type) {
		case string:
			if !utf8.ValidString(x) {
				t.Fatalf("text is not UTF-8: %q", x)
			}
		case *expr.Node:
			if x.N == nil {
				t.Fatal("nil node")
			}
		case *expr.Object:
			if mode == "response" {
				for _, k := range []string{"status", "url", "headers", "text"} {
					if _, ok := x.Get(k); !ok {
						t.Fatalf("response lacks %s", k)
					}
				}
				return
			}
		}
		if mode == "json" || (mode == "" && isJSON(ct)) {
			b, err := expr.ToJSON(v, "")
			if err != nil {
				t.Fatalf("ToJSON: %v", err)
			}
			w, err := expr.FromJSON(b)
			if err != nil || !expr.Equal(v, w) {
				t.Fatalf("round trip of %s: %v", b, err)
			}
		}
	})
}
