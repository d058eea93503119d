package mcpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/plugin"
)

// TestDescribeDemoCanteen: the demo's tools mapped by the seed's rules,
// with the token, and a clear error without it or with a wrong one.
func TestDescribeDemoCanteen(t *testing.T) {
	url := demoCanteen(t)
	srv, err := (&RemoteClient{URL: url, Token: canteen.DemoToken}).Describe(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, tool := range srv.Tools {
		got = append(got, tool.Name+":"+tool.Effect.String()+":"+tool.Title)
		if p := schemaProblems(tool.InputSchema, tool.Name); len(p) > 0 {
			t.Errorf("schema not plain: %v", p)
		}
	}
	if srv.Name != "demo-canteen" || srv.PluginID != "mcp-demo-canteen" || srv.Title != "演示食堂" ||
		strings.Join(got, " ") != "menu:read:食堂菜单 reserveSeat:write:预约座位" || srv.Instructions != canteen.Instructions {
		t.Errorf("described %+v", srv)
	}
	tests := []struct{ name, token, want string }{
		{"no token", "", "the server wants a bearer token (HTTP 401); add it with --token"},
		{"wrong token", "nope", "the server refused the token (HTTP 401)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&RemoteClient{URL: url, Token: tc.token}).Describe(ctxT(t))
			if err == nil || err.Error() != "remote plugin "+url+": "+tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Error("the token leaked into the error")
			}
		})
	}
	if _, err := (&RemoteClient{URL: "ftp://x/mcp"}).Describe(ctxT(t)); err == nil {
		t.Error("ftp URL accepted")
	}
}

// TestRemoteValue: structuredContent, JSON text, plain text, isError.
func TestRemoteValue(t *testing.T) {
	tests := []struct {
		name    string
		res     *mcp.CallToolResult
		want    string
		wantErr string
	}{
		{"structured", &mcp.CallToolResult{StructuredContent: map[string]any{"a": 1}, Content: []mcp.Content{&mcp.TextContent{Text: "ignored"}}}, `{"a":1}`, ""},
		{"json text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ` [1, 2] `}}}, `[1, 2]`, ""},
		{"plain text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "你好"}}}, `"你好"`, ""},
		{"no content", &mcp.CallToolResult{}, `""`, ""},
		{"error", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "full"}}}, "", "remote tool t failed: full"},
		{"error without text", &mcp.CallToolResult{IsError: true}, "", "remote tool t failed: the tool reported an error without a message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := RemoteValue("t", tc.res)
			if tc.wantErr != "" {
				var re *RemoteError
				if !errors.As(err, &re) || err.Error() != tc.wantErr {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(v) != tc.want {
				t.Errorf("got %s, %v; want %s", v, err, tc.want)
			}
		})
	}
}

// TestRemoteThroughServer: an added remote plugin's tools are listed as
// mcp-demo-canteen__<tool>; menu runs; reserveSeat (write, ask) needs the
// person; a remote isError comes back as isError; the token never shows.
func TestRemoteThroughServer(t *testing.T) {
	e := newTestEnv(t)
	url := demoCanteen(t)
	srv, err := (&RemoteClient{URL: url, Token: canteen.DemoToken}).Describe(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.Add(ctxT(t), srv, canteen.DemoToken); err != nil {
		t.Fatal(err)
	}
	var c *host.Conflict
	if _, err := e.reg.Add(ctxT(t), srv, ""); !errors.As(err, &c) {
		t.Errorf("second add: %v", err)
	}
	var asked []string
	cs := connect(t, NewServer(e.b, Options{}), &mcp.ClientOptions{ElicitationHandler: elicit(true, &asked)})
	list, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tool := range list.Tools {
		if strings.HasPrefix(tool.Name, "mcp-demo-canteen__") {
			found++
			if b, _ := json.Marshal(tool); strings.Contains(string(b), canteen.DemoToken) {
				t.Error("token in the tool list")
			}
		}
	}
	if found != 2 || !strings.Contains(cs.InitializeResult().Instructions, "mcp-demo-canteen is a remote plugin run by a third party") {
		t.Errorf("found %d remote tools; instructions %q", found, cs.InitializeResult().Instructions)
	}
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "mcp-demo-canteen__menu", Arguments: map[string]any{"canteen": "学一", "meal": "breakfast"}})
	if err != nil || res.IsError {
		t.Fatalf("menu: %v %s", err, text(res))
	}
	if got := mustJSON(res.StructuredContent); got != `{"canteen":"学一","meals":{"breakfast":[{"name":"豆浆","price":1},{"name":"油条","price":1.5},{"name":"鸡蛋灌饼","price":4}]}}` {
		t.Errorf("menu: %s", got)
	}
	res, _ = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "mcp-demo-canteen__menu", Arguments: map[string]any{"canteen": "不存在"}})
	if !res.IsError || !strings.Contains(text(res), `unknown canteen "不存在"`) {
		t.Errorf("menu error: %v %q", res.IsError, text(res))
	}
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "mcp-demo-canteen__reserveSeat", Arguments: map[string]any{"canteen": "学五", "name": "小明"}})
	if err != nil || res.IsError {
		t.Fatalf("reserveSeat: %v %s", err, text(res))
	}
	if got := mustJSON(res.StructuredContent); got != `{"canteen":"学五","left":2,"seat":1}` || len(asked) != 2 || !strings.Contains(asked[1], "预约座位") ||
		!strings.Contains(asked[0], "食堂菜单") || !strings.Contains(asked[0], "a party you have not vouched for") {
		// A remote plugin is a third party: after its first (untrusted) result, the
		// session's next call of it asks, a read included.
		t.Errorf("reserveSeat: %s, asked %q", got, asked)
	}

	// Allowing write without asking, then denying it, through the Registry.
	if err := e.reg.SetMode(ctxT(t), "mcp-demo-canteen", plugin.EffectWrite, host.ModeAuto); err != nil {
		t.Fatal(err)
	}
	plain := connect(t, NewServer(e.b, Options{}), nil)
	res, _ = plain.CallTool(ctxT(t), &mcp.CallToolParams{Name: "mcp-demo-canteen__reserveSeat", Arguments: map[string]any{"canteen": "学五", "name": "小红"}})
	if res.IsError || mustJSON(res.StructuredContent) != `{"canteen":"学五","left":1,"seat":2}` {
		t.Errorf("auto: %v %s", res.IsError, text(res))
	}
	if err := e.reg.SetMode(ctxT(t), "mcp-demo-canteen", plugin.EffectWrite, host.ModeDeny); err != nil {
		t.Fatal(err)
	}
	tools, _ := e.b.Tools(ctxT(t))
	for _, tool := range tools {
		if tool.Name == "mcp-demo-canteen__reserveSeat" {
			t.Error("a denied remote tool is listed")
		}
	}

	// The host checked and logged every call, as it does its own plugins'.
	var ref *host.Refusal
	if _, err := e.h.Call(ctxT(t), host.CallRequest{Actor: host.ActorUser, Plugin: "mcp-demo-canteen", Tool: "reserveSeat"}); !errors.As(err, &ref) ||
		ref.Reason != "write tools of this plugin are set to deny" {
		t.Errorf("denied: %v", err)
	}
	log, err := e.h.Audit(ctxT(t), "mcp-demo-canteen", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range log {
		got = append(got, fmt.Sprintf("%s %s %s %s", a.Actor, a.Tool, a.Effect, a.Outcome))
	}
	want := "user reserveSeat write refused|agent reserveSeat write ok|agent reserveSeat write ok|agent reserveSeat write approved|agent reserveSeat write confirm|" +
		"agent menu read error|agent menu read approved|agent menu read confirm|agent menu read ok"
	if strings.Join(got, "|") != want {
		t.Errorf("audit:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

// TestSheet: the review sheet of demo-canteen is the golden file.
func TestSheet(t *testing.T) {
	url := demoCanteen(t)
	srv, err := (&RemoteClient{URL: url, Token: canteen.DemoToken}).Describe(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	srv.URL = "http://127.0.0.1:8787/mcp" // the test server's port changes
	var b strings.Builder
	if err := WriteSheet(&b, srv, true); err != nil {
		t.Fatal(err)
	}
	golden(t, "sheet.golden", []byte(b.String()))
}

// TestTaint: after an untrusted result in a session (a remote tool's, or a
// host tool marked untrusted), the agent's writes in that session need the
// person, even where the mode is auto; a fresh session is clean.
func TestTaint(t *testing.T) {
	e := newTestEnv(t)
	url := demoCanteen(t)
	srv, err := (&RemoteClient{URL: url, Token: canteen.DemoToken}).Describe(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.Add(ctxT(t), srv, canteen.DemoToken); err != nil {
		t.Fatal(err)
	}
	if err := e.h.SetMode(ctxT(t), "notes", plugin.EffectWrite, host.ModeAuto); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.SetMode(ctxT(t), "mcp-demo-canteen", plugin.EffectWrite, host.ModeAuto); err != nil {
		t.Fatal(err)
	}
	s := NewServer(e.b, Options{})
	call := func(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	clean := connect(t, s, nil)
	if res := call(clean, "notes__add", map[string]any{"text": "a"}); res.IsError {
		t.Errorf("clean session, auto write: %s", text(res))
	}

	// A remote read taints the session: the host write now needs the person.
	var asked []string
	cs := connect(t, s, &mcp.ClientOptions{ElicitationHandler: elicit(true, &asked)})
	call(cs, "mcp-demo-canteen__menu", map[string]any{"canteen": "学一"})
	if res := call(cs, "notes__add", map[string]any{"text": "b"}); res.IsError || len(asked) != 1 || !strings.Contains(asked[0], "untrusted third-party text") {
		t.Errorf("tainted host write: %v %s, asked %q", res.IsError, text(res), asked)
	}

	// A host untrusted result taints the session: the remote write asks.
	asked = nil
	cs2 := connect(t, s, &mcp.ClientOptions{ElicitationHandler: elicit(false, &asked)})
	call(cs2, UseTool, map[string]any{"plugin": "notes"})
	call(cs2, "notes__later", nil)
	if res := call(cs2, "mcp-demo-canteen__reserveSeat", map[string]any{"canteen": "学一", "name": "甲"}); !res.IsError || len(asked) != 1 || !strings.Contains(text(res), "the user declined") {
		t.Errorf("tainted remote write: %v %s, asked %q", res.IsError, text(res), asked)
	}
}

// TestBearerStaysHome: the token goes to the plugin's server only, never
// to a host a redirect points at.
func TestBearerStaysHome(t *testing.T) {
	var seen []string
	rec := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.URL.Host+" "+r.Header.Get("Authorization"))
		return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
	})
	b := &bearer{token: "tok", scheme: "https", host: "plugin.example.com", base: rec}
	for _, u := range []string{"https://plugin.example.com/mcp", "https://evil.example.com/mcp", "http://plugin.example.com/mcp"} {
		req, _ := http.NewRequest("POST", u, nil)
		if _, err := b.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if req.Header.Get("Authorization") != "" {
			t.Error("the caller's request was changed")
		}
	}
	want := "plugin.example.com Bearer tok|evil.example.com |plugin.example.com "
	if got := strings.Join(seen, "|"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRemoteTimeout: a server that never answers is cut by the context
// deadline (RemoteClient.Timeout), with a message saying so.
func TestRemoteTimeout(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	start := time.Now()
	_, err := (&RemoteClient{URL: hang.URL + "/mcp", Timeout: 300 * time.Millisecond}).Describe(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Errorf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct{ in, wantErr string }{
		{"https://plugin.example.com/mcp", ""},
		{"http://127.0.0.1:8787/mcp", ""},
		{"http://localhost:8787/mcp", ""},
		{"http://[::1]:8787/mcp", ""},
		{"http://192.168.1.20:8787/mcp", ""},
		{"http://10.0.2.2:8787/mcp", ""},
		{"http://plugin.example.com/mcp", `remote plugin "http://plugin.example.com/mcp": use https; plain http is only for local development (localhost, loopback or private addresses)`},
		{"http://8.8.8.8/mcp", `remote plugin "http://8.8.8.8/mcp": use https; plain http is only for local development (localhost, loopback or private addresses)`},
		{"ftp://x/mcp", `remote plugin "ftp://x/mcp": the URL must be http:// or https:// with a host`},
		{"https:///mcp", `remote plugin "https:///mcp": the URL must be http:// or https:// with a host`},
		{"::", `remote plugin "::": the URL must be http:// or https:// with a host`},
		{"https://alice:s3cret@plugin.example.com/mcp", `remote plugin "https://plugin.example.com/mcp": the URL carries a user name or password, which would be kept and shown with it: give the token with --token instead`},
		{"http://tok@127.0.0.1:8787/mcp", `remote plugin "http://127.0.0.1:8787/mcp": the URL carries a user name or password, which would be kept and shown with it: give the token with --token instead`},
	}
	for _, tc := range tests {
		_, err := CheckURL(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("CheckURL(%q) = %q, want %q", tc.in, got, tc.wantErr)
		}
	}
}
