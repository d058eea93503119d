package host

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/plugin"
)

// echoRunner answers a server function with its name, input and the consented document.
type echoRunner struct{}

func (echoRunner) Call(_ context.Context, c server.FunctionCall) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"fn": c.Name, "input": c.Input, "doc": c.Doc.Hash, "link": c.Doc.Link})
}

func (echoRunner) Listed() []protocol.MetaFunction { return nil }

const fnPlugin = `---
spec: 1
id: counter
name: 计数
description: 一个使用服务端函数的插件。
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
      return: "{ count: input.n + 1 }"
dataSources:
  count: { fn: stats, args: { n: 41 }, ttl: 1m }
tools:
  t: tools/t.yaml
i18n:
  en: { name: Counter, description: A plugin with a server function., tools: { t: { title: T } } }
---
`

// A widget's { fn } data source runs the server function on the provider through Call: refused
// before consent, the installed document's hash in the token after, never reachable by the
// model.
func TestDataSourceFunction(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	ctx := context.Background()
	st, err := server.OpenSQLite(ctx, filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 4
	cfg.Functions = echoRunner{}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	e := newEnv(t, map[string]string{"PLUGIN.md": fnPlugin, "tools/t.yaml": "title: 工具\ndescription: T.\neffect: read\nreturn: \"1\"\n"})
	in := e.install(t, link)
	defer cloud.Release(e.db)
	e.h.SetMode(ctx, "counter", plugin.EffectRead, ModeAuto)
	m := cloud.For(e.db)
	if _, err := e.h.DataSource(ctx, "counter", "count", false); err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("without a provider: %v", err)
	}
	if _, err := m.Use(ctx, hs.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := e.h.DataSource(ctx, "counter", "count", false); err == nil || !strings.Contains(err.Error(), "consent_required") {
		t.Fatalf("before consent: %v", err)
	}
	p, err := e.h.Plugin(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Allow(ctx, cloud.DeclOfPlugin(p)); err != nil {
		t.Fatal(err)
	}
	v, err := e.h.DataSource(ctx, "counter", "count", false)
	if err != nil {
		t.Fatal(err)
	}
	got := jsonOf(t, v.Value)
	if !strings.Contains(got, `"fn":"stats"`) || !strings.Contains(got, `"input":{"n":41}`) || !strings.Contains(got, in.Hash) {
		t.Fatalf("value = %s (hash %s)", got, in.Hash)
	}
	// The model cannot reach a server function as a tool.
	if _, err := e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "counter", Tool: FunctionPrefix + "stats"}); err == nil {
		t.Fatal("the agent called a server function")
	}
	// Bad input is refused before anything is sent.
	if _, err := e.h.Call(ctx, CallRequest{Actor: ActorUser, Plugin: "counter", Tool: FunctionPrefix + "stats", Input: mustJSON(t, `{"n":"x"}`)}); err == nil {
		t.Fatal("a bad input reached the provider")
	}
	if _, err := e.h.Call(ctx, CallRequest{Actor: ActorUser, Plugin: "counter", Tool: FunctionPrefix + "nope"}); err == nil || !strings.Contains(err.Error(), "no tool") {
		t.Fatalf("an undeclared function: %v", err)
	}
}
