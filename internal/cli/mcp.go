package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/mcpx"
)

// MCPTokenEnv names the environment variable `harness serve` reads its
// bearer token from when --token is not given (the optional bearer
// token, docs/HOST-API.md): it keeps the token out of the process list.
const MCPTokenEnv = "HARNESS_MCP_TOKEN"

func init() {
	Register(&Command{
		Path:    "mcp",
		Usage:   "[--data DIR]",
		Summary: "serve the installed plugins' tools to an MCP client over stdio (register this command with the client)",
		Run:     runMCP,
		Flags:   hostFlagsOnly,
	})
	RegisterServeSetup(mcpServe)
	// Remote plugins are a kind of host plugin: listed, permission-checked
	// and audited by the host for every command.
	RegisterHostSetup(func(db *store.DB) ([]host.Option, error) {
		return []host.Option{host.WithRemotes(mcpx.NewRegistry(db).HostRemotes())}, nil
	})
}

// runMCP is `harness mcp`: the MCP server over stdin/stdout until the
// client closes the stream. Logs go to stderr, never stdout (it carries
// the protocol).
func runMCP(env *Env) int {
	const name = "harness mcp"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var hf hostFlags
	hf.register(fs)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: unexpected argument %q\nusage: %s [--data DIR]\n", name, fs.Arg(0), name)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, db, err := openHost(ctx, &hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	s := mcpx.NewServer(&mcpx.HostBackend{Host: h}, mcpx.Options{Version: Version})
	srv, err := s.MCP(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	// The line filter answers bad lines itself (JSON-RPC -32700/-32600), so one
	// bad line never ends the session.
	rw := mcpx.NewStdio(env.Stdin, env.Stdout)
	t := &mcp.IOTransport{Reader: rw, Writer: rw}
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	return ExitOK
}

// mcpServe mounts /mcp on `harness serve`: Streamable HTTP with sessions
// (and a conservative sessionless path, see mcpx.Handler) behind the API's
// guard (the bearer token of --token, or else the loopback Host
// check). It also adds GET /v1/remote-plugins, the installed remote
// plugins as JSON (never their tokens).
func mcpServe(ctx context.Context, h *host.Host, s *api.Server) error {
	reg := mcpx.NewRegistry(h.Store())
	srv := mcpx.NewServer(&mcpx.HostBackend{Host: h}, mcpx.Options{Version: Version})
	// A session's GET is its notification stream: it holds one of the API's stream slots,
	// counted against the session (the SDK allows one such stream a session).
	s.HandleProtocol("/mcp", "Mcp-Session-Id", s.LimitStreams(mcpx.Handler(srv, "", slog.Default()),
		func(r *http.Request) bool { return r.Method == http.MethodGet },
		func(r *http.Request) string { return "mcp session " + r.Header.Get("Mcp-Session-Id") }))
	s.HandleFunc("GET /v1/remote-plugins", func(w http.ResponseWriter, r *http.Request) error {
		list, err := reg.List(r.Context())
		if err != nil {
			return err
		}
		if list == nil {
			list = []*mcpx.RemotePlugin{}
		}
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(map[string]any{"plugins": list})
	})
	return nil
}
