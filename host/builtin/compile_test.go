package builtin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/mcpx"
	"github.com/pkuinfo/harness/plugin"
)

// minimal is a valid built-in to break one field at a time.
func minimal() *Plugin {
	return &Plugin{
		ID: "mini", Name: "小", Description: "一个最小的内置插件。", Version: "1.0.0",
		I18n: I18n{En: EnText{Name: "Mini", Description: "A minimal built-in.", Tools: map[string]ToolText{"get": {Title: "Get"}}}},
		Tools: []*Tool{{Name: "get", Title: "取", Effect: plugin.EffectRead, Description: "Gets.",
			Run: Func(func(_ *Context, in echoIn) (echoOut, error) { return echoOut(in), nil })}},
	}
}

type nested struct {
	Inner struct{ A int } `json:"inner"`
}

type badTag struct {
	N int `json:"n" harness:"min=x"`
}

type noName struct {
	N int
}

func TestCompileRefuses(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(p *Plugin)
		want   string
	}{
		{"bad id", func(p *Plugin) { p.ID = "Mini" }, `id "Mini" must match`},
		{"no version", func(p *Plugin) { p.Version = "" }, "name, description and version are required"},
		{"bad tool name", func(p *Plugin) { p.Tools[0].Name = "get-it" }, `tool name "get-it"`},
		{"two tools one name", func(p *Plugin) { p.Tools = append(p.Tools, p.Tools[0]) }, "tool get is defined twice"},
		{"no effect", func(p *Plugin) { p.Tools[0].Effect = 0 }, "effect is required"},
		{"no function", func(p *Plugin) { p.Tools[0].Run = nil }, "Run is required"},
		{"long title", func(p *Plugin) { p.Tools[0].Title = strings.Repeat("长", 61) }, "at most 60 characters"},
		{"nested input", func(p *Plugin) {
			p.Tools[0].Run = Func(func(*Context, nested) (any, error) { return nil, nil })
		}, "outside the plain subset"},
		{"bad tag", func(p *Plugin) {
			p.Tools[0].Run = Func(func(*Context, badTag) (any, error) { return nil, nil })
		}, `min="x" is not a number`},
		{"untagged field", func(p *Plugin) {
			p.Tools[0].Run = Func(func(*Context, noName) (any, error) { return nil, nil })
		}, "field N: give it a json name"},
		{"data source of a missing tool", func(p *Plugin) { p.DataSources = []DataSource{{Name: "x", Tool: "nope", TTL: time.Minute}} }, `no tool "nope"`},
		{"data source of a write tool", func(p *Plugin) {
			p.Tools[0].Effect = plugin.EffectWrite
			p.DataSources = []DataSource{{Name: "x", Tool: "get", TTL: time.Minute}}
		}, "must be a read tool"},
		{"data source without ttl", func(p *Plugin) { p.DataSources = []DataSource{{Name: "x", Tool: "get"}} }, "ttl is required"},
		{"bad widget", func(p *Plugin) { p.Widgets = []UI{{Name: "w", Document: []byte(`{"ui":1,"kind":"widget"}`)}} }, "widgets/w.json:1:1"},
		{"widget reading an undeclared source", func(p *Plugin) {
			p.Widgets = []UI{{Name: "w", Document: []byte(`{"ui":1,"kind":"widget","title":"小","description":"一个小组件。","i18n":{"en":{"title":"W","description":"A widget."}},"data":{"x":{"source":"nope"}},"root":{"type":"Text","text":"${data.x}"}}`)}}
		}, "nope"},
		{"settings row without a screen", func(p *Plugin) { p.Settings = []Setting{{Screen: "main", Title: "小"}} }, "one of the plugin's screens"},
		{"command with two actions", func(p *Plugin) {
			p.Commands = []Command{{Name: "mini", Description: "小", Prompt: "x", Run: func(*Context, string) (string, error) { return "", nil }}}
		}, "exactly one of Prompt, Screen or Run"},
		{"command opening a missing screen", func(p *Plugin) { p.Commands = []Command{{Name: "mini", Description: "小", Screen: "main"}} }, `no screen "main"`},
		{"cloud without disclosure", func(p *Plugin) { p.Cloud = &plugin.Cloud{Uses: []string{"store"}} }, "disclosure"},
		{"cloud with half a disclosure", func(p *Plugin) {
			p.Cloud = &plugin.Cloud{Uses: []string{"store"}, DisclosureZh: []string{"a", "b"}, DisclosureEn: []string{"a"}}
		}, "disclosure"},
		{"legacy tool that still exists", func(p *Plugin) { p.Legacy.Tools = map[string]string{"get": "get"} }, "legacy.tools"},
		{"legacy tool to nothing", func(p *Plugin) { p.Legacy.Tools = map[string]string{"old": "nope"} }, "legacy.tools"},
		{"legacy id that is the id", func(p *Plugin) { p.Legacy.Plugin = []string{"mini"} }, "legacy.plugin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := minimal()
			tc.break_(p)
			_, err := Compile(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Compile: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := Compile(minimal()); err != nil {
		t.Errorf("the minimal plugin: %v", err)
	}
}

func TestHostRefusesBadRegistrations(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		bs   []*host.Builtin
		want string
	}{
		{"twice", []*host.Builtin{MustCompile(minimal()).Builtin, MustCompile(minimal()).Builtin}, "registered twice"},
		{"no function", []*host.Builtin{func() *host.Builtin {
			b := *MustCompile(minimal()).Builtin
			b.Funcs = nil
			return &b
		}()}, "has no function"},
		{"former id taken", []*host.Builtin{func() *host.Builtin {
			p := minimal()
			p.Legacy.Plugin = []string{"focus"}
			return MustCompile(p).Builtin
		}(), MustCompile(Focus).Builtin}, "former id focus is taken"},
	} {
		if _, err := host.New(e.db, host.WithBuiltins(tc.bs...)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestLegacyNames(t *testing.T) {
	p := minimal()
	p.ID = "mini-two"
	p.Legacy = Legacy{Plugin: []string{"mini"}, Tools: map[string]string{"fetch": "get"}}
	e := newEnvWith(t, MustCompile(p))
	// A schedule saved with the old plugin id and tool name still runs the tool.
	got := e.ok(t, host.ActorUser, "mini", "fetch", `{"text":"x"}`)
	if got != `{"text":"x"}` {
		t.Errorf("legacy call: %s", got)
	}
	var n int
	if err := e.db.SQL.QueryRow(`SELECT COUNT(*) FROM audit WHERE plugin = 'mini-two' AND tool = 'get'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("audited as mini-two.get: %d %v", n, err)
	}
}

// TestSchemasArePlain: every built-in tool's input schema is already in the
// plain subset MCP serves (mcpx.PlainSchema changes nothing).
func TestSchemasArePlain(t *testing.T) {
	for _, c := range All() {
		for _, tool := range c.Plugin.Tools {
			s := host.InputSchema(tool)
			if got, want := jsonOf(t, mustValue(t, mcpx.PlainSchema(s))), jsonOf(t, mustValue(t, s)); got != want {
				t.Errorf("%s.%s: not plain:\n%s\n%s", c.Plugin.Manifest.ID, tool.Name, got, want)
			}
		}
	}
}

func mustValue(t *testing.T, v any) any {
	t.Helper()
	x, err := viaJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestRunContext(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	todos := Of(e.h, "todos")
	if s, err := RunContext(ctx, e.h, todos, "还有什么没做"); err != nil || s != "" {
		t.Errorf("no to-dos: %q %v", s, err)
	}
	e.ok(t, host.ActorUser, "todos", "add", `{"title":"交作业","due":"2026-10-21 18:00"}`)
	if s, err := RunContext(ctx, e.h, todos, "还有什么没做"); err != nil || s != `open to-dos: 1; due within a day: "交作业" (id 1) due 2026-10-21 18:00` {
		t.Errorf("context: %q %v", s, err)
	}
	slow := minimal()
	slow.ID = "slow"
	slow.Context = func(c *Context, _ string) (string, error) {
		<-c.Done()
		return "too late", nil
	}
	start := time.Now()
	_, err := RunContext(ctx, e.h, MustCompile(slow), "q")
	if err == nil || !strings.Contains(err.Error(), "took longer than 800ms") || time.Since(start) > 5*time.Second {
		t.Errorf("slow context: %v after %s", err, time.Since(start))
	}
	failing := minimal()
	failing.Context = func(*Context, string) (string, error) { return "", errors.New("boom") }
	if _, err := RunContext(ctx, e.h, MustCompile(failing), "q"); err == nil || err.Error() != "boom" {
		t.Errorf("failing context: %v", err)
	}
}
