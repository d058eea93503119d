package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/internal/msg"
)

// DefaultServeAddr is where `harness serve` listens without --addr: loopback
// only, since without --token the API has no authentication.
const DefaultServeAddr = "127.0.0.1:8788"

func init() {
	Register(&Command{
		Path:    "serve",
		Usage:   "[--addr HOST:PORT] [--token TOKEN | --token-generate] [--data DIR] [--no-update]",
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
	hf                 hostFlags
	addr, token        *string
	noUpdate, generate *bool
}

// serveFlags defines the flags of `harness serve` on fs and returns them.
func serveFlags(fs *flag.FlagSet) *serveOpts {
	o := &serveOpts{}
	o.hf.register(fs)
	o.addr = fs.String("addr", DefaultServeAddr, "address to listen on (loopback only unless --token is set)")
	o.token = fs.String("token", "", "require \"Authorization: Bearer TOKEN\" on /mcp and /v1 (default $"+MCPTokenEnv+"); needed to listen beyond loopback")
	o.generate = fs.Bool("token-generate", false, "make a new random token, store it in DIR/"+tokenFile+" (0600; later runs of serve use it when neither --token nor $"+MCPTokenEnv+" is set), print it and exit")
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
// With --token T (or, without the flag, $HARNESS_MCP_TOKEN, or else the
// token stored in DIR/serve-token by --token-generate) every request, to
// /mcp and to /v1, must send "Authorization: Bearer T" (docs/HOST-API.md,
// the optional bearer token). A token under 128 bits is refused (api.CheckToken, exit
// 2). --token-generate makes a new token, stores it in DIR/serve-token
// (0600), prints it on stdout and exits. Without a token serve listens on
// loopback only: any other --addr is refused (exit 2).
func Serve(ctx context.Context, env *Env, ready chan<- string) int {
	const name = "harness serve"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	o := serveFlags(fs)
	hf, addr, token, generate, noUpdate := &o.hf, o.addr, o.token, o.generate, o.noUpdate
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
	if *generate {
		if *token != "" {
			fmt.Fprintf(env.Stderr, "%s: --token-generate makes a new token: leave out --token\n", name)
			return ExitUsage
		}
		return generateToken(env, name, hf)
	}
	from := "--token"
	if *token == "" {
		*token, from = os.Getenv(MCPTokenEnv), "$"+MCPTokenEnv
	}
	if *token == "" {
		t, file, err := storedToken(hf)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		*token, from = t, file
	}
	if *token != "" {
		if err := api.CheckToken(*token); err != nil {
			fmt.Fprintf(env.Stderr, "%s: %s: %v\n", name, from, err)
			return ExitUsage
		}
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
	srv, err := serveAPI(ctx, h, api.Options{Log: log, Token: *token})
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
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
	if *token != "" {
		fmt.Fprintf(env.Stderr, "%s: every request must send \"Authorization: Bearer TOKEN\" with the token of %s\n", name, from)
	}
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
	bg.Go(func() { closePendingLoop(ctx, h, log) })
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

// serveAPI is the handler of `harness serve`: the API of h with every
// ServeSetup's routes (/mcp, abilities, campus) added.
func serveAPI(ctx context.Context, h *host.Host, opts api.Options) (*api.Server, error) {
	srv := api.New(h, opts)
	for _, s := range serveSetups {
		if err := s(ctx, h, srv); err != nil {
			return nil, err
		}
	}
	return srv, nil
}

// tokenFile is where `harness serve --token-generate` stores its token, in
// the data directory.
const tokenFile = "serve-token"

// hostDataDir is the data directory of hf: --data, else store.DefaultDir.
func hostDataDir(hf *hostFlags) (string, error) {
	if hf.data != "" {
		return hf.data, nil
	}
	return store.DefaultDir()
}

// generateToken is `harness serve --token-generate`: a new token, stored
// (replacing any older one) in DIR/serve-token with mode 0600, printed on
// stdout.
func generateToken(env *Env, name string, hf *hostFlags) int {
	dir, err := hostDataDir(hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	tok := api.GenerateToken()
	file := filepath.Join(dir, tokenFile)
	tmp, err := os.CreateTemp(dir, tokenFile+".*")
	if err == nil {
		_, err = tmp.WriteString(tok + "\n")
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), file) // CreateTemp made it 0600
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: storing the token: %v\n", name, err)
		return ExitFail
	}
	fmt.Fprintln(env.Stdout, tok)
	fmt.Fprintf(env.Stderr, "%s: stored a new token in %s (mode 0600); from now on harness serve requires it unless --token or $%s gives another: send \"Authorization: Bearer TOKEN\"\n",
		name, file, MCPTokenEnv)
	return ExitOK
}

// storedToken reads DIR/serve-token: "" when there is none; an error when
// others than its owner may read it or when it holds no token.
func storedToken(hf *hostFlags) (tok, file string, err error) {
	dir, err := hostDataDir(hf)
	if err != nil {
		return "", "", err
	}
	file = filepath.Join(dir, tokenFile)
	fi, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", file, nil
	}
	if err != nil {
		return "", file, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", file, fmt.Errorf("%s is mode %04o: others may read the token; run chmod 600 %s (or --token-generate a new one)", file, fi.Mode().Perm(), file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", file, err
	}
	tok = strings.TrimSpace(string(b))
	if tok == "" {
		// An emptied file must not turn the token off without a word.
		return "", file, fmt.Errorf("%s is empty: run harness serve --token-generate for a new token, or delete the file to serve loopback without one", file)
	}
	return tok, file, nil
}
