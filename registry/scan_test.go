package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/plugin"
)

// mapFetcher serves raw.githubusercontent.com files from a map.
type mapFetcher map[string]string

func (m mapFetcher) Fetch(_ context.Context, name string, _ int64) ([]byte, error) {
	if s, ok := m[name]; ok {
		return []byte(s), nil
	}
	return nil, &notFound{name}
}

type notFound struct{ name string }

func (e *notFound) Error() string { return e.name + ": 404 Not Found" }

const okManifest = `---
spec: 1
id: ID
name: 名字
description: 一个插件的说明。
version: 1.0.0
author: someone
tools:
  now: tools/now.yaml
i18n:
  en: { name: Name, description: A plugin., tools: { now: { title: Now } } }
---
`

const nowTool = "title: 现在\ndescription: Now.\neffect: read\nreturn: now\n"

// TestScanLink lists a GitHub repository through a stand-in of the git
// trees API and loads each PLUGIN.md under the linked folder.
func TestScanLink(t *testing.T) {
	var asked []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
		if r.URL.Path != "/repos/someone/plugins/git/trees/main" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"tree": []map[string]string{
			{"path": "README.md", "type": "blob"},
			{"path": "plugins", "type": "tree"},
			{"path": "plugins/alpha/PLUGIN.md", "type": "blob"},
			{"path": "plugins/alpha/tools/now.yaml", "type": "blob"},
			{"path": "plugins/beta/PLUGIN.md", "type": "blob"},
			{"path": "plugins/beta/tests/x/PLUGIN.md", "type": "blob"},
			{"path": "other/gamma/PLUGIN.md", "type": "blob"},
		}})
	}))
	defer api.Close()
	raw := "https://raw.githubusercontent.com/someone/plugins/main/"
	f := mapFetcher{
		raw + "plugins/alpha/PLUGIN.md":      strings.Replace(okManifest, "ID", "alpha", 1),
		raw + "plugins/alpha/tools/now.yaml": nowTool,
		raw + "plugins/beta/PLUGIN.md":       strings.Replace(okManifest, "ID", "alpha", 1), // the same id, and its tool is missing
		raw + "other/gamma/PLUGIN.md":        strings.Replace(okManifest, "ID", "gamma", 1),
		raw + "other/gamma/tools/now.yaml":   nowTool,
	}
	list, err := ScanLink(context.Background(), "https://github.com/someone/plugins/tree/main/plugins", f, &GitHubLister{API: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Path != "alpha" || list[1].Path != "beta" {
		t.Fatalf("scanned %+v", list)
	}
	if !list[0].OK || list[0].Review == nil || list[0].Review.Source != "https://github.com/someone/plugins/tree/main/plugins/alpha" || list[0].Review.Official {
		t.Errorf("a: %+v", list[0])
	}
	var msgs []string
	for _, d := range list[1].Diagnostics {
		msgs = append(msgs, d.String())
	}
	got := strings.Join(msgs, "\n")
	if list[1].OK || !strings.Contains(got, "id alpha is already used by the plugin in alpha") || !strings.Contains(got, "tools/now.yaml") {
		t.Errorf("b: ok %v\n%s", list[1].OK, got)
	}
	if len(asked) != 1 || asked[0] != "/repos/someone/plugins/git/trees/main?recursive=1" {
		t.Errorf("API asked %v", asked)
	}
	// A missing repository is an error naming GitHub's answer.
	if _, err := ScanLink(context.Background(), "https://github.com/someone/nope", f, &GitHubLister{API: api.URL}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing repository: %v", err)
	}
	// A single install link is one plugin.
	one, err := ScanLink(context.Background(), raw+"other/gamma/PLUGIN.md", f, nil)
	if err != nil || len(one) != 1 || !one[0].OK || one[0].ID != "gamma" {
		t.Errorf("one link: %+v %v", one, err)
	}
}

func TestScanDirRules(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := writeFile(dir+"/"+p, s); err != nil {
			t.Fatal(err)
		}
	}
	write("alpha/PLUGIN.md", strings.Replace(okManifest, "ID", "alpha", 1))
	write("alpha/tools/now.yaml", nowTool)
	write("alpha/inner/PLUGIN.md", strings.Replace(okManifest, "ID", "inner", 1))
	write("alpha/inner/tools/now.yaml", nowTool)
	write("official/PLUGIN.md", strings.Replace(strings.Replace(okManifest, "ID", "official", 1), "someone", "pkuinfo", 1))
	write("official/tools/now.yaml", nowTool)
	write(".git/x/PLUGIN.md", "not a plugin")
	list, err := ScanDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*Scanned{}
	for _, s := range list {
		byPath[s.Path] = s
	}
	if len(list) != 3 || byPath["alpha"] == nil || !byPath["alpha"].OK {
		t.Fatalf("scanned %d: %+v", len(list), byPath)
	}
	if in := byPath["alpha/inner"]; in.OK || !strings.Contains(in.Diagnostics[0].Msg, "inside the folder of the plugin in alpha") {
		t.Errorf("inner: %+v", in)
	}
	if o := byPath["official"]; !o.OK || o.Warnings != 1 || !strings.Contains(o.Diagnostics[0].Msg, "pkuinfo is the official plugins' author") {
		t.Errorf("official: %+v", o.Diagnostics)
	}
	_ = plugin.ManifestFile
}

func writeFile(p, s string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(s), 0o644)
}
