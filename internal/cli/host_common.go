package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/internal/msg"
	"github.com/pkuinfo/harness/plugin"
)

// HostSetup adds options to every Host the CLI opens: host/abilities and
// host/campus register one (from an init function in their CLI files) that
// builds their interp.Abilities or interp.CampusClient on the host's
// database and returns host.WithAbilities / host.WithCampus.
type HostSetup func(db *store.DB) ([]host.Option, error)

// ServeSetup adds routes to the JSON API of `harness serve` and may start
// background loops (the scheduler) that stop when ctx ends.
type ServeSetup func(ctx context.Context, h *host.Host, s *api.Server) error

var (
	hostSetups  []HostSetup
	serveSetups []ServeSetup
)

// RegisterHostSetup adds a HostSetup; call it from an init function.
func RegisterHostSetup(f HostSetup) { hostSetups = append(hostSetups, f) }

// RegisterServeSetup adds a ServeSetup; call it from an init function.
func RegisterServeSetup(f ServeSetup) { serveSetups = append(serveSetups, f) }

// hostFlags are the flags every host command takes.
type hostFlags struct {
	data string
	ca   string
	lang string        // --lang; see language
	fs   *flag.FlagSet // its Output is where openDataDir says it created a data directory
	// readOnly is set by a command that only reads (a review, a list, a status): where the data
	// directory holds no database, openDataDir creates nothing and returns *noDataDir.
	readOnly bool
}

// noDataDir is the error of a read-only command whose data directory holds no database yet.
type noDataDir struct {
	dir  string // absolute when it can be made so
	lang msg.Lang
}

func (e *noDataDir) Error() string { return e.lang.T(msg.NoDataDir, e.dir) }

// language is the run's language (docs/DECISIONS.md §11 "Locale"): --lang, else $LC_ALL, $LC_MESSAGES or $LANG,
// else zh-Hans (msg.Resolve). The error is for a --lang that names neither language.
func (f *hostFlags) language() (msg.Lang, error) { return msg.Resolve(f.lang, os.Getenv) }

func (f *hostFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.lang, "lang", "", "language of what the command prints: zh-Hans or en (default from $LC_ALL, $LC_MESSAGES or $LANG, else zh-Hans)")
	fs.StringVar(&f.data, "data", "", "data directory (default $XDG_DATA_HOME/pku-harness)")
	fs.StringVar(&f.ca, "ca", "", "PEM file of a CA to trust for install links; also lets https links reach loopback and private addresses (plain http to localhost needs no flag)")
}

// hostFlagsOnly is the Command.Flags of a host command with no flags of its own.
func hostFlagsOnly(fs *flag.FlagSet) { new(hostFlags).register(fs) }

// parseInterleaved parses flags that may come before or after positional
// arguments ("install DIR --yes"), and returns the positional ones. "--"
// ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// openHost opens the data directory and a Host on it, with the setups
// other packages registered, and installs the bundled official plugins the
// first time (and after an update of the binary changed them).
func openHost(ctx context.Context, f *hostFlags) (*host.Host, *store.DB, error) {
	db, err := openDataDir(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	opts, err := fetchOptions(f)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	for _, s := range hostSetups {
		o, err := s(db)
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		opts = append(opts, o...)
	}
	h, err := host.New(db, opts...)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	return h, db, nil
}

// openMemoryHost is a Host on a database in memory (store.OpenMemory), for a read-only
// command that needs no data directory (a review): no other package's setup (they keep sealed
// secrets beside a data directory) and no official plugins installed, so nothing is.
func openMemoryHost(ctx context.Context, f *hostFlags) (*host.Host, *store.DB, error) {
	db, err := store.OpenMemory(ctx)
	if err != nil {
		return nil, nil, err
	}
	opts, err := fetchOptions(f)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	h, err := host.New(db, opts...)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return h, db, nil
}

// fetchOptions are the host options of f's --ca: a fetcher that trusts that CA.
func fetchOptions(f *hostFlags) ([]host.Option, error) {
	if f.ca == "" {
		return nil, nil
	}
	fetcher, err := caFetcher(f.ca)
	if err != nil {
		return nil, err
	}
	return []host.Option{host.WithFetcher(fetcher)}, nil
}

// openDataDir opens the data directory of --data (or the default). When it holds no database
// yet (a first start, or a mistyped --data), it says on the flags' output (the command's
// stderr) "harness: created a new data directory at DIR", once: the next open finds it; a
// read-only command (f.readOnly) creates nothing then and gets *noDataDir.
func openDataDir(ctx context.Context, f *hostFlags) (*store.DB, error) {
	dir, err := hostDataDir(f)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(filepath.Join(dir, store.FileName))
	if f.readOnly && errors.Is(statErr, fs.ErrNotExist) {
		abs, aerr := filepath.Abs(dir)
		if aerr != nil {
			abs = dir
		}
		lang, _ := f.language()
		return nil, &noDataDir{dir: abs, lang: lang}
	}
	db, err := store.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if errors.Is(statErr, fs.ErrNotExist) && f.fs != nil {
		abs, err := filepath.Abs(db.Dir())
		if err != nil {
			abs = db.Dir()
		}
		lang, _ := f.language()
		fmt.Fprintln(f.fs.Output(), lang.T(msg.NewDataDir, abs))
	}
	return db, nil
}

// caFetcher is an HTTPFetcher that trusts the CA in file besides the
// system's, and may reach any address.
func caFetcher(file string) (plugin.Fetcher, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--ca: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca %s: no PEM certificate in it", file)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, TLSHandshakeTimeout: 10 * time.Second}
	return &plugin.HTTPFetcher{Client: &http.Client{Transport: tr}}, nil
}

// confirm writes prompt (msg.Confirm: the question and "[y/N] ") on w and reads the answer
// from r; only "y", "yes" or "是" is yes.
func confirm(r io.Reader, w io.Writer, prompt string) bool {
	fmt.Fprint(w, prompt)
	var buf [64]byte
	n, _ := r.Read(buf[:])
	a := strings.ToLower(strings.TrimSpace(string(buf[:n])))
	return a == "y" || a == "yes" || a == "是"
}
