package mcpx

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/plugin"
)

// TestListTools: the listed tools (names, titles, annotations, schemas) are
// the golden file; userOnly and onDemand tools are absent; every name and
// schema obeys the model-provider rules.
func TestListTools(t *testing.T) {
	e := newTestEnv(t)
	cs := connect(t, NewServer(e.b, Options{}), nil)
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, tool := range res.Tools {
		if !ValidModelName(tool.Name) {
			t.Errorf("%q breaks the model name rule", tool.Name)
		}
		if p := schemaProblems(tool.InputSchema, tool.Name); len(p) > 0 {
			t.Errorf("schema not plain: %v", p)
		}
		if strings.HasPrefix(tool.Name, "notes__") || strings.HasPrefix(tool.Name, "a-plugin") || tool.Name == UseTool {
			b, _ := json.MarshalIndent(tool, "", "  ")
			sb.Write(b)
			sb.WriteString("\n")
		} else {
			sb.WriteString(tool.Name + " " + mustJSON(tool.Annotations) + "\n")
		}
	}
	golden(t, "tools.golden", []byte(sb.String()))
	for _, tool := range res.Tools {
		switch tool.Name {
		case "notes__secret", "notes__later":
			t.Errorf("%s is listed", tool.Name)
		}
	}
	if cs.InitializeResult().Instructions == "" || !strings.Contains(cs.InitializeResult().Instructions, "Use `notes__add`") {
		t.Errorf("instructions: %q", cs.InitializeResult().Instructions)
	}
}

// TestCallTool covers reads, the shuttle offline, error mapping and
// unknown arguments.
func TestCallTool(t *testing.T) {
	e := newTestEnv(t)
	srv := NewServer(e.b, Options{})
	tests := []struct {
		name, tool, args string
		isError          bool
		want             string // structuredContent JSON, or the error text
	}{
		{"read", "notes__echo", `{"word":"hi","tags":["a"]}`, false, `{"count":2,"day":"today","loud":false,"tags":["a"],"word":"hi"}`},
		{"list result wrapped", ModelName("a-plugin-id-that-is-long-enough-to-matter", "aToolNameThatIsAlsoQuiteLongForTestingI2"), `{}`, false, `{"result":[1,2]}`},
		{"check fails", "notes__fail", `{"reason":"nope"}`, true, "笔记失败: nope"},
		{"bad input", "notes__echo", `{"word":"HI"}`, true, "word"},
		{"missing field", "notes__echo", `{}`, true, "word"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A session of its own: notes is a Community plugin, and after one of
			// its untrusted results a session's next call of a third party asks.
			cs := connect(t, srv, nil)
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.isError {
				t.Fatalf("isError %v, want %v: %s", res.IsError, tc.isError, text(res))
			}
			if tc.isError {
				if !strings.Contains(text(res), tc.want) {
					t.Errorf("error %q does not mention %q", text(res), tc.want)
				}
				return
			}
			if got := mustJSON(res.StructuredContent); got != tc.want {
				t.Errorf("structuredContent %s, want %s", got, tc.want)
			}
			if text(res) == "" {
				t.Error("no JSON text")
			}
		})
	}
	cs := connect(t, srv, nil)
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "shuttle__next", Arguments: map[string]any{"from": "燕园", "at": "2026-12-01 07:30"}})
	if err != nil || res.IsError {
		t.Fatalf("shuttle__next: %v %s", err, text(res))
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if sc["at"] != "2026-12-01 07:30" || sc["directions"] == nil {
		t.Errorf("shuttle__next: %s", mustJSON(res.StructuredContent))
	}
}

// TestAskTool: a write tool in ask mode is refused with how to allow it
// when the client cannot elicit, runs after the person accepts, and is
// refused when they decline.
func TestAskTool(t *testing.T) {
	e := newTestEnv(t)
	s := NewServer(e.b, Options{})
	args := map[string]any{"text": "买牛奶"}

	plain := connect(t, s, nil)
	res, err := plain.CallTool(ctxT(t), &mcp.CallToolParams{Name: "notes__add", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "cannot ask the user") || !strings.Contains(text(res), "harness plugins mode notes write auto") {
		t.Errorf("without elicitation: isError %v %q", res.IsError, text(res))
	}

	var asked []string
	yes := connect(t, s, &mcp.ClientOptions{ElicitationHandler: elicit(true, &asked)})
	res, err = yes.CallTool(ctxT(t), &mcp.CallToolParams{Name: "notes__add", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || mustJSON(res.StructuredContent) != `{"length":3,"saved":"买牛奶"}` || last(res) != `{"saved":"买牛奶","length":3}` {
		t.Errorf("accepted: isError %v %s %s", res.IsError, mustJSON(res.StructuredContent), text(res))
	}
	if res.Meta[UntrustedMeta] != true { // notes is a Community plugin
		t.Errorf("a Community plugin's result without %s: %v", UntrustedMeta, res.Meta)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "记笔记") || !strings.Contains(asked[0], `"买牛奶"`) {
		t.Errorf("asked %q", asked)
	}

	asked = nil
	no := connect(t, s, &mcp.ClientOptions{ElicitationHandler: elicit(false, &asked)})
	res, err = no.CallTool(ctxT(t), &mcp.CallToolParams{Name: "notes__add", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "the user declined") || len(asked) != 1 {
		t.Errorf("declined: isError %v %q, asked %d", res.IsError, text(res), len(asked))
	}
}

// TestOnDemand: plugins__use offers a plugin's onDemand tools (with a
// tools/list_changed on the live session); untrusted results are marked.
func TestOnDemand(t *testing.T) {
	e := newTestEnv(t)
	changed := make(chan struct{}, 4)
	cs := connect(t, NewServer(e.b, Options{}), &mcp.ClientOptions{ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: UseTool, Arguments: map[string]any{"plugin": "notes"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	if got := mustJSON(res.StructuredContent); got != `{"plugin":"notes","tools":["notes__later"]}` {
		t.Errorf("plugins__use: %s", got)
	}
	select {
	case <-changed:
	case <-ctxT(t).Done():
		t.Fatal("no tools/list_changed")
	}
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "notes__later"})
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	if res.Meta[UntrustedMeta] != true || !strings.Contains(text(res), "third-party data") {
		t.Errorf("untrusted result not marked: meta %v, text %q", res.Meta, text(res))
	}
	res, _ = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: UseTool, Arguments: map[string]any{"plugin": "shuttle"}})
	if !res.IsError {
		t.Error("plugins__use shuttle: no error")
	}
}

// TestLiveList: on a stateful session, tools follow the host while the
// client is connected: a disabled plugin's tools go, a mode set to deny
// hides its tools, and a client calling a gone tool gets an error.
func TestLiveList(t *testing.T) {
	e := newTestEnv(t)
	changed := make(chan struct{}, 16)
	cs := connect(t, NewServer(e.b, Options{}), &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	names := func() string {
		res, err := cs.ListTools(ctxT(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			if strings.HasPrefix(tool.Name, "notes__") || tool.Name == UseTool {
				out = append(out, tool.Name)
			}
		}
		return strings.Join(out, " ")
	}
	if got := names(); got != "notes__add notes__echo notes__fail plugins__use" {
		t.Fatalf("before: %s", got)
	}
	if err := e.h.SetMode(ctxT(t), "notes", plugin.EffectWrite, host.ModeDeny); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "notes__echo notes__fail plugins__use" {
		t.Errorf("write denied: %s", got)
	}
	if err := e.h.SetEnabled(ctxT(t), "notes", false); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "" {
		t.Errorf("disabled: %s", got)
	}
	select {
	case <-changed:
	case <-ctxT(t).Done():
		t.Error("no tools/list_changed")
	}
	if _, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "notes__echo", Arguments: map[string]any{"word": "a"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "notes__echo"`) {
		t.Errorf("call of a gone tool: %v", err)
	}
}
