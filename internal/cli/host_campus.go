package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/host/vault"
	"golang.org/x/term"
)

func init() {
	Register(&Command{
		Path:    "campus login",
		Usage:   "[SERVICE…] [--qr] [--remember] [--user NAME] [--otp CODE] | SERVICE (--cookie 'NAME=VALUE; …' | --token TOKEN) [--expires TIME|DURATION] [--data DIR]",
		Summary: "sign in to IAAA and campus services (all of them by default) with your password or a QR code, or store a session pasted from a browser",
		Run:     campusLoginCmd,
		Flags:   func(fs *flag.FlagSet) { new(campusLoginOpts).register(fs) },
	})
	Register(&Command{
		Path:    "campus logout",
		Usage:   "[SERVICE] [--data DIR]",
		Summary: "forget the session of a campus service, or of all of them and the remembered password",
		Run:     campusLogoutCmd,
		Flags:   hostFlagsOnly,
	})
	Register(&Command{
		Path:    "campus status",
		Usage:   "[--data DIR]",
		Summary: "list the campus services and whether the host is signed in to each, until when",
		Run:     campusStatusCmd,
		Flags:   hostFlagsOnly,
	})
	Register(&Command{
		Path:    "campus bind-authenticator",
		Usage:   "[--user NAME] [--code SMS-CODE] [--data DIR]",
		Summary: "bind a new IAAA authenticator (手机令牌) to your account and keep its secret, so sign-in needs no code from you",
		Run:     campusBindCmd,
		Flags:   func(fs *flag.FlagSet) { campusBindFlags(fs) },
	})
	RegisterHostSetup(func(db *store.DB) ([]host.Option, error) {
		// Seal what an older version left in plain text (migrations 210, 211) as soon as the
		// host opens, not only when a campus request first comes.
		ctx := context.Background()
		if err := campus.NewSQLSessions(db).MigratePlain(ctx); err != nil {
			return nil, err
		}
		// A secret sealed with a key that is gone does not keep the host from opening: sign-in
		// and otp.code say what to do about it.
		if _, _, err := abilities.OTPSecret(ctx, db); err != nil && !errors.Is(err, vault.ErrOpen) {
			return nil, err
		}
		c, err := newCampusClient(db)
		if err != nil {
			return nil, err
		}
		return []host.Option{host.WithCampus(c)}, nil
	})
	RegisterServeSetup(campusRoutes)
}

// newSigner is the sign-in of a host on db: sessions and accounts in the
// database, the authenticator from `harness otp`/bind-authenticator, and
// the servers of campus.EndpointsEnv when it is set (stand-ins in tests).
func newSigner(db *store.DB) (*campus.Signer, error) {
	bases, err := campus.EndpointsFromEnv()
	if err != nil {
		return nil, err
	}
	return &campus.Signer{
		Sessions: campus.NewSQLSessions(db),
		Accounts: campus.NewAccounts(db),
		Bases:    bases,
		OTP: func(ctx context.Context) (string, bool, error) {
			secret, ok, err := abilities.OTPSecret(ctx, db)
			if errors.Is(err, vault.ErrOpen) {
				return "", false, fmt.Errorf("the stored authenticator secret was sealed with another key (the key file beside the data directory was lost or replaced): set it again with harness otp set (it asks for the secret), or forget it with harness otp clear")
			}
			if err != nil || !ok {
				return "", false, err
			}
			code, err := abilities.Code(secret, time.Now())
			return code, err == nil, err
		},
	}, nil
}

// newCampusClient is the campus client of a host on db: sessions in the
// database, renewed once with the remembered password when they expire.
func newCampusClient(db *store.DB) (*campus.Client, error) {
	sg, err := newSigner(db)
	if err != nil {
		return nil, err
	}
	return &campus.Client{Sessions: sg.Sessions, Bases: sg.Bases, Renew: sg.Renew}, nil
}

// openSigner opens the data directory of --data and the campus signer on it for the sign-in
// commands; on failure it says why on stderr, prefixed by name, and ok is false.
func openSigner(ctx context.Context, env *Env, name string, hf *hostFlags) (db *store.DB, sg *campus.Signer, ok bool) {
	db, err := openStoreFlags(ctx, hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return nil, nil, false
	}
	if sg, err = newSigner(db); err != nil {
		db.Close()
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return nil, nil, false
	}
	return db, sg, true
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
	qr, remember, verbose  bool
	user, otp              string
}

func (o *campusLoginOpts) register(fs *flag.FlagSet) {
	o.hf.register(fs)
	fs.StringVar(&o.cookie, "cookie", "", "the service's cookies as a Cookie header: 'NAME=VALUE; NAME=VALUE'")
	fs.StringVar(&o.token, "token", "", "the service's bearer token (the JWT of treehole and card)")
	fs.StringVar(&o.expires, "expires", "", "with --cookie/--token: when the session ends: an RFC 3339 time or a duration from now such as 24h (default: unknown)")
	fs.BoolVar(&o.qr, "qr", false, "sign in by scanning a QR code with the 北京大学 app instead of typing the password")
	fs.BoolVar(&o.remember, "remember", false, "remember the password (sealed, key outside the database) so expired sessions are renewed silently")
	fs.StringVar(&o.user, "user", "", "IAAA user name (student or staff number); asked when not given")
	fs.StringVar(&o.otp, "otp", "", "an authenticator code, when IAAA wants one and none is bound to the host")
	fs.BoolVar(&o.verbose, "verbose", false, "with each failure, the technical detail (the network's own error)")
}

// prompter reads answers from the person: lines from stdin, a password
// without echo when stdin is a terminal (golang.org/x/term).
type prompter struct {
	in  io.Reader
	out io.Writer
	br  *bufio.Reader
}

func newPrompter(env *Env) *prompter {
	return &prompter{in: env.Stdin, out: env.Stderr, br: bufio.NewReader(env.Stdin)}
}

func (p *prompter) line(q string) (string, error) {
	fmt.Fprint(p.out, q)
	s, err := p.br.ReadString('\n')
	if err != nil && (err != io.EOF || s == "") {
		return "", fmt.Errorf("no answer to %q", strings.TrimSpace(q))
	}
	return strings.TrimSpace(s), nil
}

// terminal reports whether the answers come from a terminal (secret reads them without echo).
func (p *prompter) terminal() bool {
	f, ok := p.in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (p *prompter) secret(q string) (string, error) {
	if p.terminal() {
		f := p.in.(*os.File)
		fmt.Fprint(p.out, q)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(p.out)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	// Not a terminal (a pipe, a test): a line, never echoed by us.
	return p.line(q)
}

// campusLoginCmd is `harness campus login` (docs/HOST-API.md "Campus sign-in"). With
// --cookie or --token it stores a pasted session; otherwise it
// signs in to IAAA and each SERVICE (every campus service when none is
// named) with the user name and password it asks for, or with --qr a QR
// code per service scanned in the 北京大学 app; it asks for Treehole's SMS
// code when Treehole wants one. --remember keeps the password sealed so an
// expired session is renewed without asking. Exit 0 when every service is
// signed in, 1 when any is not, 2 on bad usage.
func campusLoginCmd(env *Env) int {
	const name = "harness campus login"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o campusLoginOpts
	o.register(fs)
	hf, cookie, token, expires := &o.hf, &o.cookie, &o.token, &o.expires
	qr, remember, user, otpCode := &o.qr, &o.remember, &o.user, &o.otp
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	if *cookie != "" || *token != "" {
		return campusPasteLogin(env, hf, args, *cookie, *token, *expires)
	}
	if *expires != "" {
		fmt.Fprintf(env.Stderr, "%s: --expires goes with --cookie or --token; a sign-in records the service's own expiry\n", name)
		return ExitUsage
	}
	services := args
	if len(services) == 0 {
		for _, s := range campus.Services {
			services = append(services, s.Name)
		}
	}
	for _, s := range services {
		if campus.Lookup(s) == nil {
			fmt.Fprintf(env.Stderr, "harness campus login: unknown service %q (known: %s)\n", s, knownServices())
			return ExitFail
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	db, sg, ok := openSigner(ctx, env, name, hf)
	if !ok {
		return ExitFail
	}
	defer db.Close()
	p := newPrompter(env)
	opt := campus.SignInOptions{OTPCode: *otpCode, SMS: func(ctx context.Context, service, msg string) (string, error) {
		return p.line(msg + "\nSMS code / 短信验证码: ")
	}}
	var results []campus.Result
	if *qr {
		for _, svc := range services {
			results = append(results, qrSignIn(ctx, env, sg, svc, opt))
		}
	} else {
		u := *user
		if u == "" {
			if stored, _, ok, _ := sg.Accounts.User(ctx, campus.AccountIAAA); ok {
				u = stored
			}
		}
		if u == "" {
			if u, err = p.line("IAAA user name / 学号: "); err != nil || u == "" {
				fmt.Fprintf(env.Stderr, "%s: a user name is needed\n", name)
				return ExitUsage
			}
		}
		pw, err := p.secret("IAAA password for " + u + " / 密码: ")
		if err != nil || pw == "" {
			fmt.Fprintf(env.Stderr, "%s: a password is needed\n", name)
			return ExitUsage
		}
		results, err = sg.SignInAll(ctx, campus.Batch{Services: services, User: u, Password: pw, Remember: *remember,
			Options: opt, Prompter: termPrompter{p: p, out: env.Stderr}})
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
	}
	lang, _ := hf.language()
	code := printSignIns(env, results, string(lang), o.verbose)
	if !*qr && code == ExitOK {
		if *remember {
			fmt.Fprintln(env.Stdout, "password remembered (sealed); expired sessions are renewed without asking")
		}
	}
	return code
}

// printSignIns prints one line per service's outcome, a server that could not
// be reached in lang with its detail only when verbose; it returns ExitOK
// when every one signed in, else ExitFail.
func printSignIns(env *Env, results []campus.Result, lang string, verbose bool) int {
	code := ExitOK
	for _, r := range results {
		var u *campus.Unreachable
		switch {
		case !r.OK && errors.As(r.Err, &u):
			fmt.Fprintf(env.Stdout, "%-14s %s\n", r.Service, u.Message(lang))
			if verbose {
				fmt.Fprintf(env.Stdout, "%-14s   (%v)\n", "", u.Err)
			}
			code = ExitFail
		case !r.OK:
			fmt.Fprintf(env.Stdout, "%-14s not signed in: %s\n", r.Service, r.Error)
			code = ExitFail
		case r.Pending == "sms":
			fmt.Fprintf(env.Stdout, "%-14s signed in; Treehole's SMS check is pending (a plugin's verify step will ask for the code)\n", r.Service)
		case !r.Expires.IsZero():
			fmt.Fprintf(env.Stdout, "%-14s signed in until %s\n", r.Service, r.Expires.Local().Format(time.RFC3339))
		default:
			fmt.Fprintf(env.Stdout, "%-14s signed in\n", r.Service)
		}
	}
	return code
}

// termPrompter is campus.Prompter on the terminal.
type termPrompter struct {
	p   *prompter
	out io.Writer
}

// ITSAccount asks for ITS's own account after ITS refused the IAAA one.
func (t termPrompter) ITSAccount(ctx context.Context, refusal string) (string, string, error) {
	fmt.Fprintf(t.p.out, "ITS refused the IAAA account (%s); the campus-network account may differ.\n", refusal)
	u, err := t.p.line("ITS user name / 网关账号 (empty to skip): ")
	if err != nil || u == "" {
		return "", "", err
	}
	pw, err := t.p.secret("ITS password for " + u + " / 网关密码: ")
	return u, pw, err
}

// OTP shows IAAA's request and asks for an authenticator code.
func (t termPrompter) OTP(ctx context.Context, message string) (string, error) {
	fmt.Fprintf(t.out, "%s\n", message)
	return t.p.line("authenticator code / 手机令牌验证码 (empty to skip): ")
}

// qrSignIn signs in to one service with a QR code shown in the terminal.
func qrSignIn(ctx context.Context, env *Env, sg *campus.Signer, service string, opt campus.SignInOptions) campus.Result {
	app, ok := sg.App(ctx, service)
	if !ok {
		err := fmt.Errorf("%s signs in with its own account, not IAAA: run harness campus login %s without --qr", service, service)
		return campus.Result{Service: service, Err: err, Error: err.Error()}
	}
	iaaa := &campus.IAAA{Base: sg.Base("iaaa"), Transport: sg.Transport}
	q, err := iaaa.StartQR(ctx, app)
	if err != nil {
		return campus.Result{Service: service, Err: err, Error: err.Error()}
	}
	fmt.Fprintf(env.Stderr, "Scan with the 北京大学 app to sign in to %s / 用北京大学 App 扫码登录：\n", service)
	if err := printQR(env.Stderr, q.Image); err != nil {
		fmt.Fprintf(env.Stderr, "(the QR image cannot be shown in the terminal: %v)\n", err)
	}
	tok, err := q.Poll(ctx, nil)
	if err != nil {
		return campus.Result{Service: service, Err: err, Error: err.Error()}
	}
	return sg.SignInWithToken(ctx, service, tok, opt)
}

func knownServices() string { return campus.KnownNames() }

// campusPasteLogin is `harness campus login SERVICE --cookie … | --token …`
// (docs/HOST-API.md "Campus sign-in"): it stores a session pasted from a browser.
func campusPasteLogin(env *Env, hf *hostFlags, args []string, cookie, token, expires string) int {
	const name = "harness campus login"
	if len(args) != 1 {
		fmt.Fprintf(env.Stderr, "usage: %s SERVICE (--cookie 'NAME=VALUE; …' | --token TOKEN) [--data DIR]\n", name)
		return ExitUsage
	}
	now := time.Now()
	var until time.Time
	if expires != "" {
		if d, err := time.ParseDuration(expires); err == nil && d > 0 {
			until = now.Add(d)
		} else if t, err := time.Parse(time.RFC3339, expires); err == nil && t.After(now) {
			until = t
		} else {
			fmt.Fprintf(env.Stderr, "%s: --expires %q: want a future RFC 3339 time or a positive duration such as 24h\n", name, expires)
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
	s, err := campus.Login(ctx, ss, args[0], cookie, token, now)
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

// campusLogoutCmd is `harness campus logout [SERVICE]`: one service's
// session, or with no SERVICE every session and the stored accounts
// (remembered passwords included) and any pending binding.
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
	if len(args) > 1 {
		fmt.Fprintf(env.Stderr, "usage: %s [SERVICE] [--data DIR]\n", name)
		return ExitUsage
	}
	ctx := context.Background()
	db, err := openStoreFlags(ctx, &hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	if len(args) == 1 {
		if err := campus.Logout(ctx, campus.NewSQLSessions(db), args[0]); err != nil {
			fmt.Fprintf(env.Stderr, "harness %v\n", err)
			return ExitFail
		}
		fmt.Fprintf(env.Stdout, "signed out of %s\n", args[0])
		return ExitOK
	}
	if err := logoutAll(ctx, db); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	fmt.Fprintln(env.Stdout, "signed out of every campus service; the remembered password is forgotten")
	return ExitOK
}

func logoutAll(ctx context.Context, db *store.DB) error {
	ss := campus.NewSQLSessions(db)
	for _, s := range campus.Services {
		if err := ss.Delete(ctx, s.Name); err != nil {
			return err
		}
	}
	acc := campus.NewAccounts(db)
	for _, a := range []string{campus.AccountIAAA, campus.AccountITS} { // both accounts
		if err := acc.Forget(ctx, a); err != nil {
			return err
		}
	}
	return acc.ClearPending(ctx)
}

// campusBindCmd is `harness campus bind-authenticator` (docs/CAMPUS-PROTOCOLS.md
// §2.4): it signs in to IAAA's binding flow, has IAAA text a code, and
// with that code (asked now, or given later with --code) binds a new
// authenticator and stores its secret sealed, as `harness otp set` would.
func campusBindCmd(env *Env) int {
	const name = "harness campus bind-authenticator"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf, user, code := campusBindFlags(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	if len(args) != 0 {
		fmt.Fprintf(env.Stderr, "usage: %s [--user NAME] [--code SMS-CODE] [--data DIR]\n", name)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	db, sg, ok := openSigner(ctx, env, name, hf)
	if !ok {
		return ExitFail
	}
	defer db.Close()
	iaaa := &campus.IAAA{Base: sg.Base("iaaa")}
	p := newPrompter(env)
	sms := *code
	if sms == "" {
		u := *user
		if u == "" {
			if stored, _, ok, _ := sg.Accounts.User(ctx, campus.AccountIAAA); ok {
				u = stored
			} else if u, err = p.line("IAAA user name / 学号: "); err != nil || u == "" {
				fmt.Fprintf(env.Stderr, "%s: a user name is needed\n", name)
				return ExitUsage
			}
		}
		pw, err := p.secret("IAAA password for " + u + " / 密码: ")
		if err != nil || pw == "" {
			fmt.Fprintf(env.Stderr, "%s: a password is needed\n", name)
			return ExitUsage
		}
		st, err := iaaa.BindStart(ctx, u, pw, time.Now())
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		if err := sg.Accounts.SavePending(ctx, st); err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		fmt.Fprintf(env.Stdout, "IAAA texted a code to %s\n", st.MobileMask)
		sms, err = p.line("SMS code / 短信验证码 (empty to give it later): ")
		if err != nil || sms == "" {
			fmt.Fprintf(env.Stdout, "when the SMS arrives, run: harness campus bind-authenticator --code CODE\n")
			return ExitOK
		}
	}
	st, ok, err := sg.Accounts.PendingBind(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if ok && time.Since(st.At) > campus.BindTTL {
		sg.Accounts.ClearPending(ctx)
		fmt.Fprintf(env.Stderr, "%s: the binding started at %s has expired (after %v): run %s without --code again\n", name, st.At.Local().Format(time.RFC3339), campus.BindTTL, name)
		return ExitFail
	}
	if !ok {
		fmt.Fprintf(env.Stderr, "%s: no binding is waiting for a code: run %s without --code first\n", name, name)
		return ExitFail
	}
	secret, err := iaaa.BindFinish(ctx, st, sms, func(s string) (string, error) { return abilities.Code(s, time.Now()) })
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if err := abilities.SetOTPSecret(ctx, db, secret, time.Now()); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	sg.Accounts.ClearPending(ctx)
	fmt.Fprintln(env.Stdout, "authenticator bound; the host now signs in with its codes (harness otp code shows the current one)")
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
	hf.readOnly = true
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
	now := time.Now()
	for _, r := range rows {
		if r.SignedIn && r.Expires != nil && !now.Before(*r.Expires) {
			fmt.Fprintf(env.Stdout, "%-14s session expired at %s (%s)\n", r.Service, r.Expires.Format(time.RFC3339), r.Holds)
		} else if r.SignedIn && r.Expires != nil {
			fmt.Fprintf(env.Stdout, "%-14s signed in (%s) until %s\n", r.Service, r.Holds, r.Expires.Format(time.RFC3339))
		} else if r.SignedIn {
			fmt.Fprintf(env.Stdout, "%-14s signed in (%s)\n", r.Service, r.Holds)
		} else {
			fmt.Fprintf(env.Stdout, "%-14s not signed in\n", r.Service)
		}
	}
	if a, err := campusAccount(ctx, db); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	} else if a != nil && a.Remembered {
		fmt.Fprintf(env.Stdout, "IAAA account %s: password remembered (expired sessions are renewed without asking)\n", a.Username)
	} else if a != nil {
		fmt.Fprintf(env.Stdout, "IAAA account %s: password not remembered\n", a.Username)
	}
	return ExitOK
}

// accountRow is the IAAA account in `campus status` and GET /v1/campus:
// the user name and whether the password is remembered, never the password.
type accountRow struct {
	Username   string `json:"username"`
	Remembered bool   `json:"remembered"`
}

func campusAccount(ctx context.Context, db *store.DB) (*accountRow, error) {
	u, remembered, ok, err := campus.NewAccounts(db).User(ctx, campus.AccountIAAA)
	if err != nil || !ok {
		return nil, err
	}
	return &accountRow{Username: u, Remembered: remembered}, nil
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
	campusSignInRoutes(h, srv)
	srv.HandleFunc("GET /v1/campus", func(w http.ResponseWriter, r *http.Request) error {
		rows, err := campusStatus(r.Context(), db)
		if err != nil {
			return err
		}
		acct, err := campusAccount(r.Context(), db)
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"services": rows, "account": acct})
	})
	srv.HandleFunc("PUT /v1/campus/{service}", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Cookie string `json:"cookie"`
			Token  string `json:"token"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		s, err := campus.Login(r.Context(), campus.NewSQLSessions(db), r.PathValue("service"), body.Cookie, body.Token, h.Now())
		if err != nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: err.Error()}
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"service": s.Service, "signedIn": true, "holds": sessionSummary(s)})
	})
	srv.HandleFunc("DELETE /v1/campus/{service}", func(w http.ResponseWriter, r *http.Request) error {
		err := campus.Logout(r.Context(), campus.NewSQLSessions(db), r.PathValue("service"))
		if errors.Is(err, campus.ErrUnknownService) {
			return &api.Error{Status: http.StatusNotFound, Code: "not_found", Message: err.Error()}
		}
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"service": r.PathValue("service"), "signedIn": false})
	})
	return nil
}

// signInAnswer is one service's outcome on the API: no token, cookie or
// password, only whether it worked, until when, a pending check, and the
// error in both languages.
type signInAnswer struct {
	Service string     `json:"service"`
	OK      bool       `json:"ok"`
	Expires *time.Time `json:"expires,omitempty"`
	Pending string     `json:"pending,omitempty"`
	Code    string     `json:"code,omitempty"`
	Error   string     `json:"error,omitempty"`
	ErrorZh string     `json:"errorZh,omitempty"`
}

func answer(r campus.Result) signInAnswer {
	a := signInAnswer{Service: r.Service, OK: r.OK, Pending: r.Pending}
	if !r.Expires.IsZero() {
		e := r.Expires
		a.Expires = &e
	}
	if r.Err != nil {
		a.Error, a.ErrorZh = r.Err.Error(), r.Err.Error()
		var ie *campus.IAAAError
		var u *campus.Unreachable
		switch {
		case errors.As(r.Err, &ie):
			a.Code, a.Error, a.ErrorZh = ie.Code, ie.Message("en"), ie.Message("zh-Hans")
		case errors.As(r.Err, &u):
			a.Code, a.Error, a.ErrorZh = "unreachable", u.Message("en"), u.Message("zh-Hans")
		}
	}
	return a
}

// qrPollGap is the least time between two polls of one QR sign-in that
// reach IAAA: the web app chooses how often it polls, the host keeps to
// the documented schedule (campus.QRInterval, docs/CAMPUS-PROTOCOLS.md §2.3), less
// the jitter so that a client polling on time is never held back. A poll
// that comes sooner is answered "waiting" without asking IAAA.
var qrPollGap = campus.QRPollGap

// campusSignInRoutes are the sign-in routes of docs/HOST-API.md ("Campus
// sign-in"), all POST with JSON bodies: login, qr, qr/poll, logout, bind,
// bind/finish. No answer carries a password, token or cookie.
func campusSignInRoutes(h *host.Host, srv *api.Server) {
	db := h.Store()
	// One Signer for the server's life: a QR sign-in's device id (Treehole) made by POST
	// /v1/campus/qr is the one its poll signs in with.
	var (
		sgOnce sync.Once
		sg     *campus.Signer
		sgErr  error
	)
	var qrs *campus.QRSessions
	signer := func() (*campus.Signer, error) {
		sgOnce.Do(func() {
			if sg, sgErr = newSigner(db); sgErr == nil {
				qrs = campus.NewQRSessions(sg)
				qrs.Gap = qrPollGap
			}
		})
		return sg, sgErr
	}
	unknown := func(names []string) error {
		for _, n := range names {
			if campus.Lookup(n) == nil {
				return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: fmt.Sprintf("unknown campus service %q (known: %s)", n, knownServices())}
			}
		}
		return nil
	}
	srv.HandleFunc("POST /v1/campus/login", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Services []string `json:"services"`
			Username string   `json:"username"`
			Password string   `json:"password"`
			Remember bool     `json:"remember"`
			OTPCode  string   `json:"otpCode"`
			// ITS is ITS's own campus-network account when it differs.
			ITS *struct {
				Username string `json:"username"`
				Password string `json:"password"`
			} `json:"its"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		if body.Username == "" || body.Password == "" {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: "username and password are required"}
		}
		if err := unknown(body.Services); err != nil {
			return err
		}
		if len(body.Services) == 0 {
			for _, s := range campus.Services {
				body.Services = append(body.Services, s.Name)
			}
		}
		sg, err := signer()
		if err != nil {
			return err
		}
		batch := campus.Batch{Services: body.Services, User: body.Username, Password: body.Password, Remember: body.Remember,
			Options: campus.SignInOptions{OTPCode: body.OTPCode}, Now: h.Now()}
		if body.ITS != nil {
			batch.ITSUser, batch.ITSPassword = body.ITS.Username, body.ITS.Password
		}
		results, err := sg.SignInAll(r.Context(), batch)
		if err != nil {
			return err
		}
		var out []signInAnswer
		anyOK := false
		for _, res := range results {
			out = append(out, answer(res))
			anyOK = anyOK || res.OK
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"results": out, "remembered": anyOK && body.Remember})
	})
	srv.HandleFunc("POST /v1/campus/qr", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Service string `json:"service"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		if err := unknown([]string{body.Service}); err != nil {
			return err
		}
		if _, err := signer(); err != nil {
			return err
		}
		id, q, err := qrs.Start(r.Context(), body.Service)
		if errors.Is(err, campus.ErrOwnAccount) {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: body.Service + " signs in with its own account, not IAAA: use POST /v1/campus/login"}
		}
		if err != nil {
			return &api.Error{Status: http.StatusBadGateway, Code: "upstream", Message: err.Error()}
		}
		ct := q.ContentType
		if ct == "" {
			ct = "image/png"
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "service": body.Service,
			"image":       "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(q.Image),
			"pollEveryMs": campus.QRInterval.Milliseconds(), "maxPolls": campus.QRPolls})
	})
	srv.HandleFunc("POST /v1/campus/qr/poll", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			ID string `json:"id"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		if _, err := signer(); err != nil {
			return err
		}
		status, res, err := qrs.Poll(r.Context(), body.ID)
		if errors.Is(err, campus.ErrNoQR) {
			return &api.Error{Status: http.StatusNotFound, Code: "not_found", Message: "no QR sign-in with that id (it ended or expired): start again with POST /v1/campus/qr"}
		}
		if err != nil {
			return err
		}
		if res == nil {
			return api.WriteJSON(w, http.StatusOK, map[string]any{"status": status})
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"status": status, "result": answer(*res)})
	})
	srv.HandleFunc("POST /v1/campus/treehole/sms", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Code string `json:"code"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		c, err := newCampusClient(db)
		if err != nil {
			return err
		}
		msg, err := campus.TreeholeSMS(r.Context(), c, body.Code)
		var ne *campus.NotSignedInError
		if errors.As(err, &ne) {
			return &api.Error{Status: http.StatusConflict, Code: "not_signed_in", Message: err.Error()}
		}
		if err != nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "refused", Message: err.Error()}
		}
		if body.Code == "" {
			return api.WriteJSON(w, http.StatusOK, map[string]any{"sent": true, "message": msg})
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"verified": true, "message": msg})
	})
	srv.HandleFunc("POST /v1/campus/logout", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Service string `json:"service"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		if body.Service == "" {
			if err := logoutAll(r.Context(), db); err != nil {
				return err
			}
			return api.WriteJSON(w, http.StatusOK, map[string]any{"signedOut": "all"})
		}
		if err := campus.Logout(r.Context(), campus.NewSQLSessions(db), body.Service); err != nil {
			return &api.Error{Status: http.StatusNotFound, Code: "not_found", Message: err.Error()}
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"signedOut": body.Service})
	})
	srv.HandleFunc("POST /v1/campus/bind", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Username string `json:"username"`
			Password string `json:"password"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		if body.Username == "" || body.Password == "" {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: "username and password are required"}
		}
		sg, err := signer()
		if err != nil {
			return err
		}
		st, err := (&campus.IAAA{Base: sg.Base("iaaa")}).BindStart(r.Context(), body.Username, body.Password, h.Now())
		if err != nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "refused", Message: err.Error()}
		}
		if err := sg.Accounts.SavePending(r.Context(), st); err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"smsSentTo": st.MobileMask, "next": "POST /v1/campus/bind/finish"})
	})
	srv.HandleFunc("POST /v1/campus/bind/finish", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Code string `json:"code"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		sg, err := signer()
		if err != nil {
			return err
		}
		st, ok, err := sg.Accounts.PendingBind(r.Context())
		if err != nil {
			return err
		}
		if ok && h.Now().Sub(st.At) > campus.BindTTL {
			sg.Accounts.ClearPending(r.Context())
			ok = false
		}
		if !ok {
			return &api.Error{Status: http.StatusNotFound, Code: "not_found", Message: "no binding is waiting for a code: start with POST /v1/campus/bind"}
		}
		secret, err := (&campus.IAAA{Base: sg.Base("iaaa")}).BindFinish(r.Context(), st, strings.TrimSpace(body.Code), func(s string) (string, error) { return abilities.Code(s, time.Now()) })
		if err != nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "refused", Message: err.Error()}
		}
		if err := abilities.SetOTPSecret(r.Context(), db, secret, h.Now()); err != nil {
			return err
		}
		sg.Accounts.ClearPending(r.Context())
		return api.WriteJSON(w, http.StatusOK, map[string]any{"bound": true})
	})
}

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// campusBindFlags defines the flags of `harness campus bind-authenticator` on fs.
func campusBindFlags(fs *flag.FlagSet) (hf *hostFlags, user, code *string) {
	hf = new(hostFlags)
	hf.register(fs)
	user = fs.String("user", "", "IAAA user name; asked when not given")
	code = fs.String("code", "", "the SMS code of a binding started earlier")
	return hf, user, code
}
