package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/mcpx"
)

// TestCrossFaceTaint: one tainted turn is decided alike from every face — the
// chat's own call, a button of a card the assistant drew in that turn (even
// after the turn ended, whatever actor the page claims), a drawn handle the
// host does not know, an MCP session, and the API with a turn — and nothing
// reaches lookup's website without a yes.
func TestCrossFaceTaint(t *testing.T) {
	e, rec := exfilEnv(t)
	ctx := context.Background()
	srv := httptest.NewServer(api.New(e.h, api.Options{}))
	t.Cleanup(srv.Close)
	call := func(body string) (int, map[string]any) {
		t.Helper()
		res, err := http.Post(srv.URL+"/v1/tools/lookup__lookup/call", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return res.StatusCode, out
	}
	why := func(out map[string]any) any {
		c, _ := out["confirmation"].(map[string]any)
		return c["why"]
	}

	// The chat: the model reads the board, then draws a card with a lookup button.
	doc := `{"ui":1,"kind":"screen","title":"查询","root":{"type":"Button","text":"查","action":{"tool":"lookup__lookup","args":{"q":"x"}}}}`
	c, err := e.agent.Conversations.Create(ctx, "draw")
	if err != nil {
		t.Fatal(err)
	}
	var drawn string
	var evs []Event
	for _, msg := range []string{"call: inject__feed {}", "render: " + doc} {
		err = e.agent.Turn(ctx, c.ID, msg, &person{}, func(ev Event) {
			evs = append(evs, ev)
			if ev.Type == "tool_result" && ev.Tool == "ui__render" {
				var r struct {
					Drawn string `json:"drawn"`
				}
				_ = json.Unmarshal(ev.Result, &r)
				drawn = r.Drawn
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if drawn == "" {
		t.Fatalf("ui__render gave no drawn handle:\n%s", brief(evs))
	}
	// The render was in the conversation's second turn, which held the first's
	// untrusted result: its buttons are decided under that, after the turn ended.
	for _, body := range []string{
		`{"actor":"agent","drawn":"` + drawn + `","input":{"q":"x"}}`,
		`{"actor":"user","drawn":"` + drawn + `","input":{"q":"x"}}`, // the page cannot make it the person's tap
		`{"actor":"agent","drawn":"-","input":{"q":"x"}}`,            // a handle the host does not know
		`{"actor":"user","drawn":"d-forged","input":{"q":"x"}}`,
	} {
		code, out := call(body)
		if code != http.StatusAccepted || why(out) != host.WhyThirdParty {
			t.Errorf("%s: %d %v", body, code, out)
		}
	}
	if code, out := call(`{"actor":"agent","drawn":"` + drawn + `","turn":"t","input":{"q":"x"}}`); code != http.StatusBadRequest {
		t.Errorf("drawn and turn: %d %v", code, out)
	}

	// The API with a turn of its own: the same rule.
	if code, _ := call(`{"actor":"agent","turn":"api-1","input":{"q":"x"}}`); code != http.StatusOK {
		t.Errorf("the API's first call of a fresh turn: %d", code)
	}
	if code, out := call(`{"actor":"agent","turn":"api-1","input":{"q":"y"}}`); code != http.StatusAccepted || why(out) != host.WhyThirdParty {
		t.Errorf("the API after an untrusted result: %d %v", code, out)
	}

	// MCP: a session is one turn; a client that cannot ask is refused.
	ms, err := mcpx.NewServer(&mcpx.HostBackend{Host: e.h}, mcpx.Options{}).MCP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "inject__feed", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("MCP feed: %v %v", err, res)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup__lookup", Arguments: map[string]any{"q": "z"}})
	if err != nil || !res.IsError {
		t.Fatalf("MCP lookup after the feed ran: %v %v", err, res)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if !strings.Contains(text, "a party you have not vouched for") {
		t.Errorf("MCP refusal: %s", text)
	}

	// Only the API's first call, made in a fresh turn, reached the website.
	if got := rec.queries(); got != "q=x" {
		t.Errorf("the recorder received %q", got)
	}
}
