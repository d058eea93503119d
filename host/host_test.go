package host

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -run %s -update to rewrite):\n--- got\n%s\n--- want\n%s", name, t.Name(), got, want)
	}
}

func TestInstallEveryLinkForm(t *testing.T) {
	tree := "https://github.com/student/demo-repo/tree/main/demo"
	tests := []struct {
		name, link string
		official   bool
	}{
		{"github folder", tree, false},
		{"github repository root", "https://github.com/student/demo-repo", false},
		{"github file", "https://github.com/student/demo-repo/blob/main/demo/PLUGIN.md", false},
		{"any https PLUGIN.md", "https://plugins.example.org/demo/PLUGIN.md", false},
		{"deep link", "pkuharness://plugin?src=" + url.QueryEscape(tree), false},
		{"official repository", "https://github.com/pkuinfo/pku-harness-plugins/tree/main/plugins/demo", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, demo("1.0.0"))
			ctx := context.Background()
			rv, err := e.h.Review(ctx, tc.link)
			if err != nil {
				t.Fatal(err)
			}
			if rv.ID != "demo" || rv.Official != tc.official || rv.Version != "1.0.0" || !strings.HasPrefix(rv.Hash, "sha256:") {
				t.Fatalf("review = %s %v %s %s", rv.ID, rv.Official, rv.Version, rv.Hash)
			}
			in, err := e.h.Install(ctx, tc.link, rv.Hash)
			if err != nil {
				t.Fatal(err)
			}
			if in.Official != tc.official || in.Source != tc.link || in.Hash != rv.Hash || !in.Enabled || !in.AutoUpdate {
				t.Fatalf("installed = %+v", in)
			}
			got, err := e.h.RunTool(ctx, ActorUser, "demo", "hello", mustJSON(t, `{"name":"同学"}`))
			if err != nil || got != "你好,同学" {
				t.Fatalf("hello = %v, %v", got, err)
			}
		})
	}
}

func TestInstallFromFolderAndErrors(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	dir := t.TempDir()
	for p, body := range demo("1.0.0") {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644)
	}
	in := e.install(t, dir)
	if in.Source != dir || in.Official {
		t.Fatalf("folder install = %+v", in)
	}
	rv, err := e.h.Review(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if rv.Installed != "1.0.0" {
		t.Fatalf("review of an installed plugin: Installed = %q", rv.Installed)
	}
	_, err = e.h.Install(ctx, dir, rv.Hash)
	var c *Conflict
	if !errors.As(err, &c) || err.Error() != "host: plugin demo is already installed; use update" {
		t.Fatalf("second install: %v", err)
	}
	_, err = e.h.Review(ctx, "https://github.com/student/missing")
	if err == nil || !strings.Contains(err.Error(), "PLUGIN.md") {
		t.Fatalf("missing link: %v", err)
	}
	bad := demo("1.0.0", [3]string{"tools/hello.yaml", "effect: read", "effect: loud"})
	e.site.set(bad)
	_, err = e.h.Review(ctx, "https://plugins.example.org/demo/PLUGIN.md")
	var inv *Invalid
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "tools/hello.yaml:4:9") {
		t.Fatalf("invalid plugin: %v", err)
	}
}

func TestInstallsExactlyTheReviewedContent(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	link := "https://plugins.example.org/demo/PLUGIN.md"
	rv, err := e.h.Review(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	// The author pushes between the review and the tap on Install.
	e.site.set(demo("6.6.6", [3]string{"PLUGIN.md", "network: [api.example.com]", "network: [api.example.com, evil.example.net]"}))
	hits := e.site.hits.Load()
	in, err := e.h.Install(ctx, link, rv.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if in.Version != "1.0.0" || in.Hash != rv.Hash || e.site.hits.Load() != hits {
		t.Fatalf("installed %s %s after %d fetches; want the reviewed 1.0.0 without fetching", in.Version, in.Hash, e.site.hits.Load()-hits)
	}
	// Another process (no review in memory) must refuse the changed content.
	other, _ := New(e.db, WithFetcher(e.site.fetcher()))
	e.h.Remove(ctx, "demo")
	_, err = other.Install(ctx, link, rv.Hash)
	var c *Conflict
	if !errors.As(err, &c) || !strings.Contains(err.Error(), "changed since it was reviewed") {
		t.Fatalf("install of changed content: %v", err)
	}
	if _, err := other.Install(ctx, "", "sha256:00"); err == nil || err.Error() != "host: nothing with hash sha256:00 was reviewed; review the plugin first" {
		t.Fatalf("install of an unreviewed hash: %v", err)
	}
}

func TestReviewSheet(t *testing.T) {
	files := demo("1.0.0", [3]string{"PLUGIN.md", "network: [api.example.com]",
		"network: [api.example.com]\ncampus: [treehole]\nabilities: [todos, crypto]"})
	e := newEnv(t, files)
	// The host refuses a Community plugin that reads campus data and reaches a website;
	// the marketplace's scan still shows its sheet, saying so.
	var inv *Invalid
	if _, err := e.h.Review(context.Background(), "https://github.com/student/demo-repo/tree/main/demo"); !errors.As(err, &inv) ||
		!strings.Contains(err.Error(), "PLUGIN.md:8:10: a Community plugin may read your private data") {
		t.Fatalf("review: %v", err)
	}
	bytes := map[string][]byte{}
	for k, v := range files {
		bytes[k] = []byte(v)
	}
	p, diags, err := plugin.LoadFiles(context.Background(), bytes)
	if err != nil || diag.HasErrors(diags) {
		t.Fatal(err, diags)
	}
	rv := ReviewOf(p, "https://github.com/student/demo-repo/tree/main/demo", false)
	rv.Hash = "sha256:…" // keep the golden files independent of the exact bytes
	golden(t, "review_zh.golden", rv.Sheet(LangZh))
	golden(t, "review_en.golden", rv.Sheet(LangEn))

	e.site.set(demo("1.0.0", [3]string{"PLUGIN.md", "network: [api.example.com]", `network: [api.example.com]
cloud:
  protocol: 1
  uses: [store]
  e2e: true
  disclosure:
    zh: [加密后的笔记存在云端，服务器无法解密]
    en: [Encrypted notes are stored in the cloud; the server can't decrypt them]`}))
	rv, err = e.h.Review(context.Background(), "https://github.com/student/demo-repo/tree/main/demo")
	if err != nil {
		t.Fatal(err)
	}
	rv.Hash = "sha256:…"
	golden(t, "review_cloud.golden", rv.Sheet(LangZh)+"---\n"+rv.Sheet(LangEn))
}

func TestEnableDisableRemove(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, "https://plugins.example.org/demo/PLUGIN.md")
	if err := e.h.SetEnabled(ctx, "demo", false); err != nil {
		t.Fatal(err)
	}
	_, err := e.h.RunTool(ctx, ActorUser, "demo", "hello", nil)
	if err == nil || err.Error() != "host: plugin demo is disabled; enable it first" {
		t.Fatalf("disabled: %v", err)
	}
	tools, _ := e.h.AgentTools(ctx)
	if len(tools) != 0 {
		t.Fatalf("a disabled plugin offers %d tools", len(tools))
	}
	e.h.SetEnabled(ctx, "demo", true)
	if _, err := e.h.RunTool(ctx, ActorUser, "demo", "note", mustJSON(t, `{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.h.Remove(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"plugins", "plugin_versions", "plugin_files", "modes", "kv"} {
		var n int
		e.db.SQL.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n)
		if n != 0 {
			t.Errorf("%s keeps %d rows after remove", table, n)
		}
	}
	_, err = e.h.Show(ctx, "demo")
	var nf *NotFound
	if !errors.As(err, &nf) || err.Error() != `host: no plugin "demo" is installed` {
		t.Fatalf("show after remove: %v", err)
	}
	if err := e.h.SetEnabled(ctx, "nope", true); !errors.As(err, &nf) {
		t.Fatalf("enable unknown: %v", err)
	}
}

func TestOfficialPlugins(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	out, err := e.h.InstallOfficial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range out {
		got = append(got, o.ID+" "+o.Status)
	}
	want := []string{"classrooms installed", "campus-events installed", "grades installed", "canteen installed", "shuttle installed", "notices installed", "wallet installed", "netfee installed", "treehole installed"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("first start: %v", got)
	}
	list, _ := e.h.List(ctx)
	for _, in := range list {
		if !in.Official || in.Source != OfficialLink(in.ID) {
			t.Errorf("%s: official %v source %s", in.ID, in.Official, in.Source)
		}
	}
	if out, _ := e.h.InstallOfficial(ctx); len(out) != 0 {
		t.Fatalf("second start did %v", out)
	}
	e.h.Remove(ctx, "canteen")
	e.db.SQL.Exec(`DELETE FROM settings WHERE key = 'official-bundle'`) // as after an app update
	if out, _ := e.h.InstallOfficial(ctx); len(out) != 0 {
		t.Fatalf("a removed official plugin came back: %v", out[0])
	}
	// Official plugins take their defaultModes.
	if _, err := e.h.RunTool(ctx, ActorAgent, "shuttle", "next", mustJSON(t, `{"from":"燕园"}`)); err != nil {
		t.Fatalf("official read tool as agent: %v", err)
	}
}

func TestDefaultModes(t *testing.T) {
	m := &plugin.Manifest{DefaultModes: []*plugin.DefaultMode{
		{Effect: plugin.EffectWrite, Mode: "auto"}, {Effect: plugin.EffectRead, Mode: "ask"}, {Effect: plugin.EffectPublic, Mode: "off"},
	}}
	tests := []struct {
		official bool
		want     map[plugin.Effect]Mode
	}{
		{true, map[plugin.Effect]Mode{plugin.EffectRead: ModeAsk, plugin.EffectWrite: ModeAuto, plugin.EffectMoney: ModeAsk, plugin.EffectPublic: ModeDeny}},
		{false, map[plugin.Effect]Mode{plugin.EffectRead: ModeAsk, plugin.EffectWrite: ModeAsk, plugin.EffectMoney: ModeAsk, plugin.EffectPublic: ModeDeny}},
	}
	for _, tc := range tests {
		if got := DefaultModes(m, tc.official); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("official=%v: %v, want %v", tc.official, got, tc.want)
		}
	}
	if got := DefaultModes(&plugin.Manifest{}, false); got[plugin.EffectRead] != ModeAuto || got[plugin.EffectWrite] != ModeAsk {
		t.Errorf("no defaultModes: %v", got)
	}
}

func TestBrokenStoredPluginIsListed(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	// A stored file that no longer validates (as after a stricter host update).
	e.db.SQL.Exec(`UPDATE plugin_files SET content = CAST('title: x' AS BLOB) WHERE path = 'tools/hello.yaml'`)
	e.h.loaded = map[string]*plugin.Plugin{}
	list, err := e.h.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "demo" || !strings.Contains(list[0].Problem, "does not validate") {
		t.Fatalf("List = %+v, %v", list, err)
	}
	_, err = e.h.RunTool(ctx, ActorUser, "demo", "hello", nil)
	var inv *Invalid
	if !errors.As(err, &inv) {
		t.Fatalf("run of a broken plugin: %v", err)
	}
}

// TestTwoProcessesShareTheStore opens the data directory twice, as a CLI
// command beside a running serve: what one installs the other runs, and
// calls and updates from both at once never fail with a busy database.
func TestTwoProcessesShareTheStore(t *testing.T) {
	dir := t.TempDir()
	a := newEnvDir(t, dir, demo("1.0.0"))
	b := newEnvDir(t, dir, demo("1.0.0"))
	ctx := context.Background()
	a.install(t, link)
	if v, err := b.h.RunTool(ctx, ActorUser, "demo", "hello", nil); v != "你好,世界" {
		t.Fatalf("the other handle: %v, %v", v, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for _, e := range []*env{a, b} {
		wg.Go(func() {
			for range 40 {
				if _, err := e.h.RunTool(ctx, ActorUser, "demo", "note", mustJSON(t, `{"text":"x"}`)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 5 {
			a.site.set(demo(fmt.Sprintf("1.0.%d", i+1), [3]string{"tools/hello.yaml", "'你好,'", fmt.Sprintf("'你好%d,'", i)}))
			if o, err := a.h.Update(ctx, "demo"); err != nil || o.Status != StatusApplied {
				errs <- fmt.Errorf("update %d: %+v, %v", i, o, err)
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if v, err := b.h.RunTool(ctx, ActorUser, "demo", "hello", nil); v != "你好4,世界" {
		t.Fatalf("after the updates the other handle runs %v, %v", v, err)
	}
	entries, _ := b.h.Audit(ctx, "demo", 1000)
	if len(entries) != 82 {
		t.Fatalf("%d audit entries, want 82", len(entries))
	}
}
