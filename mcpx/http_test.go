package mcpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type tokenRT struct{ token string }

func (t tokenRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if t.token != "" {
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTP drives /mcp (stateless Streamable HTTP) with the official
// client: the token, listing, a read call, an ask call confirmed through
// elicitation (multi round-trip) and refused without it.
func TestHTTP(t *testing.T) {
	e := newTestEnv(t)
	ts := httptest.NewServer(Handler(NewServer(e.b, Options{Stateless: true}), "s3cret", nil))
	defer ts.Close()
	dial := func(token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts).Connect(ctxT(t),
			&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: tokenRT{token}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	}
	if _, err := dial("", nil); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("without token: %v", err)
	}
	cs, err := dial("s3cret", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	if !names["shuttle__next"] || !names["notes__add"] || names["notes__secret"] {
		t.Errorf("listed %v", names)
	}
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "shuttle__next", Arguments: map[string]any{"from": "燕园", "at": "08:00"}})
	if err != nil || res.IsError {
		t.Fatalf("shuttle__next: %v %s", err, text(res))
	}
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "notes__add", Arguments: map[string]any{"text": "x"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "harness plugins mode notes write auto") {
		t.Errorf("ask without elicitation: %v %v %q", err, res.IsError, text(res))
	}
	var asked []string
	el, err := dial("s3cret", &mcp.ClientOptions{ElicitationHandler: elicit(true, &asked)})
	if err != nil {
		t.Fatal(err)
	}
	defer el.Close()
	res, err = el.CallTool(ctxT(t), &mcp.CallToolParams{Name: "notes__add", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError || last(res) != `{"saved":"x","length":1}` || len(asked) != 1 || res.Meta[UntrustedMeta] != true {
		t.Errorf("ask with elicitation: %v %v %q, asked %q", err, res != nil && res.IsError, text(res), asked)
	}
}
