// Command demo-canteen is the demo remote plugin (seed 003
// §快速上手:远程插件): mock canteen menus and seat reservations over
// stateless Streamable HTTP on :8787/mcp, bearer token demo-token.
//
//	go run ./examples/demo-canteen                 # http://127.0.0.1:8787/mcp
//	PORT=9000 PLUGIN_TOKEN= go run ./examples/demo-canteen   # no token
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo-canteen:", err)
		os.Exit(1)
	}
}

func run() error {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8787"
	}
	token, set := os.LookupEnv("PLUGIN_TOKEN")
	if !set {
		token = canteen.DemoToken
	}
	addr := os.Getenv("ADDR") // default loopback: the demo is for local testing
	if addr == "" {
		addr = "127.0.0.1"
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", canteen.Handler(token))
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, port))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("MCP plugin ready on http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
