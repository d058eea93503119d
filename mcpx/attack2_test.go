package mcpx

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAttack2SessionToSessionless: one client of /mcp (one address, one token) reads untrusted
// text in its session, then sends the next call without the Mcp-Session-Id: the sessionless
// request is decided under the client's sessionless turn, which holds nothing, so what the
// session held is forgotten by dropping a header (and the refusal text itself tells the model
// "use a new session for it"). The same client's turns should hold what any of them read, as the
// sessionless grouping by client already intends.
func TestAttack2SessionToSessionless(t *testing.T) {
	ctx := context.Background()
	h, _, dial := httpClients(t)
	cs := dial("2025-06-18")
	if cs.ID() == "" {
		t.Fatal("no session")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__echo", Arguments: map[string]any{"word": "hi"}})
	if err != nil || res.IsError || res.Meta[UntrustedMeta] != true {
		t.Fatalf("the untrusted read: %v %v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__add", Arguments: map[string]any{"text": "x"}})
	if err != nil || !res.IsError {
		t.Fatalf("the session's own write after untrusted text ran: %v %s", err, text(res))
	}
	// The same client (127.0.0.1, as the session's requests came from), without the session id.
	req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes__add","arguments":{"text":"y"}}}`))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST: %d %s", rec.Code, b)
	}
	if got := string(b); !strings.Contains(got, `"isError":true`) {
		t.Fatalf("the same client's write, sent without its session id after the session read untrusted text, ran: %s", got)
	}
}
