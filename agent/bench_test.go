package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// benchProvider answers round 1 with one tool call and round 2 with text,
// building and encoding the SDK request each round as the real provider
// does (so "request built" is in the measure, the model is not).
type benchProvider struct {
	enc *OpenAI
}

func (p *benchProvider) Name() string { return "bench" }

func (p *benchProvider) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Reply, error) {
	body, err := json.Marshal(p.enc.params(req))
	if err != nil {
		return nil, err
	}
	if len(req.ToolsJSON) > 0 { // what Complete's middleware does to the body
		body = spliceTools(body, req.ToolsJSON)
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == RoleTool {
		onDelta(Delta{Text: "ok"})
		return &Reply{Message: Message{Role: RoleAssistant, Content: "ok"}, FinishReason: "stop"}, nil
	}
	return &Reply{Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "bench__t0", Arguments: `{"q":"x"}`}}}, FinishReason: "tool_calls"}, nil
}

type benchIn struct {
	Q string `json:"q,omitempty" jsonschema:"a query" harness:"max=100"`
	N int    `json:"n,omitempty" jsonschema:"a count" harness:"min=1,max=10"`
}

// benchAgent is an agent over 50 tools: 49 of a built-in, and the official documents'.
func benchAgent(b *testing.B, tools int) (*Agent, string) {
	b.Helper()
	p := &builtin.Plugin{ID: "bench", Name: "测试", Description: "基准测试用的插件。", Version: "1.0.0"}
	for i := range tools {
		p.Tools = append(p.Tools, &builtin.Tool{Name: fmt.Sprintf("t%d", i), Title: "工具", Effect: plugin.EffectRead,
			Description: "Use for benchmarks. Returns { q }.",
			Run:         builtin.Func(func(c *builtin.Context, in benchIn) (map[string]any, error) { return map[string]any{"q": in.Q}, nil })})
	}
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "d"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	h, err := host.New(db, builtin.Option(builtin.MustCompile(p)))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.InstallOfficial(context.Background()); err != nil {
		b.Fatal(err)
	}
	enc, _ := NewOpenAI(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, nil)
	a := &Agent{Host: h, Provider: &benchProvider{enc: enc}, Conversations: NewConversations(db, nil)}
	o, err := a.tools(context.Background(), nil)
	if err != nil || len(o.specs) < tools {
		b.Fatalf("%d tools offered: %v", len(o.specs), err)
	}
	c, err := a.Conversations.Create(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return a, c.ID
}

// BenchmarkTurnOneToolRound is a whole turn with one tool round and a
// closing text round, 50+ tools offered: tool table, system prompt,
// request built and encoded twice, the call through Host.Call, the result
// encoded, five rows stored. The model's time is not in it.
func BenchmarkTurnOneToolRound(b *testing.B) {
	a, conv := benchAgent(b, 49)
	ctx := context.Background()
	o, _ := a.tools(ctx, nil)
	b.ReportMetric(float64(len(o.specs)), "tools")
	b.ResetTimer()
	for b.Loop() {
		if err := a.Turn(ctx, conv, "hi", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolTable is what a turn does once (and again after
// plugins__use): list the enabled tools and encode them.
func BenchmarkToolTable(b *testing.B) {
	a, _ := benchAgent(b, 49)
	ctx := context.Background()
	for b.Loop() {
		if _, err := a.tools(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolRound is the loop's own work in one tool round, without
// storage: the request built and encoded with the turn's tool table, the
// call dispatched through Host.Call, the result encoded for the model.
func BenchmarkToolRound(b *testing.B) {
	a, conv := benchAgent(b, 49)
	ctx := context.Background()
	c, _ := a.Conversations.head(ctx, conv)
	t := &turn{a: a, conv: c, id: "turn-bench", emit: func(Event) {}}
	history := []Message{{Role: RoleUser, Content: "hi"}}
	call := ToolCall{ID: "c1", Name: "bench__t0", Arguments: `{"q":"x"}`}
	tools, err := a.tools(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(tools.specs)), "tools")
	b.ResetTimer()
	for b.Loop() {
		req := &Request{Messages: append([]Message{{Role: RoleSystem, Content: tools.system()}}, history...), Tools: tools.specs, ToolsJSON: tools.json}
		if _, err := a.Provider.Complete(ctx, req, nil); err != nil {
			b.Fatal(err)
		}
		if r := t.call(ctx, tools, call); r.failed {
			b.Fatal(r.content)
		}
	}
}

// BenchmarkHostCall is the dispatch alone: one built-in call through
// Host.Call as the agent (the rules, the input check, the audit row).
func BenchmarkHostCall(b *testing.B) {
	a, _ := benchAgent(b, 49)
	ctx := context.Background()
	in, _ := expr.FromJSON([]byte(`{"q":"x"}`))
	for b.Loop() {
		if _, err := a.Host.Call(ctx, host.CallRequest{Actor: host.ActorAgent, Plugin: "bench", Tool: "t0", Input: in, Turn: "t"}); err != nil {
			b.Fatal(err)
		}
	}
}
