package mcpx

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/plugin"
)

// TestHTTPTaintAcrossRequests: over /mcp, an untrusted result in one
// request taints the writes of the same client in later requests — on a
// session (Mcp-Session-Id), and for a client that keeps no session (by its
// address) — while another session and another address start clean. notes
// is a Community plugin, so every result of it is untrusted; its writes are
// set to auto, so only the taint can make them ask.
func TestHTTPTaintAcrossRequests(t *testing.T) {
	ctx := context.Background()
	h, ts, dial := httpClients(t)
	call := func(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	write := map[string]any{"text": "x"}

	// A client of protocol 2025-06-18 initializes and keeps a session.
	a := dial("2025-06-18")
	if a.ID() == "" {
		t.Fatal("no Mcp-Session-Id: /mcp keeps no session")
	}
	// The first call of the session runs; a Community plugin's result is
	// untrusted, and after it every call that reaches a third party asks.
	if res := call(a, "notes__echo", map[string]any{"word": "hi"}); res.IsError || res.Meta[UntrustedMeta] != true {
		t.Fatalf("the untrusted read: %v %s", res.Meta, text(res))
	}
	if res := call(a, "notes__add", write); !res.IsError || !strings.Contains(text(res), "untrusted") {
		t.Errorf("a write in the next request of the tainted session ran: %s", text(res))
	}
	if res := call(dial("2025-06-18"), "notes__add", write); res.IsError {
		t.Errorf("another session's write: %s", text(res))
	}
	// A session whose client can elicit is asked (elicitation/create on the session) instead.
	var asked []string
	el, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{ElicitationHandler: elicit(true, &asked)}).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer el.Close()
	call(el, "notes__echo", map[string]any{"word": "hi"})
	if res := call(el, "notes__add", write); res.IsError || len(asked) != 1 || !strings.Contains(asked[0], "untrusted") {
		t.Errorf("a tainted write on a session that can elicit: %s, asked %q", text(res), asked)
	}

	// A client of the sessionless protocol (2026-07-28, the SDK's default)
	// keeps none: its requests are one turn by its address.
	m := dial("")
	if m.ID() != "" {
		t.Fatalf("a sessionless client got session %q", m.ID())
	}
	// It is the same client (this address) as the sessions above, which read
	// untrusted text: dropping the session does not shed what they read.
	if res := call(m, "notes__echo", map[string]any{"word": "hi"}); !res.IsError || !strings.Contains(text(res), "untrusted") {
		t.Fatalf("the sessionless call of a client whose sessions read untrusted text ran: %v %s", res.Meta, text(res))
	}
	if res := call(m, "notes__add", write); !res.IsError || !strings.Contains(text(res), "untrusted") {
		t.Errorf("a sessionless write after an untrusted read ran: %s", text(res))
	}

	// Without a session: each POST is on its own, but the client is the same.
	post := func(from, body string) string {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(body))
		req.RemoteAddr = from
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(ClientHeader, "spoofed") // replaced by Handler
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Result().Body)
		if rec.Code != http.StatusOK {
			t.Fatalf("POST %s: %d %s", body, rec.Code, b)
		}
		return string(b)
	}
	const (
		read  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes__echo","arguments":{"word":"hi"}}}`
		wrote = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notes__add","arguments":{"text":"y"}}}`
	)
	if got := post("192.0.2.5:1000", read); !strings.Contains(got, UntrustedMeta) {
		t.Fatalf("sessionless read: %s", got)
	}
	if got := post("192.0.2.5:2000", wrote); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "untrusted") {
		t.Errorf("a sessionless write after an untrusted read from the same address ran: %s", got)
	}
	if got := post("192.0.2.6:1000", wrote); strings.Contains(got, `"isError":true`) {
		t.Errorf("another address's write: %s", got)
	}
}

// TestToolListFollowsOtherProcesses: the cached tool list is keyed by the
// host's change counter, which moves when another process changes a mode
// (a trigger on the table), not when a call is audited.
func TestToolListFollowsOtherProcesses(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	cs := connect(t, NewServer(e.b, Options{}), nil)
	has := func() bool {
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			if tool.Name == "notes__add" {
				return true
			}
		}
		return false
	}
	if !has() {
		t.Fatal("notes__add not listed")
	}
	before, _ := e.db.Changes(ctx)
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shuttle__next", Arguments: map[string]any{"from": "燕园"}}); err != nil || res.IsError {
		t.Fatalf("call: %v %s", err, text(res))
	}
	if after, _ := e.db.Changes(ctx); after != before {
		t.Errorf("a call moved the change counter %d → %d", before, after)
	}
	// As `harness plugins mode notes write deny` in another process would.
	if _, err := e.db.SQL.Exec(`UPDATE modes SET mode = 'deny' WHERE plugin = 'notes' AND effect = 'write'`); err != nil {
		t.Fatal(err)
	}
	if has() {
		t.Error("notes__add still listed after its mode became deny")
	}
}

// TestHTTPSessionCap: initialize beyond MaxSessions open sessions is 503; closing one makes room.
func TestHTTPSessionCap(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	ts := httptest.NewServer(Handler(NewServer(e.b, Options{}), "", nil))
	defer ts.Close()
	dial := func() (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	}
	var open []*mcp.ClientSession
	for range MaxSessions {
		cs, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, cs)
	}
	if _, err := dial(); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("session %d: %v", MaxSessions+1, err)
	}
	open[0].Close()
	cs, err := dial()
	if err != nil {
		t.Fatalf("after closing one: %v", err)
	}
	cs.Close()
	for _, cs := range open[1:] {
		cs.Close()
	}
}

// httpClients serves /mcp over a test env whose Community plugin notes has its
// writes at auto (so only taint makes them ask), and returns the handler, its
// server, and dial, which opens a client session of the given protocol
// version ("" for the sessionless default), closed at the test's end.
func httpClients(t *testing.T) (http.Handler, *httptest.Server, func(version string) *mcp.ClientSession) {
	t.Helper()
	e := newTestEnv(t)
	ctx := context.Background()
	if err := e.h.SetMode(ctx, "notes", plugin.EffectWrite, host.ModeAuto); err != nil {
		t.Fatal(err)
	}
	h := Handler(NewServer(e.b, Options{}), "", nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	dial := func(version string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	return h, ts, dial
}
