package fnrun_test

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/server/fnrun"
)

// FuzzParseAllowlist: any text either parses into entries that each validate, or is an error;
// never a panic.
func FuzzParseAllowlist(f *testing.F) {
	h := "sha256:" + strings.Repeat("0", 64)
	for _, s := range []string{"", "https://x.org/a/PLUGIN.md@" + h, "a@" + h + ",b@" + h, "@sha256:", "x@sha256:zz", "\n\t,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := fnrun.ParseAllowlist(s)
		if err != nil {
			return
		}
		for _, d := range l {
			if err := d.Validate(); err != nil {
				t.Fatalf("%q: entry %+v does not validate: %v", s, d, err)
			}
		}
	})
}
