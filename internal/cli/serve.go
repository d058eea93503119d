package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/internal/msg"
)

// DefaultServeAddr is where `harness serve` listens without --addr: loopback
// only, since without --token the API has no authentication.
const DefaultServeAddr = "127.0.0.1:8788"

func init() {
	Register(&Command{
		Path:    "serve",
		Usage:   "[--addr HOST:PORT] [--token TOKEN] [--data DIR] [--no-update]",
		Summary: "run the host: installed plugins, permissions and abilities behind the JSON API of docs/HOST-API.md",
		Run: func(env *Env) int {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Serve(ctx, env, nil)
		},
		Flags: func(fs *flag.FlagSet) { serveFlags(fs) },
	})
}

// serveOpts are the flags of `harness serve`.
type serveOpts struct {
	hf          hostFlags
	addr, token *string
	noUpdate    *bool
}

// serveFlags defines the flags of `harness serve` on fs and returns them.
func serveFlags(fs *flag.FlagSet) *serveOpts {
	o := &serveOpts{}
	o.hf.register(fs)
	o.addr = fs.String("addr", DefaultServeAddr, "address to listen on (loopback only unless --token is set)")
	o.token = fs.String("token", "", "require \"Authorization: Bearer TOKEN\" on /mcp and /v1 (default $"+MCPTokenEnv+"); needed to listen beyond loopback")
	o.noUpdate = fs.Bool("no-update", false, "do not check plugins for updates (otherwise at start and then hourly, each plugin at most once a day)")
	return o
}

// Serve runs `harness serve` until ctx ends: it opens the data directory,
// installs the bundled official plugins on first start, listens, prints
// `harness serve: listening on http://ADDR (data DIR)`, then checks for
// plugin updates in the background (at start and hourly, each plugin at
// most once a day, seed 004 "Updates"), drops old audit entries and long-expired KV entries
// (Host.Housekeeping), and runs the ServeSetups (the scheduler). ready, when not
// nil, receives the address once the server accepts connections. Exit codes:
// 0 after a clean stop, 1 when it cannot start, 2 on bad flags.
//
// With --token T (or, without the flag, $HARNESS_MCP_TOKEN) every request,
// to /mcp and to /v1, must send "Authorization: Bearer T" (issue 5
// "optional bearer token"). Without a token serve listens on loopback only:
// any other --addr is refused (exit 2).
func Serve(ctx context.Context, env *Env, ready chan<- string) int {
	const name = "harness serve"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	o := serveFlags(fs)
	hf, addr, token, noUpdate := &o.hf, o.addr, o.token, o.noUpdate
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: unexpected argument %q\n", name, fs.Arg(0))
		return ExitUsage
	}
	hostName, _, err := net.SplitHostPort(*addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: --addr %q: %v\n", name, *addr, err)
		return ExitUsage
	}
	if *token == "" {
		*token = os.Getenv(MCPTokenEnv)
	}
	if ip := net.ParseIP(hostName); *token == "" && hostName != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(env.Stderr, "%s: --addr %q is not a loopback address: pass --token TOKEN (or set $%s) so that only clients with the token get in\n",
			name, *addr, MCPTokenEnv)
		return ExitUsage
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	h, db, err := openHost(ctx, hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	srv := api.New(h, api.Options{Log: log, Token: *token})
	for _, s := range serveSetups {
		if err := s(ctx, h, srv); err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		hint := ""
		if errors.Is(err, syscall.EADDRINUSE) {
			hint = " (is another harness serve running? pick another port with --addr)"
		}
		fmt.Fprintf(env.Stderr, "%s: %v%s\n", name, err, hint)
		return ExitFail
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second, // a tool may run for 60 s
		IdleTimeout:       2 * time.Minute,
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	fmt.Fprintf(env.Stdout, "%s: listening on http://%s (data %s)\n", name, ln.Addr(), db.Dir())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	// Background work ends with ctx and is waited for before the database closes.
	var bg sync.WaitGroup
	defer bg.Wait()
	bg.Go(func() {
		if a, kv, err := h.Housekeeping(ctx); err != nil && ctx.Err() == nil {
			log.Warn("housekeeping", "err", err)
		} else if a+kv > 0 {
			log.Info("housekeeping", "audit entries dropped", a, "expired kv entries dropped", kv)
		}
	})
	if !*noUpdate {
		// At start, then hourly: AutoUpdate itself checks each plugin at most once a day, so a
		// serve that runs for days still picks up updates.
		bg.Go(func() {
			tick := time.NewTicker(time.Hour)
			defer tick.Stop()
			for {
				outs, err := h.AutoUpdate(ctx)
				if err != nil && ctx.Err() == nil {
					log.Warn("update check", "err", err)
				}
				for _, o := range outs {
					if o.Status != host.StatusSkipped && o.Status != host.StatusCurrent {
						log.Info("update check", "plugin", o.ID, "result", describe(msg.En, o, "update"))
					}
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	select {
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}
	return ExitOK
}
