package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/fnrun"
	"github.com/pkuinfo/harness/cloud/server/natsbus"
	"github.com/pkuinfo/harness/cloud/server/pgstore"
	"github.com/pkuinfo/harness/cloud/viewer"
)

func init() {
	Register(&Command{
		Path:    "cloud serve",
		Usage:   "[--addr HOST:PORT] [--db FILE|postgres://…] [--nats nats://…] [--origin URL] [flags]",
		Summary: "run the PKU harness Cloud reference server (SQLite, or PostgreSQL + NATS for several nodes; stops on Ctrl-C)",
		Run: func(env *Env) int {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return CloudServe(ctx, env)
		},
	})
}

// CloudServe runs `harness cloud serve` until ctx ends (the command passes a context that
// SIGINT and SIGTERM cancel), then closes every socket with 1001 and the database. It prints
// one line `harness cloud: serving http://ADDR (database FILE)` when it listens. Exit codes:
// 0 after a clean stop, 1 when the server cannot start or fails, 2 on bad flags.
func CloudServe(ctx context.Context, env *Env) int {
	fs := flag.NewFlagSet("harness cloud serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	def := server.DefaultConfig(nil)
	addr := fs.String("addr", "127.0.0.1:8787", "address to listen on")
	db := fs.String("db", "", "SQLite database file (default $XDG_DATA_HOME/harness/cloud.db), or a postgres:// URL shared by several nodes")
	origin := fs.String("origin", "", "public origin clients sign as aud, e.g. https://cloud.example.org (default: http://ADDR for a specific address, else each request's Host)")
	difficulty := fs.Int("difficulty", def.PowDifficulty, "proof-of-work difficulty in bits (0–28)")
	operator := fs.String("operator", def.Operator.Name, "operator name shown in GET /v1/meta")
	contact := fs.String("contact", "", "operator contact shown in GET /v1/meta")
	privacy := fs.String("privacy-url", "", "privacy policy URL shown in GET /v1/meta")
	regs := fs.Int("registrations-per-hour", def.Registrations.Quota, "device registrations per client IP per hour")
	joins := fs.Int64("joins-per-min", def.Limits.JoinsPerIPPerMin, "channel joins (and channel info reads) per client IP per minute")
	requests := fs.Int("requests-per-min", 600, "requests with a plugin token per device per minute")
	frames := fs.Int64("frames-per-min", def.Limits.Channels.FramesPerMin, "frames per minute per party (the owner gets this × maxPeers)")
	xff := fs.Bool("trust-forwarded-for", false, "take the client IP from X-Forwarded-For (only behind a proxy that sets it)")
	wsOrigins := fs.String("ws-origins", "", "comma-separated extra Origin host patterns allowed to open sockets")
	natsURL := fs.String("nats", "", "NATS server URL(s), comma-separated: relay between several nodes sharing a postgres:// --db")
	node := fs.String("node", "", "this node's name on the NATS bus (default: the host name and a random suffix)")
	quiet := fs.Bool("quiet", false, "log warnings and errors only")
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "harness cloud serve: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	if *difficulty < 0 || *difficulty > protocol.MaxPowDifficulty {
		fmt.Fprintf(env.Stderr, "harness cloud serve: --difficulty %d: want 0–%d\n", *difficulty, protocol.MaxPowDifficulty)
		return ExitUsage
	}
	if *regs < 1 || *joins < 1 || *frames < 1 || *requests < 1 {
		fmt.Fprintln(env.Stderr, "harness cloud serve: rate limits must be at least 1")
		return ExitUsage
	}
	if *natsURL != "" && !isPostgresURL(*db) {
		fmt.Fprintln(env.Stderr, "harness cloud serve: --nats needs a --db postgres://… shared by every node (a SQLite file is one node's)")
		return ExitUsage
	}
	st, dbName, err := openCloudStorage(ctx, *db)
	if err != nil {
		fmt.Fprintln(env.Stderr, "harness cloud serve:", err)
		return ExitFail
	}
	defer st.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(env.Stderr, "harness cloud serve:", err)
		return ExitFail
	}
	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelWarn
	}
	cfg := server.DefaultConfig(st)
	cfg.Origin = *origin
	if cfg.Origin == "" {
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsUnspecified() {
			cfg.Origin = "http://" + ln.Addr().String()
		}
	}
	cfg.PowDifficulty = *difficulty
	cfg.Operator = protocol.Operator{Name: *operator, Contact: *contact, PrivacyURL: *privacy}
	cfg.Registrations.Quota = *regs
	cfg.RequestsPerDevice = server.RatePolicy{Name: "requests", Quota: *requests, Window: time.Minute}
	cfg.Limits.JoinsPerIPPerMin = *joins
	cfg.Limits.Channels.FramesPerMin = *frames
	cfg.TrustForwardedFor = *xff
	if *wsOrigins != "" {
		cfg.WebSocketOrigins = strings.Split(*wsOrigins, ",")
	}
	cfg.Pages = viewer.FS()
	cfg.Logger = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	if fns, err := cloudFunctions(ctx, st, cfg.Logger); err != nil {
		ln.Close()
		fmt.Fprintln(env.Stderr, "harness cloud serve:", err)
		return ExitUsage
	} else if fns != nil {
		cfg.Functions = fns
	}
	if *natsURL != "" {
		if *node == "" {
			host, _ := os.Hostname()
			*node = strings.NewReplacer(".", "-", " ", "-").Replace(host) + "-" + randomSuffix()
		}
		bus, err := natsbus.Connect(*natsURL, "harness-cloud "+*node, cfg.Logger)
		if err != nil {
			ln.Close()
			fmt.Fprintln(env.Stderr, "harness cloud serve:", err)
			return ExitFail
		}
		defer bus.Close()
		cfg.Bus, cfg.Node = bus, *node
		dbName += ", node " + *node + " on NATS"
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		ln.Close()
		fmt.Fprintln(env.Stderr, "harness cloud serve:", err)
		return ExitFail
	}
	fmt.Fprintf(env.Stdout, "harness cloud: serving http://%s (database %s)\n", ln.Addr(), dbName)
	err = srv.Serve(ctx, ln)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(env.Stderr, "harness cloud serve:", err)
		return ExitFail
	}
	fmt.Fprintln(env.Stdout, "harness cloud: stopped")
	return ExitOK
}

// openCloudStorage opens the server's Storage: PostgreSQL for a postgres:// or postgresql:// URL
// (several nodes may share it), else the SQLite file db (default $XDG_DATA_HOME/harness/cloud.db).
// The name returned is what the server prints: the file, or the URL without its password.
func openCloudStorage(ctx context.Context, db string) (server.Storage, string, error) {
	if isPostgresURL(db) {
		name := "postgres"
		if u, err := url.Parse(db); err == nil {
			u.RawQuery = ""
			name = u.Redacted()
		}
		st, err := pgstore.Open(ctx, db)
		return st, name, err
	}
	if db == "" {
		dir, err := dataDir()
		if err != nil {
			return nil, "", err
		}
		db = filepath.Join(dir, "cloud.db")
	}
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		return nil, "", err
	}
	st, err := server.OpenSQLite(ctx, db)
	if err != nil {
		return nil, "", err
	}
	return st, db, nil
}

// cloudFunctions reads the operator's server-function policy from the environment (seed 003
// “服务端函数”): CLOUD_FN_POLICY=off (default: no functions, 501 unsupported) | verified |
// allowlist | open, CLOUD_FN_ALLOWLIST (LINK@sha256:HEX, comma-separated) and the secrets
// CLOUD_FN_SECRET_<PLUGIN>_<NAME>. Nil when off.
func cloudFunctions(ctx context.Context, st server.Storage, log *slog.Logger) (server.Functions, error) {
	policy, err := fnrun.ParsePolicy(os.Getenv("CLOUD_FN_POLICY"))
	if err != nil || policy == fnrun.PolicyOff {
		return nil, err
	}
	allow, err := fnrun.ParseAllowlist(os.Getenv("CLOUD_FN_ALLOWLIST"))
	if err != nil {
		return nil, err
	}
	r, err := fnrun.New(fnrun.Config{Policy: policy, Allow: allow, Storage: st})
	if err != nil {
		return nil, err
	}
	if err := r.Preload(ctx); err != nil {
		log.Warn("server functions: allowlisted documents not loaded", "err", err)
	}
	log.Info("server functions on", "policy", string(policy), "allowlisted", len(allow))
	return r, nil
}

func isPostgresURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// randomSuffix is 6 random hex digits.
func randomSuffix() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// dataDir is $XDG_DATA_HOME/harness, else ~/.local/share/harness (XDG Base Directory spec).
func dataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "harness"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no data directory: %w (use --db)", err)
	}
	return filepath.Join(home, ".local", "share", "harness"), nil
}
