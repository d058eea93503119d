package mcpx

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientHeader is the request header through which Handler names a
// sessionless client to the tool handlers (any value the client sends is
// replaced).
const ClientHeader = "X-Pku-Harness-Client"

// SessionIdle is how long a /mcp session may stay idle before it is closed.
const SessionIdle = 30 * time.Minute

// MaxSessions is how many /mcp sessions may be open at once; an initialize
// beyond it is answered 503 (with Retry-After) until one ends or idles out.
const MaxSessions = 64

// Handler serves s over Streamable HTTP (/mcp on harness serve, with
// sessions; docs/HOST-API.md). A request body is at most MaxLine bytes.
// A client that initializes gets a session (Mcp-Session-Id): its requests
// share one turn, so the taint of an untrusted result and elicitation carry
// across requests, and it may open the GET stream for notifications
// (tools/list_changed); a session idle for SessionIdle is closed, DELETE
// ends it, and at most MaxSessions are open at once. A request without a session that is not initialize (clients of
// the sessionless protocol, or ones that drop the id) is served statelessly
// and conservatively: all such requests of one client — named by its
// bearer token, else its IP address — share one turn, so an untrusted result
// taints that client's later writes until the host's TaintTTL passes.
//
// When token is not empty, a request without "Authorization: Bearer
// <token>" is answered 401 with the JSON-RPC error -32001 "unauthorized",
// as remote plugins do (`harness serve` leaves token empty and checks it in
// host/api). The SDK's DNS-rebinding protection stays on. Errors building
// the server are logged to log (nil: slog.Default()) and answered 400 by
// the SDK.
func Handler(s *Server, token string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	stateful := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, err := s.sharedServer(r)
		if err != nil {
			log.Error("mcp: build server", "err", err)
			return nil
		}
		return srv
	}, &mcp.StreamableHTTPOptions{SessionTimeout: SessionIdle})
	stateless := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, err := s.build(r.Context(), true)
		if err != nil {
			log.Error("mcp: build server", "err", err)
			return nil
		}
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(ClientHeader)
		r.Header.Set(ClientHeader, clientName(r)) // a session's reads count for its client too (HostBackend)
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			stateful.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxLine))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("Request Entity Too Large: a message is at most %d bytes", MaxLine), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "Bad Request: the body cannot be read", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if isInitialize(body) {
			if srv, err := s.sharedServer(r); err == nil && countSessions(srv) >= MaxSessions {
				w.Header().Set("Retry-After", "60")
				http.Error(w, fmt.Sprintf("Service Unavailable: %d MCP sessions are open; close one (DELETE /mcp) or wait for an idle one to end", MaxSessions), http.StatusServiceUnavailable)
				return
			}
			stateful.ServeHTTP(w, r)
			return
		}
		stateless.ServeHTTP(w, r)
	})
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

// sharedServer is the one *mcp.Server of Handler's sessions (each session
// its own turn, by its id), built on first use.
func (s *Server) sharedServer(r *http.Request) (*mcp.Server, error) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.shared != nil {
		return s.shared, nil
	}
	srv, err := s.build(r.Context(), false)
	if err != nil {
		return nil, err
	}
	s.shared = srv
	return srv, nil
}

// countSessions is the number of open sessions of srv.
func countSessions(srv *mcp.Server) int {
	n := 0
	for range srv.Sessions() {
		n++
	}
	return n
}

// isInitialize reports whether body is a JSON-RPC initialize request.
func isInitialize(body []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}

// clientName names a sessionless client: a digest of its Authorization
// header when it sends one, else its IP address.
func clientName(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		sum := sha256.Sum256([]byte(a))
		return "token-" + hex.EncodeToString(sum[:8])
	}
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		h = r.RemoteAddr
	}
	return "addr-" + h
}
