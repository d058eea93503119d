// Command remote-plugin is the template of a PKU harness remote plugin: an
// MCP server over stateless Streamable HTTP, the Go counterpart of the
// seed's TypeScript template (seed 003 §快速上手:远程插件, server.ts). Copy
// this folder, rename the server, replace the hello tool with your own.
//
//	go run .                       # serves http://127.0.0.1:8791/mcp (PORT=N for another port)
//	PLUGIN_TOKEN=secret go run .   # requires "Authorization: Bearer secret"
package main

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HelloInput is the hello tool's input. Every field has a description: the
// host turns the schema into the form the model fills in.
type HelloInput struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// HelloOutput is the hello tool's result; it becomes structuredContent,
// which the host hands to the model as data.
type HelloOutput struct {
	Greeting string `json:"greeting"`
}

// build creates the server and registers the tools. The server's name is
// your registry id: the app installs this plugin as "mcp-" + name.
func build() *mcp.Server {
	server := mcp.NewServer(
		&mcp.Implementation{Name: "my-plugin", Version: "0.1.0", Title: "我的插件"},
		&mcp.ServerOptions{Instructions: "What this plugin is for, in one sentence."},
	)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "hello",
		Title:       "打个招呼",
		Description: "Return a greeting. Replace with a real capability.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in HelloInput) (*mcp.CallToolResult, HelloOutput, error) {
		// With a nil result the SDK sends the output as structuredContent and
		// as its JSON text; a returned error becomes isError: true.
		return nil, HelloOutput{Greeting: "你好," + in.Name}, nil
	})
	return server
}

// handler serves /mcp: the optional bearer check first, then a new server
// for each request (stateless, so any number of processes can serve it).
func handler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return build() },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Optional bearer auth: the user pastes the token in the app, which
		// keeps it in the device keychain.
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"unauthorized"},"id":null}`)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8791"
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler(os.Getenv("PLUGIN_TOKEN")))
	srv := &http.Server{Addr: "127.0.0.1:" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("MCP plugin ready on http://%s/mcp", srv.Addr)
	log.Fatal(srv.ListenAndServe())
}
