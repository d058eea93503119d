package campus

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/host/vault"
)

func init() {
	store.Register(store.Migration{Version: 212, Name: "campus accounts", SQL: `
CREATE TABLE campus_accounts (
	account    TEXT    PRIMARY KEY,          -- iaaa or its
	username   TEXT    NOT NULL,
	sealed     BLOB,                         -- vault-sealed password; NULL unless remembered
	updated_at INTEGER NOT NULL              -- Unix ms
);
CREATE TABLE campus_pending (
	kind   TEXT    PRIMARY KEY,              -- bind (authenticator binding between its SMS and the rest)
	sealed BLOB    NOT NULL,                 -- vault-sealed JSON state (IAAA cookies)
	at     INTEGER NOT NULL                  -- Unix ms
);`})
}

// Account names in Accounts: the IAAA account, and ITS's own
// campus-network account (docs/CAMPUS-PROTOCOLS.md §2.5, §9).
const (
	AccountIAAA = "iaaa"
	AccountITS  = "its"
)

// Accounts keeps the user names the person signed in with and, only when
// they allowed it, the passwords, sealed with the data directory's vault
// (migration 212). A password is never returned by anything but Password,
// which only the Signer calls.
type Accounts struct {
	DB  *sql.DB
	Box *vault.Box
	Dir string

	once sync.Once
	err  error
}

// NewAccounts returns the accounts stored in db.
func NewAccounts(db *store.DB) *Accounts { return &Accounts{DB: db.SQL, Dir: db.Dir()} }

func (a *Accounts) box() (*vault.Box, error) {
	a.once.Do(func() {
		if a.Box == nil {
			a.Box, a.err = vault.Open(a.Dir, vault.DefaultKeyring())
		}
	})
	return a.Box, a.err
}

// Save records the user name of account and, when remember is true, the
// password sealed; remember false forgets any stored password.
func (a *Accounts) Save(ctx context.Context, account, user, password string, remember bool, now time.Time) error {
	box, err := a.box()
	if err != nil {
		return err
	}
	var sealed []byte
	if remember {
		sealed = box.Seal("campus_accounts/"+account+"/"+user, []byte(password))
	}
	_, err = a.DB.ExecContext(ctx, `INSERT INTO campus_accounts (account, username, sealed, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (account) DO UPDATE SET username = excluded.username, sealed = excluded.sealed, updated_at = excluded.updated_at`,
		account, user, sealed, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("campus: store the %s account: %w", account, err)
	}
	return nil
}

// User returns the stored user name of account and whether its password
// is remembered; ok is false when there is no such account.
func (a *Accounts) User(ctx context.Context, account string) (user string, remembered, ok bool, err error) {
	var sealed []byte
	err = a.DB.QueryRowContext(ctx, `SELECT username, sealed FROM campus_accounts WHERE account = ?`, account).Scan(&user, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, fmt.Errorf("campus: read the %s account: %w", account, err)
	}
	return user, sealed != nil, true, nil
}

// Password returns the remembered password of account; ok is false when
// the person did not let the host remember it, or it was sealed with a key
// that is gone (the key file lost or replaced).
func (a *Accounts) Password(ctx context.Context, account string) (user, password string, ok bool, err error) {
	box, err := a.box()
	if err != nil {
		return "", "", false, err
	}
	var sealed []byte
	err = a.DB.QueryRowContext(ctx, `SELECT username, sealed FROM campus_accounts WHERE account = ?`, account).Scan(&user, &sealed)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && sealed == nil) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("campus: read the %s account: %w", account, err)
	}
	plain, err := box.Open("campus_accounts/"+account+"/"+user, sealed)
	if errors.Is(err, vault.ErrOpen) {
		// Sealed with a key that is gone: as good as not remembered.
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	return user, string(plain), true, nil
}

// ForgetPassword forgets the remembered password of account and keeps its
// user name; an account that is not stored gets a row with the user name
// user and no password, so that nothing falls back to another account's
// password for it (Signer.Renew for ITS).
func (a *Accounts) ForgetPassword(ctx context.Context, account, user string, now time.Time) error {
	_, err := a.DB.ExecContext(ctx, `INSERT INTO campus_accounts (account, username, sealed, updated_at) VALUES (?, ?, NULL, ?)
		ON CONFLICT (account) DO UPDATE SET sealed = NULL, updated_at = excluded.updated_at`, account, user, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("campus: forget the %s password: %w", account, err)
	}
	return nil
}

// Forget deletes account (its user name and any remembered password).
func (a *Accounts) Forget(ctx context.Context, account string) error {
	if _, err := a.DB.ExecContext(ctx, `DELETE FROM campus_accounts WHERE account = ?`, account); err != nil {
		return fmt.Errorf("campus: forget the %s account: %w", account, err)
	}
	return nil
}

// BindTTL is how long a binding waits for its SMS code before it has to
// start again (IAAA's session behind it does not last; the figure is the
// host's choice, not a documented IAAA limit).
const BindTTL = 15 * time.Minute

// SavePending stores an authenticator binding between its SMS step and the
// rest, sealed.
func (a *Accounts) SavePending(ctx context.Context, st *BindState) error {
	box, err := a.box()
	if err != nil {
		return err
	}
	b, _ := json.Marshal(st)
	_, err = a.DB.ExecContext(ctx, `INSERT INTO campus_pending (kind, sealed, at) VALUES ('bind', ?, ?)
		ON CONFLICT (kind) DO UPDATE SET sealed = excluded.sealed, at = excluded.at`, box.Seal("campus_pending/bind", b), st.At.UnixMilli())
	if err != nil {
		return fmt.Errorf("campus: store the pending binding: %w", err)
	}
	return nil
}

// PendingBind returns the binding waiting for its SMS code; ok is false
// when there is none.
func (a *Accounts) PendingBind(ctx context.Context) (*BindState, bool, error) {
	box, err := a.box()
	if err != nil {
		return nil, false, err
	}
	var sealed []byte
	err = a.DB.QueryRowContext(ctx, `SELECT sealed FROM campus_pending WHERE kind = 'bind'`).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("campus: read the pending binding: %w", err)
	}
	plain, err := box.Open("campus_pending/bind", sealed)
	if errors.Is(err, vault.ErrOpen) {
		return nil, false, nil // sealed with a key that is gone: start the binding again
	}
	if err != nil {
		return nil, false, err
	}
	var st BindState
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, false, fmt.Errorf("campus: the pending binding: %w", err)
	}
	return &st, true, nil
}

// ClearPending forgets the pending binding.
func (a *Accounts) ClearPending(ctx context.Context) error {
	_, err := a.DB.ExecContext(ctx, `DELETE FROM campus_pending WHERE kind = 'bind'`)
	return err
}

// EndpointsEnv is the environment variable that points sign-in and the
// campus client at other servers (stand-ins in tests): comma-separated
// NAME=URL pairs, NAME a campus service or iaaa or portal, e.g.
// "iaaa=http://127.0.0.1:4001,treehole=http://127.0.0.1:4002".
const EndpointsEnv = "HARNESS_CAMPUS_ENDPOINTS"

// DefaultBases are the real scheme and host of iaaa and portal; a campus
// service's is its Service.Base.
var DefaultBases = map[string]string{"iaaa": IAAABase, "portal": "https://portal.pku.edu.cn"}

// EndpointsFromEnv reads EndpointsEnv with ParseEndpoints.
func EndpointsFromEnv() (map[string]string, error) { return ParseEndpoints(os.Getenv(EndpointsEnv)) }

// ParseEndpoints reads "NAME=URL,NAME=URL" (EndpointsEnv's form): NAME a
// campus service, iaaa or portal; URL http:// or https:// with a host.
// Empty text is no overrides. Errors name the bad pair.
func ParseEndpoints(v string) (map[string]string, error) {
	if v == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, p := range strings.Split(v, ",") {
		name, u, ok := strings.Cut(strings.TrimSpace(p), "=")
		pu, err := url.Parse(u)
		if !ok || (Lookup(name) == nil && DefaultBases[name] == "") || err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, fmt.Errorf("%s: %q: want NAME=http(s)://HOST with NAME a campus service, iaaa or portal", EndpointsEnv, p)
		}
		out[name] = strings.TrimRight(u, "/")
	}
	return out, nil
}

// Signer signs in to IAAA and each service's hop and stores the sessions
// (docs/HOST-API.md "Campus sign-in"). It also renews an expired session once, with the remembered
// password, for the campus client (Client.Renew = Signer.Renew).
type Signer struct {
	Sessions Sessions
	Accounts *Accounts
	// Bases overrides the scheme and host of iaaa, portal or a service.
	Bases map[string]string
	// Transport sends every request; nil means HTTP/1.1 over the network.
	Transport http.RoundTripper
	// OTP returns the current code of the stored authenticator; ok false
	// when none is bound. Nil means none.
	OTP func(ctx context.Context) (code string, ok bool, err error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex           // one renewal at a time
	renewed map[string]time.Time // last renewal per service
	devMu   sync.Mutex
	devices map[string]string // device ids made before a session exists
}

// Base returns the scheme and host of name (a service, iaaa or portal).
func (s *Signer) Base(name string) string {
	if b, ok := s.Bases[name]; ok {
		return b
	}
	if b, ok := DefaultBases[name]; ok {
		return b
	}
	if svc := Lookup(name); svc != nil {
		return svc.Base
	}
	return ""
}

func (s *Signer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Result is the outcome of signing in to one service.
type Result struct {
	Service string    `json:"service"`
	OK      bool      `json:"ok"`
	Expires time.Time `json:"expires,omitzero"`
	// Pending names a check left for later ("sms": Treehole's login SMS).
	Pending string `json:"pending,omitempty"`
	// Error is why the sign-in failed, for people.
	Error string `json:"error,omitempty"`
	// Err is the error itself.
	Err error `json:"-"`
}

// SignInOptions are the choices of one sign-in.
type SignInOptions struct {
	// OTPCode is an authenticator code the person typed, used when no
	// authenticator is bound.
	OTPCode string
	// SMS asks the person for Treehole's login SMS code; nil leaves the
	// check pending.
	SMS func(ctx context.Context, service, message string) (string, error)
}

// iaaaToken signs in to IAAA for app with the password.
func (s *Signer) iaaaToken(ctx context.Context, app App, user, password, typed string) (string, error) {
	otp := typed
	if s.OTP != nil {
		code, ok, err := s.OTP(ctx)
		if err != nil {
			return "", err
		}
		if ok {
			otp = code
		}
	}
	c := &IAAA{Base: s.Base("iaaa"), Transport: s.Transport}
	return c.Password(ctx, app, user, password, otp)
}

// SignIn signs in to service with user and password: IAAA for the hop's
// app, in a cookie jar of its own, then the hop (or, for ITS, the hop
// alone) in another, both new for this sign-in and following no
// redirects, and stores the session.
func (s *Signer) SignIn(ctx context.Context, service, user, password string, opt SignInOptions) Result {
	return s.signIn(ctx, service, func(app App) (string, error) {
		return s.iaaaToken(ctx, app, user, password, opt.OTPCode)
	}, user, password, opt)
}

// SignInWithToken runs the hop of service with an IAAA token obtained
// another way (a QR sign-in for App(service)).
func (s *Signer) SignInWithToken(ctx context.Context, service, token string, opt SignInOptions) Result {
	return s.signIn(ctx, service, func(App) (string, error) { return token, nil }, "", "", opt)
}

// App returns the IAAA app of service (for a QR sign-in) with the device id
// it will use; ok is false for ITS.
func (s *Signer) App(ctx context.Context, service string) (App, bool) {
	h := HopFor(service)
	if h == nil {
		return App{}, false
	}
	in := &HopInput{Base: s.Base, Device: s.device(ctx, service)}
	return h.App(in)
}

func (s *Signer) device(ctx context.Context, service string) string {
	if prev, ok, _ := s.Sessions.Get(ctx, service); ok && prev.Device != "" {
		return prev.Device
	}
	if service != "treehole" {
		return ""
	}
	s.devMu.Lock()
	defer s.devMu.Unlock()
	if s.devices == nil {
		s.devices = map[string]string{}
	}
	if s.devices[service] == "" {
		s.devices[service] = newDevice()
	}
	return s.devices[service]
}

func (s *Signer) signIn(ctx context.Context, service string, token func(App) (string, error), user, password string, opt SignInOptions) Result {
	res := Result{Service: service}
	fail := func(err error) Result { res.Err, res.Error = err, err.Error(); return res }
	h := HopFor(service)
	if h == nil {
		return fail(fmt.Errorf("campus: unknown service %q (known: %s)", service, knownNames()))
	}
	prev, _, err := s.Sessions.Get(ctx, service)
	if err != nil {
		return fail(err)
	}
	in := &HopInput{HTTP: newHTTP(s.Transport), Base: s.Base, User: user, Password: password, Prev: prev,
		Device: s.device(ctx, service), Now: s.now(), SMS: opt.SMS}
	if app, ok := h.App(in); ok {
		if in.Token, err = token(app); err != nil {
			return fail(err)
		}
	} else if user == "" {
		return fail(fmt.Errorf("%s signs in with its own account, not IAAA: give the user name and password", service))
	}
	sess, err := h.Exchange(ctx, in)
	if err != nil {
		return fail(err)
	}
	if sess.Device == "" {
		sess.Device = in.Device
	}
	if err := s.Sessions.Put(ctx, sess); err != nil {
		return fail(err)
	}
	res.OK, res.Expires, res.Pending = true, sess.Expires, in.Pending
	return res
}

// ErrNoRemembered is returned (wrapped) by Renew when the person did not
// let the host remember the password.
var ErrNoRemembered = errors.New("the password is not remembered")

// RenewEvery is the least time between two silent renewals of one
// service, in this process and, with SQLSessions, in any process on the
// database: a service that refuses a fresh session is not sent to IAAA
// again and again (each plugin request, each CLI command, could otherwise
// cost a sign-in).
const RenewEvery = time.Minute

// Renew signs in to service again with the remembered password of its
// account (ITS's own, or IAAA's when ITS has no account of its own),
// leaving any SMS check pending. It is the campus client's Renew. A
// password that IAAA or ITS refuses (*IAAAError, *ITSRefusal) is tried
// only this once: IAAA locks an account after failed attempts, so it is
// forgotten (for ITS falling back to IAAA's, ITS stops falling back and
// IAAA's is kept). Errors: ErrNoRemembered; a renewal of the same service
// less than RenewEvery ago; the sign-in's.
func (s *Signer) Renew(ctx context.Context, service string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Accounts == nil {
		return ErrNoRemembered
	}
	now := s.now()
	if last, ok := s.renewed[service]; ok && now.Sub(last) < RenewEvery {
		return fmt.Errorf("signed in again %s ago and the service still refuses the session", now.Sub(last).Round(time.Second))
	}
	account := AccountIAAA
	if service == "its" {
		account = AccountITS
	}
	user, pw, ok, err := s.Accounts.Password(ctx, account)
	if err != nil {
		return err
	}
	fallback := false
	if !ok && account == AccountITS {
		if _, _, own, err := s.Accounts.User(ctx, AccountITS); err != nil {
			return err
		} else if !own {
			user, pw, ok, err = s.Accounts.Password(ctx, AccountIAAA)
			if err != nil {
				return err
			}
			fallback = true
		}
	}
	if !ok {
		return ErrNoRemembered
	}
	// Another process (each CLI command is one) may have renewed it just now.
	if c, isSQL := s.Sessions.(*SQLSessions); isSQL {
		last, claimed, err := c.claimRenewal(ctx, service, now, RenewEvery)
		if err != nil {
			return err
		}
		if !claimed && !last.IsZero() {
			return fmt.Errorf("signed in again %s ago and the service still refuses the session", now.Sub(last).Round(time.Second))
		}
	}
	if s.renewed == nil {
		s.renewed = map[string]time.Time{}
	}
	s.renewed[service] = now
	r := s.SignIn(ctx, service, user, pw, SignInOptions{})
	var ie *IAAAError
	var ir *ITSRefusal
	if r.Err != nil && (errors.As(r.Err, &ie) || errors.As(r.Err, &ir)) {
		forget := account
		if fallback {
			forget = AccountITS
		}
		if err := s.Accounts.ForgetPassword(ctx, forget, user, now); err != nil {
			return err
		}
		return fmt.Errorf("%w; the remembered password is forgotten, so it is not tried again", r.Err)
	}
	return r.Err
}
