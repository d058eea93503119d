package campus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Prompter is what a face that can ask the person offers SignInAll (the CLI's
// terminal); the API has none and passes nil. An empty answer skips the
// question.
type Prompter interface {
	// ITSAccount asks for ITS's own campus-network account after ITS refused
	// the IAAA one; refusal is ITS's reason.
	ITSAccount(ctx context.Context, refusal string) (user, password string, err error)
	// OTP asks for an authenticator code after IAAA asked for one; message is
	// IAAA's, in Chinese and English.
	OTP(ctx context.Context, message string) (string, error)
}

// Batch is one sign-in to several services with one IAAA account, as
// `harness campus login` and POST /v1/campus/login ask for it.
type Batch struct {
	// Services to sign in to, in order; nil or empty means every service.
	Services []string
	// User and Password are the IAAA account.
	User, Password string
	// Remember keeps the password (sealed) so that expired sessions renew
	// without asking; without it only the user name is kept.
	Remember bool
	// Options go to every SignIn (an authenticator code, the SMS prompt).
	Options SignInOptions
	// ITSUser and ITSPassword are ITS's own account when the person gave it
	// up front ("" when not).
	ITSUser, ITSPassword string
	// Prompter asks the person; nil asks nothing.
	Prompter Prompter
	// Now is the time the account is saved at; zero means time.Now.
	Now time.Time
}

// SignInAll signs in to every service of b in order, by the rules every face
// shares:
//   - it stops after IAAA refused the account (StopAfter) before any IAAA
//     service signed in, so that a wrong password does not count against the
//     account once per service (IAAA locks it after a few failures);
//   - ITS (its own campus-network account, docs/CAMPUS-PROTOCOLS.md §9) is tried with
//     the account given up front, else a stored ITS account, else the IAAA
//     one; an ITS account that worked is kept (its password only with
//     Remember), and when the IAAA one worked a stored ITS account is
//     forgotten (renewals fall back to IAAA); when ITS refuses the IAAA
//     account and b.Prompter is set, the person is asked for ITS's own;
//   - when IAAA asks for an authenticator code none of which is bound or
//     typed (WantsOTP) and b.Prompter is set, the person is asked once and
//     the code is used for the rest of the batch;
//   - a request that never reached its server is an *Unreachable; when that
//     server is IAAA, nothing more is tried (every service but ITS signs in
//     through it, so it is the network, not one service);
//   - the IAAA account is saved when any service signed in.
//
// Each service's outcome is one Result; the error is a storage error (saving
// or forgetting an account), after which nothing more is tried. An unknown
// service is an error before anything is tried.
func (s *Signer) SignInAll(ctx context.Context, b Batch) ([]Result, error) {
	services := b.Services
	if len(services) == 0 {
		for _, svc := range Services {
			services = append(services, svc.Name)
		}
	}
	for _, svc := range services {
		if Lookup(svc) == nil {
			return nil, fmt.Errorf("unknown campus service %q (known: %s)", svc, KnownNames())
		}
	}
	now := b.Now
	if now.IsZero() {
		now = time.Now()
	}
	opt := b.Options
	var out []Result
	anyOK, iaaaOK := false, false
	for _, svc := range services {
		var r Result
		var err error
		if svc == "its" {
			r, err = s.signInITS(ctx, b, now)
			if err != nil {
				return out, err
			}
		} else {
			r = s.SignIn(ctx, svc, b.User, b.Password, opt)
			if msg, ask := s.WantsOTP(ctx, r.Err, opt.OTPCode); ask && b.Prompter != nil {
				if c, err := b.Prompter.OTP(ctx, msg); err == nil && c != "" {
					opt.OTPCode = c
					r = s.SignIn(ctx, svc, b.User, b.Password, opt)
				}
			}
		}
		if u := s.Unreachable(svc, r.Err); u != nil {
			r.Err, r.Error = u, u.Error()
		}
		out = append(out, r)
		anyOK = anyOK || r.OK
		if StopAfter(svc, r, &iaaaOK) {
			break
		}
		if u, ok := r.Err.(*Unreachable); ok && u.Service == "iaaa" {
			break // every other service signs in through IAAA too: it is the network, not the service
		}
	}
	if anyOK {
		if err := s.Accounts.Save(ctx, AccountIAAA, b.User, b.Password, b.Remember, now); err != nil {
			return out, err
		}
	}
	return out, nil
}

// signInITS is SignInAll's ITS step.
func (s *Signer) signInITS(ctx context.Context, b Batch, now time.Time) (Result, error) {
	own := func(u, pw string) (Result, error) {
		r := s.SignIn(ctx, "its", u, pw, SignInOptions{})
		if r.OK {
			if err := s.Accounts.Save(ctx, AccountITS, u, pw, b.Remember, now); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	if b.ITSUser != "" && b.ITSPassword != "" {
		return own(b.ITSUser, b.ITSPassword)
	}
	if u, stored, ok, _ := s.Accounts.Password(ctx, AccountITS); ok {
		if r := s.SignIn(ctx, "its", u, stored, SignInOptions{}); r.OK {
			return r, nil
		}
	}
	r := s.SignIn(ctx, "its", b.User, b.Password, SignInOptions{})
	if r.OK {
		// ITS takes the IAAA account: renewals fall back to it again.
		return r, s.Accounts.Forget(ctx, AccountITS)
	}
	if b.Prompter == nil || !strings.HasPrefix(r.Error, "its: ") {
		return r, nil
	}
	u, pw, err := b.Prompter.ITSAccount(ctx, strings.TrimPrefix(r.Error, "its: "))
	if err != nil || u == "" || pw == "" {
		return r, nil
	}
	return own(u, pw)
}

// StopAfter says whether a sign-in to several services with one password
// stops after service's result r: IAAA refused the account (any *IAAAError,
// E01, E02 or a code it did not explain) before any service signed in
// through IAAA with this password, so every other service would only add
// failed attempts, which IAAA counts towards locking the account. *iaaaOK
// records that an IAAA service signed in.
func StopAfter(service string, r Result, iaaaOK *bool) bool {
	if r.OK && service != "its" {
		*iaaaOK = true
	}
	var ie *IAAAError
	return !*iaaaOK && errors.As(r.Err, &ie)
}

// WantsOTP says whether IAAA's refusal err looks like a request for an
// authenticator code that the person could type: no authenticator is bound,
// none was typed, and IAAA's message names 令牌 or OTP (IAAA's code for it is
// not known, docs/CAMPUS-PROTOCOLS.md §14 item 8). It returns IAAA's message to show,
// in Chinese and English.
func (s *Signer) WantsOTP(ctx context.Context, err error, typed string) (string, bool) {
	var ie *IAAAError
	if typed != "" || !errors.As(err, &ie) || ie.Code == "E01" || ie.Code == "E02" {
		return "", false
	}
	if _, bound, _ := s.OTP(ctx); bound {
		return "", false
	}
	if !strings.Contains(ie.Msg, "令牌") && !strings.Contains(strings.ToUpper(ie.Msg), "OTP") {
		return "", false
	}
	return ie.Message("zh-Hans") + " / " + ie.Message("en"), true
}

// KnownNames lists every service's name, comma-separated, for errors.
func KnownNames() string {
	n := make([]string, 0, len(Services))
	for _, s := range Services {
		n = append(n, s.Name)
	}
	return strings.Join(n, ", ")
}

// QRPollGap is the least time between two polls of one QR sign-in that reach
// IAAA: a client chooses how often it polls, the host keeps to the documented
// schedule (QRInterval, docs/CAMPUS-PROTOCOLS.md §2.3), less the jitter so that a
// client polling on time is never held back.
const QRPollGap = QRInterval - QRJitter

// QRSessions are QR sign-ins under way for a client that polls (the API), by
// id; each lives QRPolls × (QRInterval + QRJitter) at most. The zero value is
// not usable; use NewQRSessions.
type QRSessions struct {
	sg *Signer
	mu sync.Mutex
	m  map[string]*qrSession
	// Gap is the least time between two polls that reach IAAA (QRPollGap);
	// tests shorten it.
	Gap time.Duration
}

type qrSession struct {
	service string
	q       *QRLogin
	started time.Time
	polls   int
	asked   time.Time // the last poll sent to IAAA
}

// NewQRSessions returns the QR sign-ins of sg.
func NewQRSessions(sg *Signer) *QRSessions {
	return &QRSessions{sg: sg, m: map[string]*qrSession{}, Gap: QRPollGap}
}

// ErrOwnAccount is Start's error for a service that does not sign in through
// IAAA (ITS).
var ErrOwnAccount = errors.New("signs in with its own account, not IAAA")

// ErrNoQR is Poll's error for an id that is not (or no longer) under way.
var ErrNoQR = errors.New("no QR sign-in with that id (it ended or expired)")

// Start begins a QR sign-in to service and returns its id and the QR login
// (Image, ContentType). An error is ErrOwnAccount (wrapped with the service),
// or IAAA's.
func (qs *QRSessions) Start(ctx context.Context, service string) (string, *QRLogin, error) {
	if Lookup(service) == nil {
		return "", nil, fmt.Errorf("unknown campus service %q (known: %s)", service, KnownNames())
	}
	app, ok := qs.sg.App(ctx, service)
	if !ok {
		return "", nil, fmt.Errorf("%s %w", service, ErrOwnAccount)
	}
	q, err := (&IAAA{Base: qs.sg.Base("iaaa"), Transport: qs.sg.Transport}).StartQR(ctx, app)
	if err != nil {
		return "", nil, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	qs.mu.Lock()
	for k, e := range qs.m { // drop the stale ones
		if time.Since(e.started) > QRPolls*(QRInterval+QRJitter) {
			delete(qs.m, k)
		}
	}
	qs.m[id] = &qrSession{service: service, q: q, started: time.Now()}
	qs.mu.Unlock()
	return id, q, nil
}

// The states of Poll.
const (
	QRWaiting  = "waiting"   // not scanned yet, or polled sooner than Gap (IAAA was not asked)
	QRSignedIn = "signed_in" // scanned and signed in
	QRFailed   = "failed"    // IAAA refused, the code expired (E99 after QRPolls), or the sign-in failed
)

// Poll asks IAAA whether the QR sign-in id was scanned, at most once per Gap
// (a sooner poll is QRWaiting without asking), and signs in when it was. The
// result is set for QRSignedIn and QRFailed; the session ends with either.
// An unknown id is ErrNoQR.
func (qs *QRSessions) Poll(ctx context.Context, id string) (string, *Result, error) {
	qs.mu.Lock()
	e := qs.m[id]
	early := false
	if e != nil {
		if early = !e.asked.IsZero() && time.Since(e.asked) < qs.Gap; !early {
			e.polls++
			e.asked = time.Now()
		}
	}
	qs.mu.Unlock()
	if e == nil {
		return "", nil, ErrNoQR
	}
	if early {
		return QRWaiting, nil, nil
	}
	tok, done, err := e.q.PollOnce(ctx)
	if err == nil && !done && e.polls >= QRPolls {
		err = &IAAAError{Code: "E99"}
	}
	if err == nil && !done {
		return QRWaiting, nil, nil
	}
	qs.mu.Lock()
	delete(qs.m, id)
	qs.mu.Unlock()
	if err != nil {
		return QRFailed, &Result{Service: e.service, Err: err, Error: err.Error()}, nil
	}
	res := qs.sg.SignInWithToken(ctx, e.service, tok, SignInOptions{})
	if !res.OK {
		return QRFailed, &res, nil
	}
	return QRSignedIn, &res, nil
}
