package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/store"
)

func init() {
	Register(&Command{
		Path:    "campus login",
		Usage:   "SERVICE (--cookie 'NAME=VALUE; …' | --token TOKEN) [--expires TIME|DURATION] [--data DIR]",
		Summary: "store the signed-in session of a campus service (card, its, treehole, …), pasted from a browser",
		Run:     campusLoginCmd,
		Flags:   func(fs *flag.FlagSet) { new(campusLoginOpts).register(fs) },
	})
	Register(&Command{
		Path:    "campus logout",
		Usage:   "SERVICE [--data DIR]",
		Summary: "forget the session of a campus service",
		Run:     campusLogoutCmd,
		Flags:   hostFlagsOnly,
	})
	Register(&Command{
		Path:    "campus status",
		Usage:   "[--data DIR]",
		Summary: "list the campus services and whether the host is signed in to each",
		Run:     campusStatusCmd,
		Flags:   hostFlagsOnly,
	})
	RegisterHostSetup(func(db *store.DB) ([]host.Option, error) {
		return []host.Option{host.WithCampus(newCampusClient(db))}, nil
	})
	RegisterServeSetup(campusRoutes)
}

// newCampusClient is the campus client of a host on db: sessions in the
// database, real network.
func newCampusClient(db *store.DB) *campus.Client {
	return &campus.Client{Sessions: campus.NewSQLSessions(db)}
}

// openStoreFlags opens the data directory of --data (or the default) without
// a Host: the campus and otp commands need only the database.
func openStoreFlags(ctx context.Context, f *hostFlags) (*store.DB, error) {
	return openDataDir(ctx, f)
}

// campusLoginOpts are the flags of `harness campus login`.
type campusLoginOpts struct {
	hf                     hostFlags
	cookie, token, expires string
}

func (o *campusLoginOpts) register(fs *flag.FlagSet) {
	o.hf.register(fs)
	fs.StringVar(&o.cookie, "cookie", "", "the service's cookies as a Cookie header: 'NAME=VALUE; NAME=VALUE'")
	fs.StringVar(&o.token, "token", "", "the service's bearer token (the JWT of treehole and card)")
	fs.StringVar(&o.expires, "expires", "", "when the session ends: an RFC 3339 time or a duration from now such as 24h (default: unknown)")
}

// campusLoginCmd is `harness campus login SERVICE --cookie … | --token …`
// (issue 4 "Campus client"): it stores the session the campus client signs
// that service's requests with. Exit 0 when stored, 1 when the session is
// refused (unknown service, no token for a token service, bad cookies), 2
// on bad usage.
func campusLoginCmd(env *Env) int {
	const name = "harness campus login"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o campusLoginOpts
	o.register(fs)
	hf, cookie, token, expires := &o.hf, &o.cookie, &o.token, &o.expires
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	if len(args) != 1 || (*cookie == "" && *token == "") {
		fmt.Fprintf(env.Stderr, "usage: %s SERVICE (--cookie 'NAME=VALUE; …' | --token TOKEN) [--data DIR]\n", name)
		return ExitUsage
	}
	now := time.Now()
	var until time.Time
	if *expires != "" {
		if d, err := time.ParseDuration(*expires); err == nil && d > 0 {
			until = now.Add(d)
		} else if t, err := time.Parse(time.RFC3339, *expires); err == nil && t.After(now) {
			until = t
		} else {
			fmt.Fprintf(env.Stderr, "%s: --expires %q: want a future RFC 3339 time or a positive duration such as 24h\n", name, *expires)
			return ExitUsage
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	db, err := openStoreFlags(ctx, hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	ss := campus.NewSQLSessions(db)
	s, err := campus.Login(ctx, ss, args[0], *cookie, *token, now)
	if err != nil {
		fmt.Fprintf(env.Stderr, "harness %v\n", err)
		return ExitFail
	}
	if !until.IsZero() {
		s.Expires = until.UTC()
		if err := ss.Put(ctx, s); err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
	}
	fmt.Fprintf(env.Stdout, "signed in to %s (%s)\n", s.Service, sessionSummary(s))
	return ExitOK
}

// sessionSummary says what a session holds without showing any secret.
func sessionSummary(s *campus.Session) string {
	var parts []string
	if s.Token != "" {
		parts = append(parts, "token")
	}
	if len(s.Cookies) > 0 {
		names := make([]string, 0, len(s.Cookies))
		for n := range s.Cookies {
			names = append(names, n)
		}
		sort.Strings(names)
		parts = append(parts, "cookies "+strings.Join(names, ", "))
	}
	return strings.Join(parts, "; ")
}

// campusLogoutCmd is `harness campus logout SERVICE`.
func campusLogoutCmd(env *Env) int {
	const name = "harness campus logout"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var hf hostFlags
	hf.register(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	if len(args) != 1 {
		fmt.Fprintf(env.Stderr, "usage: %s SERVICE [--data DIR]\n", name)
		return ExitUsage
	}
	ctx := context.Background()
	db, err := openStoreFlags(ctx, &hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	if err := campus.Logout(ctx, campus.NewSQLSessions(db), args[0]); err != nil {
		fmt.Fprintf(env.Stderr, "harness %v\n", err)
		return ExitFail
	}
	fmt.Fprintf(env.Stdout, "signed out of %s\n", args[0])
	return ExitOK
}

// campusStatusCmd is `harness campus status`: one line per service, "NAME
// signed in (…)" or "NAME not signed in".
func campusStatusCmd(env *Env) int {
	const name = "harness campus status"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var hf hostFlags
	hf.register(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	if len(args) != 0 {
		fmt.Fprintf(env.Stderr, "usage: %s [--data DIR]\n", name)
		return ExitUsage
	}
	ctx := context.Background()
	db, err := openStoreFlags(ctx, &hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	rows, err := campusStatus(ctx, db)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	for _, r := range rows {
		if r.SignedIn && r.Expires != nil {
			fmt.Fprintf(env.Stdout, "%-14s signed in (%s) until %s\n", r.Service, r.Holds, r.Expires.Format(time.RFC3339))
		} else if r.SignedIn {
			fmt.Fprintf(env.Stdout, "%-14s signed in (%s)\n", r.Service, r.Holds)
		} else {
			fmt.Fprintf(env.Stdout, "%-14s not signed in\n", r.Service)
		}
	}
	return ExitOK
}

// campusRow is one service in `campus status` and GET /v1/campus.
type campusRow struct {
	Service  string     `json:"service"`
	Title    string     `json:"title"`
	Base     string     `json:"base"`
	SignedIn bool       `json:"signedIn"`
	Holds    string     `json:"holds,omitempty"`
	Since    *time.Time `json:"since,omitempty"`
	Expires  *time.Time `json:"expires,omitempty"`
}

func campusStatus(ctx context.Context, db *store.DB) ([]campusRow, error) {
	ss, err := campus.NewSQLSessions(db).List(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string]*campus.Session{}
	for _, s := range ss {
		by[s.Service] = s
	}
	var rows []campusRow
	for _, svc := range campus.Services {
		r := campusRow{Service: svc.Name, Title: svc.Title, Base: svc.Base}
		if s, ok := by[svc.Name]; ok {
			r.SignedIn, r.Holds = true, sessionSummary(s)
			created := s.Created
			r.Since = &created
			if !s.Expires.IsZero() {
				exp := s.Expires
				r.Expires = &exp
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// campusRoutes adds the campus routes of docs/HOST-API.md ("Host
// abilities"): GET /v1/campus, PUT and DELETE /v1/campus/{service}.
func campusRoutes(_ context.Context, h *host.Host, srv *api.Server) error {
	db := h.Store()
	srv.HandleFunc("GET /v1/campus", func(w http.ResponseWriter, r *http.Request) error {
		rows, err := campusStatus(r.Context(), db)
		if err != nil {
			return err
		}
		return writeAPIJSON(w, http.StatusOK, map[string]any{"services": rows})
	})
	srv.HandleFunc("PUT /v1/campus/{service}", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Cookie string `json:"cookie"`
			Token  string `json:"token"`
		}
		if err := readAPIJSON(r, &body); err != nil {
			return err
		}
		s, err := campus.Login(r.Context(), campus.NewSQLSessions(db), r.PathValue("service"), body.Cookie, body.Token, h.Now())
		if err != nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: err.Error()}
		}
		return writeAPIJSON(w, http.StatusOK, map[string]any{"service": s.Service, "signedIn": true, "holds": sessionSummary(s)})
	})
	srv.HandleFunc("DELETE /v1/campus/{service}", func(w http.ResponseWriter, r *http.Request) error {
		err := campus.Logout(r.Context(), campus.NewSQLSessions(db), r.PathValue("service"))
		if errors.Is(err, campus.ErrUnknownService) {
			return &api.Error{Status: http.StatusNotFound, Code: "not_found", Message: err.Error()}
		}
		if err != nil {
			return err
		}
		return writeAPIJSON(w, http.StatusOK, map[string]any{"service": r.PathValue("service"), "signedIn": false})
	})
	return nil
}
