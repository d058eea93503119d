package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTemplate runs the template's handler and calls hello through the
// official client, with and without the token.
func TestTemplate(t *testing.T) {
	srv := httptest.NewServer(handler("secret"))
	defer srv.Close()
	ctx := context.Background()
	connect := func(token string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			if token != "" {
				r = r.Clone(r.Context())
				r.Header.Set("Authorization", "Bearer "+token)
			}
			return http.DefaultTransport.RoundTrip(r)
		})}
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
		return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	}
	if _, err := connect(""); err == nil {
		t.Fatal("connect without token: no error")
	}
	cs, err := connect("secret")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "my-plugin" {
		t.Errorf("server name %q, want my-plugin", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": "燕园"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.StructuredContent.(map[string]any)
	if res.IsError || got["greeting"] != "你好,燕园" {
		t.Errorf("hello: isError %v, structuredContent %#v", res.IsError, res.StructuredContent)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
