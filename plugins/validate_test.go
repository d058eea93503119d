package plugins

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/plugin"
)

// TestDocumentsValidate loads (and so validates) every official document as the app does and
// requires no
// diagnostic at all: no error and no warning (the quality bar for official plugins).
func TestDocumentsValidate(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			_, diags, err := plugin.LoadDir(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(diags) > 0 {
				var b strings.Builder
				for _, d := range plugin.SortDiagnostics(diags) {
					b.WriteString(filepath.Join(name, d.String()))
					b.WriteString("\n")
				}
				t.Errorf("%d diagnostics:\n%s", len(diags), b.String())
			}
		})
	}
}
