package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
)

// harnessBinary links the test binary as "harness": TestMain
// (testscript.Main) runs Main when the program is called by that name.
func harnessBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "harness")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPSubprocess is the "done when": add-remote installs
// demo-canteen (refused without the token), then the SDK's client runs
// `harness mcp --data DIR` as a real subprocess, lists the official
// plugins' tools and the remote ones, calls shuttle__next offline and
// mcp-demo-canteen__menu, and sees the remote write tool refused (this
// client cannot elicit) with how to allow it.
func TestMCPSubprocess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	data := t.TempDir()
	mux := http.NewServeMux()
	mux.Handle("/mcp", canteen.Handler(canteen.DemoToken))
	demo := httptest.NewServer(mux)
	defer demo.Close()
	url := demo.URL + "/mcp"

	var out, errb bytes.Buffer
	if code := Main([]string{"plugins", "add-remote", "--data", data, "--yes", url}, strings.NewReader(""), &out, &errb); code != ExitFail ||
		!strings.Contains(errb.String(), "the server wants a bearer token (HTTP 401); add it with --token") {
		t.Fatalf("add-remote without token: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main([]string{"plugins", "add-remote", "--data", data, "--token", canteen.DemoToken, url}, strings.NewReader("y\n"), &out, &errb); code != ExitOK {
		t.Fatalf("add-remote: exit %d, stderr %q", code, errb.String())
	}
	if !strings.Contains(out.String(), "Remote plugin mcp-demo-canteen") || !strings.Contains(out.String(), "installed mcp-demo-canteen (2 tools)") || strings.Contains(out.String(), canteen.DemoToken) {
		t.Errorf("add-remote printed:\n%s", out.String())
	}

	out.Reset()
	if code := Main([]string{"plugins", "list-remote", "--json", "--data", data}, strings.NewReader(""), &out, &errb); code != ExitOK {
		t.Fatalf("list-remote: exit %d, stderr %q", code, errb.String())
	}
	for _, want := range []string{`"id": "mcp-demo-canteen"`, `"hasToken": true`, `"read": "auto"`, `"write": "ask"`, `"remote": "reserveSeat"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list-remote --json lacks %s:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), canteen.DemoToken) {
		t.Error("list-remote shows the token")
	}

	// The host lists it as a plugin of kind remote, and updates its tool list.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plugins", "list"}, "mcp-demo-canteen remote   Community 演示食堂\n"},
		{[]string{"plugins", "show", "mcp-demo-canteen"}, "  kind:        Community, remote\n"},
		{[]string{"plugins", "show", "mcp-demo-canteen"}, "  modes:       read=auto write=ask money=ask public=ask\n  tools:\n    menu [read] untrusted\n    reserveSeat [write] untrusted\n"},
		{[]string{"plugins", "update", "mcp-demo-canteen"}, "mcp-demo-canteen: already up to date (remote)\n"},
		{[]string{"plugins", "mode", "mcp-demo-canteen", "money", "deny"}, "mcp-demo-canteen: money tools deny\n"},
		{[]string{"plugins", "show", "mcp-demo-canteen"}, "  modes:       read=auto write=ask money=deny public=ask\n"},
	} {
		out.Reset()
		if code := Main(append(tc.args, "--data", data), strings.NewReader(""), &out, &errb); code != ExitOK || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out.String(), errb.String(), tc.want)
		}
	}

	cmd := exec.Command(harnessBinary(t), "mcp", "--data", data)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"shuttle__next", "classrooms__free", "canteen__status", "mcp-demo-canteen__menu", "mcp-demo-canteen__reserveSeat"} {
		if !names[want] {
			t.Errorf("%s is not listed", want)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shuttle__next", Arguments: map[string]any{"from": "燕园", "at": "2026-12-01 07:30"}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), `"at":"2026-12-01 07:30"`) {
		t.Errorf("shuttle__next: %v %s", err, toolText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp-demo-canteen__menu", Arguments: map[string]any{"canteen": "农园", "meal": "lunch"}})
	if err != nil || res.IsError || !strings.HasSuffix(toolText(res), `{"canteen":"农园","meals":{"lunch":[{"name":"烤鸭饭","price":16},{"name":"地三鲜","price":7}]}}`) {
		t.Errorf("menu: %v %s", err, toolText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp-demo-canteen__reserveSeat", Arguments: map[string]any{"canteen": "农园", "name": "小明"}})
	// After the remote plugin's untrusted result, the session's next call of a third
	// party asks, whatever the mode; this client cannot ask, so it is refused.
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "No setting allows it without asking") {
		t.Errorf("reserveSeat without elicitation: %v %v %s", err, res.IsError, toolText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp-demo-canteen__menu", Arguments: map[string]any{"canteen": "清华"}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "a party you have not vouched for") {
		t.Errorf("menu after an untrusted result: %v %s", err, toolText(res))
	}

	// A second client that can elicit: the person is asked and accepts.
	asked := 0
	cmd2 := exec.Command(harnessBinary(t), "mcp", "--data", data)
	cmd2.Stderr = os.Stderr
	el, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		}}).Connect(ctx, &mcp.CommandTransport{Command: cmd2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer el.Close()
	res, err = el.CallTool(ctx, &mcp.CallToolParams{Name: "mcp-demo-canteen__reserveSeat", Arguments: map[string]any{"canteen": "农园", "name": "小明"}})
	if err != nil || res.IsError || asked != 1 || !strings.HasSuffix(toolText(res), `{"canteen":"农园","left":2,"seat":1}`) {
		t.Errorf("reserveSeat confirmed: %v, asked %d, %s", err, asked, toolText(res))
	}
}

// TestMCPServe drives /mcp on a real `harness serve` (in-process, loopback,
// token from $HARNESS_MCP_TOKEN, the fallback of --token) with the SDK's client: the token, the
// list with plain schemas, a read call, a failing call, and the official
// grades__sendCode (write, ask) refused and then confirmed through
// elicitation (it fails after that: no verify ability is signed in).
func TestMCPServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Setenv(MCPTokenEnv, "s3cret-s3cret-s3cret-s3cret")
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() {
		done <- Serve(ctx, &Env{Args: []string{"--addr", "127.0.0.1:0", "--no-update", "--data", t.TempDir()}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	defer func() { cancel(); <-done }()
	dial := func(token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: bearerRT(token)}
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	}
	if _, err := dial("", nil); err == nil {
		t.Error("connected without the token")
	}
	for _, tc := range []struct{ token, want string }{
		{"", `{"error":{"code":"unauthorized","message":"send the token of harness serve as \"Authorization: Bearer TOKEN\""}}` + "\n"},
		{"s3cret-s3cret-s3cret-s3cret", "{\"plugins\":[]}\n"},
	} {
		resp, err := (&http.Client{Transport: bearerRT(tc.token)}).Get("http://" + addr + "/v1/remote-plugins")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != tc.want {
			t.Errorf("GET /v1/remote-plugins with token %q: %d %q, want %q", tc.token, resp.StatusCode, body, tc.want)
		}
	}
	cs, err := dial("s3cret-s3cret-s3cret-s3cret", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var next *mcp.Tool
	for _, tool := range list.Tools {
		if tool.Name == "shuttle__next" {
			next = tool
		}
	}
	if next == nil || next.Annotations == nil || !next.Annotations.ReadOnlyHint {
		t.Fatalf("shuttle__next listed as %+v", next)
	}
	schema := mustJSONString(t, next.InputSchema)
	for _, want := range []string{`"pattern":"^(\\d{4}-\\d{2}-\\d{2} )?\\d{1,2}:\\d{2}$"`, `"type":"object"`, `"additionalProperties":false`} {
		if !strings.Contains(schema, want) {
			t.Errorf("schema %s lacks %s", schema, want)
		}
	}
	for _, bad := range []string{"$ref", "$defs", "anyOf", "oneOf"} {
		if strings.Contains(schema, bad) {
			t.Errorf("schema has %s", bad)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shuttle__next", Arguments: map[string]any{"from": "燕园", "at": "2026-12-01 07:30"}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), `"at":"2026-12-01 07:30"`) {
		t.Errorf("shuttle__next: %v %s", err, toolText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "shuttle__next", Arguments: map[string]any{"at": "25:99:00"}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "at") {
		t.Errorf("bad input: %v %v %s", err, res.IsError, toolText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "grades__sendCode", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "harness plugins mode grades write auto") {
		t.Errorf("ask refused: %v %v %s", err, res.IsError, toolText(res))
	}
	asked := 0
	el, err := dial("s3cret-s3cret-s3cret-s3cret", &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer el.Close()
	res, err = el.CallTool(ctx, &mcp.CallToolParams{Name: "grades__sendCode", Arguments: map[string]any{}})
	if err != nil || asked != 1 || strings.Contains(toolText(res), "cannot ask the user") {
		t.Errorf("ask confirmed: %v, asked %d, %s", err, asked, toolText(res))
	}
}

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b != "" {
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mustJSONString(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
