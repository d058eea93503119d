package mcpx

import (
	"crypto/subtle"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler serves s over stateless Streamable HTTP (issue 5 "/mcp on harness
// serve"): each request gets an *mcp.Server built from the tools offered at
// that moment. When token is not empty, a request without
// "Authorization: Bearer <token>" is answered 401 with the JSON-RPC error
// -32001 "unauthorized", as remote plugins do. The SDK's own DNS-rebinding
// protection stays on; loopback-only listening is the caller's choice.
// Errors building the server are logged to log (nil: slog.Default()) and
// answered 400 by the SDK.
func Handler(s *Server, token string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, err := s.MCP(r.Context())
		if err != nil {
			log.Error("mcp: build server", "err", err)
			return nil
		}
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer realm="harness"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"unauthorized"},"id":null}` + "\n"))
			return
		}
		h.ServeHTTP(w, r)
	})
}
