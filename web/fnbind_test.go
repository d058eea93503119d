package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/fnrun"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

const fnBase = "https://plugins.example.org/counter/"

// fnFiles is a plugin with a server function stats and a widget bound to it with { fn }.
var fnFiles = map[string]string{
	"PLUGIN.md": `---
spec: 1
id: counter
name: 计数
description: 一个小组件绑定服务端函数的插件。
version: 1.0.0
author: tester
cloud:
  protocol: 1
  disclosure: { zh: ['计数请求会发到云端服务器。'], en: ['Count requests are sent to the cloud server.'] }
server:
  functions:
    stats:
      effect: read
      input:
        n: { type: number }
      return: "{ count: input.n + 1, caller: caller.id }"
tools:
  t: tools/t.yaml
widgets:
  count: widgets/count.json
i18n:
  en: { name: Counter, description: A widget bound to a server function., tools: { t: { title: T } } }
---
`,
	"tools/t.yaml": "title: 工具\ndescription: T.\neffect: read\nreturn: \"1\"\n",
	"widgets/count.json": `{"ui":1,"kind":"widget","title":"计数","description":"A count from the server.","i18n":{"en":{"title":"Count"}},
"data":{"c":{"fn":"stats","args":{"n":41},"ttl":"1m"}},
"root":{"type":"Text","text":"${data.c.count} / ${data.c.caller == '' ? 'anonymous' : 'pseudonym'}"}}`,
}

func fnFetcher(files map[string]string) plugin.MapFetcher {
	m := plugin.MapFetcher{}
	for k, v := range files {
		m[fnBase+k] = []byte(v)
	}
	return m
}

// A widget's inline { fn } binding runs the server function on a real reference server (the
// fnrun interpreter, policy open) through Host.Call as the person: refused before a provider and
// before consent and offline (the card's error state), the value drawn after; an inline document cannot
// spend the plugin's consent, and a widget naming another plugin's function or a path does not
// validate.
func TestDrawFunctionBinding(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	ctx := context.Background()
	fetch := fnFetcher(fnFiles)

	st := server.NewMemory()
	runner, err := fnrun.New(fnrun.Config{Policy: fnrun.PolicyOpen, Fetcher: fetch, Storage: st})
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 4
	cfg.Functions = runner
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })

	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cloud.Release(db); db.Close() })
	h, err := host.New(db, host.WithFetcher(fetch))
	if err != nil {
		t.Fatal(err)
	}
	link := fnBase + "PLUGIN.md"
	rv, err := h.Review(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, link, rv.Hash); err != nil {
		t.Fatal(err)
	}
	if err := h.SetMode(ctx, "counter", plugin.EffectRead, host.ModeAuto); err != nil {
		t.Fatal(err)
	}
	draw := func(req DrawRequest) *DrawReply {
		t.Helper()
		rep, err := Draw(ctx, h, req)
		if err != nil {
			t.Fatalf("draw: %v", err)
		}
		return rep
	}
	widget := DrawRequest{Plugin: "counter", Widget: "count", Locale: "en"}

	if rep := draw(widget); rep.State != "error" || !strings.Contains(rep.Error, "no Cloud provider") || rep.Title != "Count" || strings.Join(rep.Sizes, ",") != "md" {
		t.Fatalf("without a provider: %+v", rep)
	}
	m := cloud.For(db)
	if _, err := m.Use(ctx, hs.URL); err != nil {
		t.Fatal(err)
	}
	if rep := draw(widget); rep.State != "error" || !strings.Contains(rep.Error, "consent_required") {
		t.Fatalf("before consent: %+v", rep)
	}
	p, err := h.Plugin(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Allow(ctx, cloud.DeclOfPlugin(p)); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"42 / pseudonym", "42 / pseudonym"} {
		rep := draw(widget)
		if rep.State != "ok" || rep.Data["c"].FetchedAt.IsZero() {
			t.Fatalf("draw %d: %+v", i, rep)
		}
		b, _ := json.Marshal(rep.Drawn.Root)
		if !strings.Contains(string(b), want) {
			t.Fatalf("draw %d: %s, want %q", i, b, want)
		}
	}
	// The draw path checks the name too, whatever a document says: another plugin's function
	// or a path never reaches Host.Call.
	for _, fn := range []string{"other.stats", "../other/stats", "stats/../reset", ""} {
		if _, _, err := readFunction(ctx, h, p, fn, nil); err == nil || !strings.Contains(err.Error(), "declares no server function") {
			t.Errorf("readFunction(%q): %v", fn, err)
		}
	}
	// Each draw went through Host.Call as the person, and is in the audit log.
	entries, err := h.Audit(ctx, "counter", 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Tool == host.FunctionPrefix+"stats" && e.Actor == host.ActorUser && e.Outcome == "ok" {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("audit has %d calls of fn:stats: %+v", n, entries)
	}

	// An inline document (the assistant's card) may not bind the plugin's server function.
	doc := `{"ui":1,"kind":"widget","title":"x","description":"d","i18n":{"en":{"title":"x"}},"data":{"c":{"fn":"stats"}},"root":{"type":"Divider"}}`
	_, err = Draw(ctx, h, DrawRequest{Document: json.RawMessage(doc), Tool: "counter.t"})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Message, "unknown server function") {
		t.Fatalf("inline fn binding: %v", err)
	}
	// With the provider gone the card shows the error state (a call is never queued).
	hs.CloseClientConnections()
	hs.Close()
	if rep := draw(widget); rep.State != "error" || !strings.Contains(rep.Error, "offline") {
		t.Fatalf("offline: %+v", rep)
	}
	// After revoking consent the widget is back to its error state; nothing is queued.
	if err := m.Revoke(ctx, "counter"); err != nil {
		t.Fatal(err)
	}
	if rep := draw(widget); rep.State != "error" || !strings.Contains(rep.Error, "consent_required") {
		t.Fatalf("after revoking: %+v", rep)
	}

	// A widget bound to a function its plugin does not declare does not install: another
	// plugin's function, a path, a function of a plugin without Cloud.
	for name, binding := range map[string]string{
		"another plugin's": `{"fn":"other.stats"}`,
		"a path":           `{"fn":"../other/stats"}`,
		"undeclared":       `{"fn":"reset"}`,
	} {
		files := map[string][]byte{}
		for k, v := range fnFiles {
			files[k] = []byte(v)
		}
		files["widgets/count.json"] = []byte(strings.Replace(fnFiles["widgets/count.json"], `{"fn":"stats","args":{"n":41},"ttl":"1m"}`, binding, 1))
		_, ds, err := plugin.LoadFiles(ctx, files)
		if err != nil {
			t.Fatal(err)
		}
		if !diag.HasErrors(ds) || !strings.Contains(diagText(ds), "widgets/count.json:2:") || !strings.Contains(diagText(ds), "unknown server function") {
			t.Errorf("%s: %s", name, diagText(ds))
		}
	}
}

func diagText(ds []diag.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteString("\n")
	}
	return b.String()
}
