package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/plugin"
)

// memRemotes is an in-memory Remotes: one plugin whose tools echo their
// input.
type memRemotes struct {
	p     *RemotePlugin
	calls []string
}

func (m *memRemotes) List(ctx context.Context) ([]*RemotePlugin, error) {
	return []*RemotePlugin{m.p}, nil
}

func (m *memRemotes) Get(ctx context.Context, id string) (*RemotePlugin, error) {
	if id != m.p.ID {
		return nil, &NotFound{What: fmt.Sprintf("no remote plugin %q is installed", id)}
	}
	return m.p, nil
}

func (m *memRemotes) CallTool(ctx context.Context, id, tool string, input json.RawMessage) (json.RawMessage, error) {
	m.calls = append(m.calls, tool+" "+string(input))
	return json.RawMessage(`{"echo":` + string(input) + `}`), nil
}

func (m *memRemotes) SetMode(ctx context.Context, id string, e plugin.Effect, mode Mode) error {
	if _, err := m.Get(ctx, id); err != nil {
		return err
	}
	m.p.Modes[e] = mode
	return nil
}

func (m *memRemotes) SetEnabled(ctx context.Context, id string, on bool) error {
	if _, err := m.Get(ctx, id); err != nil {
		return err
	}
	m.p.Enabled = on
	return nil
}

func (m *memRemotes) Remove(ctx context.Context, id string) error { return errors.New("not here") }

// TestRemotePlugins: a remote plugin is listed beside the host's own (kind
// remote, Community), its tools are offered to the agent as untrusted, and
// its calls go through Decide, confirmations, taint and the audit log.
func TestRemotePlugins(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, demo("1.0.0"))
	e.install(t, "https://plugins.example.org/demo/PLUGIN.md")
	if err := e.h.SetMode(ctx, "demo", plugin.EffectWrite, ModeAuto); err != nil {
		t.Fatal(err)
	}
	mem := &memRemotes{p: &RemotePlugin{
		ID: "mcp-shop", Name: "Shop", URL: "https://shop.example/mcp", Enabled: true,
		Modes: map[plugin.Effect]Mode{plugin.EffectRead: ModeAuto, plugin.EffectWrite: ModeAsk, plugin.EffectMoney: ModeAsk, plugin.EffectPublic: ModeAsk},
		Tools: []RemoteTool{
			{Name: "look", Title: "Look", Effect: plugin.EffectRead, InputSchema: map[string]any{"type": "object"}},
			{Name: "buy", Title: "Buy", Effect: plugin.EffectWrite, InputSchema: map[string]any{"type": "object"}},
		},
	}}
	e.h.remotes = mem

	list, err := e.h.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := list[len(list)-1]
	if last.ID != "mcp-shop" || last.Kind != KindRemote || last.Official || last.Source != "https://shop.example/mcp" || len(last.Declarations.Tools) != 2 {
		t.Errorf("listed as %+v", last)
	}
	tools, err := e.h.AgentTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, at := range tools {
		if at.Remote {
			names = append(names, fmt.Sprintf("%s:%s:%v", at.Name, at.Mode, at.Untrusted))
		}
	}
	if got := strings.Join(names, " "); got != "mcp-shop__look:auto:true mcp-shop__buy:ask:true" {
		t.Errorf("agent tools %s", got)
	}

	// A write in ask mode waits for the person; approved, it runs.
	r, err := e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "mcp-shop", Tool: "buy", Input: mustJSON(t, `{"n":1}`), Turn: "t1"})
	if err != nil || r.Confirmation == nil || r.Confirmation.Reason != "write tools of this plugin are set to ask" {
		t.Fatalf("agent buy = %+v, %v", r, err)
	}
	if r, err = e.h.Confirm(ctx, r.Confirmation.ID, true); err != nil || !r.Untrusted || jsonOf(t, r.Value) != `{"echo":{"n":1}}` {
		t.Fatalf("confirmed buy = %+v, %v", r, err)
	}
	// A remote read taints the turn: the host's own auto write now asks.
	if r, err = e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "mcp-shop", Tool: "look", Turn: "t2"}); err != nil || !r.Untrusted {
		t.Fatalf("look = %+v, %v", r, err)
	}
	if r, err = e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "note", Input: mustJSON(t, `{"text":"x"}`), Turn: "t2"}); err != nil || r.Confirmation == nil {
		t.Errorf("tainted host write = %+v, %v; want a confirmation", r, err)
	}
	// Modes set through the host reach the remote plugin; deny refuses.
	if err := e.h.SetMode(ctx, "mcp-shop", plugin.EffectWrite, ModeDeny); err != nil {
		t.Fatal(err)
	}
	var ref *Refusal
	if _, err = e.h.Call(ctx, CallRequest{Actor: ActorUser, Plugin: "mcp-shop", Tool: "buy"}); !errors.As(err, &ref) {
		t.Errorf("denied buy: %v", err)
	}
	if _, err = e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "mcp-shop", Tool: "nope"}); err == nil || err.Error() != `host: plugin mcp-shop has no tool "nope"` {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err = e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "nope", Tool: "x"}); err == nil || err.Error() != `host: no plugin "nope" is installed` {
		t.Errorf("unknown plugin: %v", err)
	}
	audit, err := e.h.Audit(ctx, "mcp-shop", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range audit {
		got = append(got, fmt.Sprintf("%s %s %s", a.Actor, a.Tool, a.Outcome))
	}
	if s := strings.Join(got, ", "); s != "user buy refused, agent look ok, agent buy ok, agent buy approved, agent buy confirm" {
		t.Errorf("audit: %s", s)
	}
	if s := strings.Join(mem.calls, ", "); s != `buy {"n":1}, look {}` {
		t.Errorf("remote calls: %s", s)
	}
}
