package canteen

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// DefaultAddr is where the demo listens without --addr: loopback, on the port of the
// README's port map (8787 `harness cloud serve`, 8788 `harness serve`, 8790 this demo,
// 8791 templates/remote-plugin), so that all of them run side by side.
const DefaultAddr = "127.0.0.1:8790"

// Main runs the demo server with command-line args until ctx ends and returns an exit code
// (0 after a clean stop, 1 when it cannot listen, 2 on bad flags). Flags: --addr HOST:PORT
// (default DefaultAddr; $ADDR and $PORT, when set, change the default host and port) and
// --token T (default $PLUGIN_TOKEN when set, else DemoToken; "" serves without a token). It
// prints "MCP plugin ready on http://ADDR/mcp" to stdout once it accepts connections.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo-canteen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host, port, _ := net.SplitHostPort(DefaultAddr)
	if a := os.Getenv("ADDR"); a != "" {
		host = a
	}
	if p := os.Getenv("PORT"); p != "" {
		port = p
	}
	token, set := os.LookupEnv("PLUGIN_TOKEN")
	if !set {
		token = DemoToken
	}
	addr := fs.String("addr", net.JoinHostPort(host, port), "address to listen on (loopback by default: the demo is for local testing)")
	fs.StringVar(&token, "token", token, "bearer token clients must send; empty for none")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "demo-canteen: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", Handler(token))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "demo-canteen:", err, "(pick another port with --addr)")
		return 1
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(stdout, "MCP plugin ready on http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "demo-canteen:", err)
		return 1
	}
	return 0
}
