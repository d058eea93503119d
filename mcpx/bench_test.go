package mcpx

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/expr"
)

// BenchmarkCallHostTool: one tools/call of shuttle__next (offline) through
// an in-memory MCP session and the host.
func BenchmarkCallHostTool(b *testing.B) {
	e := newTestEnv(b)
	cs := connect(b, NewServer(e.b, Options{}), nil)
	args := map[string]any{"from": "燕园", "at": "2026-12-01 07:30"}
	for b.Loop() {
		if res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "shuttle__next", Arguments: args}); err != nil || res.IsError {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallRemote: one remote call of demo-canteen's menu over loopback
// HTTP (a session per call: initialize, initialized, tools/call).
func BenchmarkCallRemote(b *testing.B) {
	url := demoCanteen(b)
	c := &RemoteClient{URL: url, Token: canteen.DemoToken}
	args := json.RawMessage(`{"canteen":"学一"}`)
	for b.Loop() {
		if _, err := c.Call(b.Context(), "menu", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallHostToolNoSync is BenchmarkCallHostTool without the tool
// list check before each call (as on stateless HTTP): the difference is
// what following the host's changes costs.
func BenchmarkCallHostToolNoSync(b *testing.B) {
	e := newTestEnv(b)
	cs := connect(b, NewServer(e.b, Options{Stateless: true}), nil)
	args := map[string]any{"from": "燕园", "at": "2026-12-01 07:30"}
	for b.Loop() {
		if res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "shuttle__next", Arguments: args}); err != nil || res.IsError {
			b.Fatal(err)
		}
	}
}

// BenchmarkHostCallDirect is the same call as BenchmarkCallHostTool made
// straight through Host.Call (as the agent, one turn): the difference
// between the two is what MCP adds (goal at most 0.5 ms, docs/PERFORMANCE.md "Host").
func BenchmarkHostCallDirect(b *testing.B) {
	e := newTestEnv(b)
	in, err := expr.FromJSON(json.RawMessage(`{"from":"燕园","at":"2026-12-01 07:30"}`))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.h.Call(b.Context(), host.CallRequest{Actor: host.ActorAgent, Plugin: "shuttle", Tool: "next", Input: in, Turn: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
