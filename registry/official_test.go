package registry

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/plugin"
	"github.com/pkuinfo/harness/plugins"
)

// TestOfficialRegistry: registry/registry.json validates, and lists every
// official document bundled in this build and every built-in of the app,
// with the name, description, icon, kind, requires and scopes their
// manifests give. The registry may list more (community plugins, official
// documents this build does not bundle).
func TestOfficialRegistry(t *testing.T) {
	data, err := os.ReadFile("registry.json")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range builtin.Definitions() {
		ids = append(ids, p.ID)
	}
	entries, diags := Validate("registry.json", data, Options{Builtins: ids})
	for _, d := range diags {
		t.Error(d)
	}
	byID := map[string]*Entry{}
	for _, e := range entries {
		byID[e.ID] = e
	}
	want := map[string]*plugin.Manifest{}
	kinds := map[string]string{}
	dirs, err := fs.ReadDir(plugins.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		sub, err := plugins.Dir(d.Name())
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		_ = fs.WalkDir(sub, ".", func(p string, de fs.DirEntry, err error) error {
			if err == nil && !de.IsDir() && !strings.HasPrefix(p, "tests/") {
				files[p], _ = fs.ReadFile(sub, p)
			}
			return err
		})
		p, _, err := plugin.LoadFiles(context.Background(), files)
		if err != nil {
			t.Fatal(err)
		}
		want[p.Manifest.ID], kinds[p.Manifest.ID] = p.Manifest, KindDocument
	}
	for _, c := range builtin.All() {
		want[c.Plugin.Manifest.ID], kinds[c.Plugin.Manifest.ID] = c.Plugin.Manifest, KindBuiltin
	}
	for id, m := range want {
		e := byID[id]
		if e == nil {
			t.Errorf("%s has no registry entry", id)
			continue
		}
		scopes := append(slices.Clone(m.Campus), m.Network...)
		requires := m.Requires()
		if requires == nil {
			requires = []string{}
		}
		if e.Name != m.Name || e.Description != m.Description || e.Icon != m.Icon || e.Kind != kinds[id] ||
			!slices.Equal(e.Requires, requires) || !slices.Equal(e.Scopes, scopes) || e.Author != m.Author {
			t.Errorf("%s: the entry %+v does not match its manifest (%s, %s, icon %s, requires %v, scopes %v)",
				id, e, m.Name, m.Description, m.Icon, requires, scopes)
		}
	}
}
