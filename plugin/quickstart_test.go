package plugin

import "testing"

// The seed's quickstart plugin (seed 003 "编写第一个插件") must validate unchanged, without a
// single diagnostic.
func TestQuickstartValidates(t *testing.T) {
	p, ds, err := LoadDir("testdata/quickstart/my-classrooms")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		t.Errorf("unexpected diagnostic: %s", d)
	}
	if p.Manifest.ID != "my-classrooms" || len(p.Tools) != 1 || p.Tool("overview") == nil {
		t.Fatalf("loaded %q with %d tools", p.Manifest.ID, len(p.Tools))
	}
	if got := p.Tool("overview").Steps[0].As; got != "json" {
		t.Errorf("steps[0].as = %q, want json", got)
	}
}
