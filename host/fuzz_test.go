package host

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/plugin"
)

// FuzzWidened checks the update rule's invariants on network lists and
// effects read from text: nothing is wider than itself, dropping entries
// never widens, and adding an entry that no old one covers always does.
func FuzzWidened(f *testing.F) {
	f.Add("a.example.com,*.example.org", "b.example.com", "read,write")
	f.Add("*.pku.edu.cn", "*.news.pku.edu.cn", "money")
	f.Add("", "example.com", "public,read")
	f.Add("*.x.y", "x.y", "")
	f.Fuzz(func(t *testing.T, oldNet, extra, effects string) {
		split := func(s string) []string {
			var out []string
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" && plugin.CheckHost(p) == nil {
					out = append(out, p)
				}
			}
			return out
		}
		old := Declarations{Network: split(oldNet)}
		for i, e := range strings.Split(effects, ",") {
			if eff, err := plugin.ParseEffect(strings.TrimSpace(e)); err == nil {
				old.Tools = append(old.Tools, ToolDecl{Name: "t" + string(rune('a'+i%26)), Effect: eff})
			}
		}
		if w := Widened(old, old); len(w) != 0 {
			t.Fatalf("%+v is wider than itself: %q", old, w)
		}
		if len(old.Network) > 0 {
			fewer := old
			fewer.Network = old.Network[1:]
			if w := Widened(old, fewer); len(w) != 0 {
				t.Fatalf("dropping %s widened: %q", old.Network[0], w)
			}
		}
		for _, n := range split(extra) {
			next := old
			next.Network = append(append([]string{}, old.Network...), n)
			w := Widened(old, next)
			if covered := hostCovered(n, old.Network); covered != (len(w) == 0) {
				t.Fatalf("adding %s to %v: covered %v but widened %q", n, old.Network, covered, w)
			}
			// A covered name is reachable already: some old entry allows it.
			if !strings.HasPrefix(n, "*.") && len(w) == 0 && !plugin.HostAllowed(n, old.Network) {
				t.Fatalf("%s counted as covered by %v but not allowed by it", n, old.Network)
			}
		}
	})
}

// FuzzSemverLess checks that semverLess is a strict order on any text.
func FuzzSemverLess(f *testing.F) {
	f.Add("1.2.0", "1.10.0")
	f.Add("1.0.0-beta", "1.0.0")
	f.Add("x", "0.0.1")
	f.Fuzz(func(t *testing.T, a, b string) {
		if semverLess(a, a) {
			t.Fatalf("%q < itself", a)
		}
		if semverLess(a, b) && semverLess(b, a) {
			t.Fatalf("%q < %q and %q < %q", a, b, b, a)
		}
	})
}
