// Command demo-canteen is the demo remote plugin (seed 003
// §快速上手:远程插件): mock canteen menus and seat reservations over
// stateless Streamable HTTP on 127.0.0.1:8790/mcp, bearer token demo-token.
//
//	go run ./examples/demo-canteen                            # http://127.0.0.1:8790/mcp
//	go run ./examples/demo-canteen --addr 127.0.0.1:9000 --token ''   # another port, no token
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := canteen.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
