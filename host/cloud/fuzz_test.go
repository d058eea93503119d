package cloud

import (
	"errors"
	"strings"
	"testing"
)

// FuzzNormalizeURL: any string is either refused with a *URLError or becomes an origin that is
// https, or http on a loopback name, with no path, query, fragment or credentials; normalising
// the origin again gives the same origin.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"", "off", "https://cloud.example.org", "https://cloud.example.org:8443/x?y#z", "http://127.0.0.1:8787",
		"http://localhost", "http://[::1]:9", "http://10.0.0.1", "ftp://x", "https://u:p@x", "javascript:alert(1)", "//x", "https://", " https://a.b "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		o, err := NormalizeURL(raw)
		if err != nil {
			var ue *URLError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: error %T %v, want *URLError", raw, err, err)
			}
			return
		}
		if !strings.HasPrefix(o, "https://") && !strings.HasPrefix(o, "http://localhost") && !strings.HasPrefix(o, "http://127.0.0.1") && !strings.HasPrefix(o, "http://[::1]") {
			t.Fatalf("%q became %q", raw, o)
		}
		if strings.ContainsAny(strings.SplitN(o, "://", 2)[1], "/?#@") {
			t.Fatalf("%q became %q, not an origin", raw, o)
		}
		if again, err := NormalizeURL(o); err != nil || again != o {
			t.Fatalf("%q → %q → %q, %v", raw, o, again, err)
		}
	})
}
