package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
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
	"github.com/pkuinfo/harness/host/store"
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
		Flags: func(fs *flag.FlagSet) { cloudServeFlags(fs) },
	})
}

// cloudServeOpts are the flags of `harness cloud serve`.
type cloudServeOpts struct {
	addr       *string
	db         *string
	origin     *string
	difficulty *int
	operator   *string
	contact    *string
	privacy    *string
	regs       *int
	joins      *int64
	requests   *int
	frames     *int64
	xff        *bool
	wsOrigins  *string
	quiet      *bool
	devBytes   *int64
	devPlugins *int64
	natsURL    *string
	node       *string
}

// cloudServeFlags defines the flags of `harness cloud serve` on fs and returns them.
func cloudServeFlags(fs *flag.FlagSet) *cloudServeOpts {
	def := server.DefaultConfig(nil)
	o := &cloudServeOpts{}
	o.addr = fs.String("addr", "127.0.0.1:8787", "address to listen on")
	o.db = fs.String("db", "", "SQLite database file, created 0600 (default $XDG_DATA_HOME/pku-harness/cloud/cloud.db; one from $XDG_DATA_HOME/harness/cloud.db is moved there), or a postgres:// URL shared by several nodes")
	o.origin = fs.String("origin", "", "public origin clients sign as aud, e.g. https://cloud.example.org (default: http://ADDR for a specific address, else each request's Host)")
	o.difficulty = fs.Int("difficulty", def.PowDifficulty, "proof-of-work difficulty in bits (0–28)")
	o.operator = fs.String("operator", def.Operator.Name, "operator name shown in GET /v1/meta")
	o.contact = fs.String("contact", "", "operator contact shown in GET /v1/meta")
	o.privacy = fs.String("privacy-url", "", "privacy policy URL shown in GET /v1/meta")
	o.regs = fs.Int("registrations-per-hour", def.Registrations.Quota, "device registrations per client IP per hour")
	o.joins = fs.Int64("joins-per-min", def.Limits.JoinsPerIPPerMin, "channel joins (and channel info reads) per client IP per minute")
	o.requests = fs.Int("requests-per-min", 600, "requests with a plugin token per device per minute")
	o.frames = fs.Int64("frames-per-min", def.Limits.Channels.FramesPerMin, "frames per minute per party (the owner gets this × maxPeers)")
	o.xff = fs.Bool("trust-forwarded-for", false, "take the client IP from X-Forwarded-For (only behind a proxy that sets it)")
	o.wsOrigins = fs.String("ws-origins", "", "comma-separated extra Origin host patterns allowed to open sockets")
	o.quiet = fs.Bool("quiet", false, "log warnings and errors only")
	o.devBytes = fs.Int64("device-store-bytes", server.DefaultDeviceStore.MaxBytes, "store bytes per device across all its plugins (at least the per-plugin limit)")
	o.devPlugins = fs.Int64("device-plugins", server.DefaultDeviceStore.MaxPlugins, "plugins with stored values per device")
	o.natsURL = fs.String("nats", "", "NATS server URL(s), comma-separated: relay between several nodes sharing a postgres:// --db")
	o.node = fs.String("node", "", "this node's name on the NATS bus (default: the host name and a random suffix)")
	return o
}

// CloudServe runs `harness cloud serve` until ctx ends (the command passes a context that
// SIGINT and SIGTERM cancel), then closes every socket with 1001 and the database. It prints
// one line `harness cloud: serving http://ADDR (database FILE)` when it listens. Exit codes:
// 0 after a clean stop, 1 when the server cannot start or fails, 2 on bad flags.
func CloudServe(ctx context.Context, env *Env) int {
	fs := flag.NewFlagSet("harness cloud serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	o := cloudServeFlags(fs)
	addr, db, origin, difficulty, operator, contact, privacy, regs, joins, requests, frames, xff, wsOrigins, quiet := o.addr, o.db, o.origin, o.difficulty, o.operator, o.contact, o.privacy, o.regs, o.joins, o.requests, o.frames, o.xff, o.wsOrigins, o.quiet
	devBytes, devPlugins := o.devBytes, o.devPlugins
	natsURL, node := o.natsURL, o.node
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
	if *devBytes < 1 || *devPlugins < 1 {
		fmt.Fprintln(env.Stderr, "harness cloud serve: --device-store-bytes and --device-plugins must be at least 1")
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
	if !isPostgresURL(*db) {
		if *db == "" {
			path, note, err := cloudDefaultDB()
			if err != nil {
				fmt.Fprintln(env.Stderr, "harness cloud serve:", err)
				return ExitFail
			}
			if note != "" {
				fmt.Fprintln(env.Stderr, "harness cloud serve:", note)
			}
			*db = path
		}
		if note, err := privateFile(*db); err != nil {
			fmt.Fprintln(env.Stderr, "harness cloud serve:", err)
			return ExitFail
		} else if note != "" {
			fmt.Fprintln(env.Stderr, "harness cloud serve:", note)
		}
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
	cfg.DeviceStore = server.DeviceStoreLimits{MaxBytes: *devBytes, MaxPlugins: *devPlugins}
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
// (several nodes may share it), else the SQLite file db (default CloudDBName under the data root, cloudDefaultDB).
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
		path, _, err := cloudDefaultDB()
		if err != nil {
			return nil, "", err
		}
		db = path
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
// allowlist | open, CLOUD_FN_ALLOWLIST (LINK@sha256:HEX, comma-separated), the secret
// bindings CLOUD_FN_SECRETS (fnrun.ParseSecrets) and their values
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
	secrets, err := fnrun.ParseSecrets(os.Getenv("CLOUD_FN_SECRETS"), os.LookupEnv)
	if err != nil {
		return nil, err
	}
	bound := map[string]bool{}
	for _, b := range secrets {
		bound[fnrun.SecretEnv(b.Plugin, b.Name)] = true
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CLOUD_FN_SECRET_") && !bound[k] {
			log.Warn("server functions: a secret no CLOUD_FN_SECRETS entry binds is given to no function", "var", k)
		}
	}
	r, err := fnrun.New(fnrun.Config{Policy: policy, Allow: allow, Secrets: secrets, Storage: st})
	if err != nil {
		return nil, err
	}
	if err := r.Preload(ctx); err != nil {
		log.Warn("server functions: allowlisted documents not loaded", "err", err)
	}
	log.Info("server functions on", "policy", string(policy), "allowlisted", len(allow), "secrets", len(secrets))
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

// CloudDBName is the Cloud server's database file under the data root: with the host's data
// in $XDG_DATA_HOME/pku-harness, the Cloud server's is in $XDG_DATA_HOME/pku-harness/cloud/cloud.db.
const CloudDBName = "cloud/cloud.db"

// sqliteSuffixes are the files SQLite keeps beside a database in WAL mode.
var sqliteSuffixes = []string{"", "-wal", "-shm"}

// cloudDefaultDB returns the default Cloud database, CloudDBName under the host's data root
// (store.DefaultDir), creating its folder 0700. Releases before one data root kept it in
// $XDG_DATA_HOME/harness/cloud.db (else ~/.local/share/harness/cloud.db): when that file exists
// and the new one does not, it is moved (with its -wal and -shm files) and note says so; when
// the move fails (another file system), the old file is used and note says that instead.
func cloudDefaultDB() (path, note string, err error) {
	root, err := store.DefaultDir()
	if err != nil {
		return "", "", fmt.Errorf("%w (use --db FILE)", err)
	}
	path = filepath.Join(root, filepath.FromSlash(CloudDBName))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", "", err
	}
	old, err := legacyCloudDB()
	if err != nil {
		return path, "", nil
	}
	if _, err := os.Stat(old); err != nil {
		return path, "", nil
	}
	if _, err := os.Stat(path); err == nil {
		return path, fmt.Sprintf("using %s; an older database is still at %s (remove it, or pass --db %s)", path, old, old), nil
	}
	for i, suf := range sqliteSuffixes {
		if err := os.Rename(old+suf, path+suf); err != nil && !(i > 0 && errors.Is(err, fs.ErrNotExist)) {
			// Put back what moved, so that the database and its journal stay together.
			for _, back := range sqliteSuffixes[:i] {
				_ = os.Rename(path+back, old+back)
			}
			return old, fmt.Sprintf("could not move the database %s to %s (%v); using it where it is", old, path, err), nil
		}
	}
	return path, fmt.Sprintf("moved the database from %s to %s (one data root for the host and the Cloud server)", old, path), nil
}

// legacyCloudDB is where releases before one data root kept the Cloud database.
func legacyCloudDB() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "harness", "cloud.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "harness", "cloud.db"), nil
}

// privateFile makes sure the database at path, and the SQLite files beside it, are readable
// by the owner only: it creates the folder (0700) and the file (0600) before SQLite does (SQLite
// gives its -wal and -shm files the database file's mode), and tightens an existing file that
// others could read, with a note.
func privateFile(path string) (note string, err error) {
	if path == ":memory:" {
		return "", nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return "", nil
	}
	for _, suf := range sqliteSuffixes {
		if err := os.Chmod(path+suf, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return fmt.Sprintf("%s was readable by others (mode %04o): now 0600", path, fi.Mode().Perm()), nil
}
