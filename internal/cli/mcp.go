package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/mcpx"
)

// MCPTokenEnv names the environment variable `harness serve` reads its
// bearer token from when --token is not given (issue 5 "optional bearer
// token"): it keeps the token out of the process list.
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
	rw := &stdio{in: env.Stdin, out: env.Stdout}
	t := &mcp.IOTransport{Reader: rw, Writer: rw}
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	return ExitOK
}

// mcpServe mounts /mcp on `harness serve`: stateless Streamable HTTP behind
// the API's guard (the bearer token of --token, or else the loopback Host
// check). It also adds GET /v1/remote-plugins, the installed remote
// plugins as JSON (never their tokens).
func mcpServe(ctx context.Context, h *host.Host, s *api.Server) error {
	reg := mcpx.NewRegistry(h.Store())
	srv := mcpx.NewServer(&mcpx.HostBackend{Host: h}, mcpx.Options{Version: Version, Stateless: true})
	s.Handle("/mcp", mcpx.Handler(srv, "", slog.Default()))
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

// stdio carries the MCP session over the command's streams. It counts the
// requests read and the responses written, so that at the end of stdin it
// waits (up to stdioDrain) for the answers still owed before reporting EOF:
// `harness mcp < session.jsonl` then prints every answer. A client that
// keeps stdin open never notices.
type stdio struct {
	in  io.Reader
	out io.Writer

	mu      sync.Mutex
	pending int
	inBuf   []byte
	outBuf  []byte
}

// stdioDrain bounds the wait for answers after stdin ends: a tool run has
// at most 60 s (interp).
const stdioDrain = 65 * time.Second

// frame is what stdio reads of a JSON-RPC message.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (s *stdio) Read(p []byte) (int, error) {
	n, err := s.in.Read(p)
	s.mu.Lock()
	s.inBuf = scanFrames(append(s.inBuf, p[:n]...), func(f frame) {
		if f.Method != "" && len(f.ID) > 0 {
			s.pending++
		}
	})
	s.mu.Unlock()
	if err == io.EOF {
		for end := time.Now().Add(stdioDrain); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			s.mu.Lock()
			done := s.pending <= 0
			s.mu.Unlock()
			if done {
				break
			}
		}
	}
	return n, err
}

func (s *stdio) Write(p []byte) (int, error) {
	n, err := s.out.Write(p)
	s.mu.Lock()
	s.outBuf = scanFrames(append(s.outBuf, p[:n]...), func(f frame) {
		if f.Method == "" && len(f.ID) > 0 {
			s.pending--
		}
	})
	s.mu.Unlock()
	return n, err
}

// Close does not close the process's own streams.
func (s *stdio) Close() error { return nil }

// scanFrames calls fn for each complete line of buf that is a JSON object
// and returns the incomplete rest.
func scanFrames(buf []byte, fn func(frame)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return buf
		}
		var f frame
		if json.Unmarshal(buf[:i], &f) == nil {
			fn(f)
		}
		buf = buf[i+1:]
	}
}
