package campus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// NotSignedInError is the error of a request for a service the host holds
// no usable session for (docs/HOST-API.md "Campus sign-in"): none at all,
// or one that expired and could not be renewed.
type NotSignedInError struct {
	Service string
	// Reason says why, e.g. "the session expired at 2030-…"; "" when
	// there never was a session.
	Reason string
}

// SessionMissing names the service (interp.SessionError): a run that hit
// this error fails with kind session.
func (e *NotSignedInError) SessionMissing() string { return e.Service }

// Error returns "not signed in to SERVICE: [REASON: ]run harness campus
// login SERVICE (or sign in on the web app's campus page)".
func (e *NotSignedInError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("not signed in to %s: %s: run harness campus login %s", e.Service, e.Reason, e.Service)
	}
	return fmt.Sprintf("not signed in to %s: run harness campus login %s", e.Service, e.Service)
}

// Client signs campus requests with the stored sessions. It implements
// interp.CampusClient. The zero value is not usable: set Sessions.
type Client struct {
	// Sessions holds one session per service.
	Sessions Sessions
	// Transport sends the signed requests; nil means an HTTP/1.1-only copy
	// of http.DefaultTransport (the card server does not handle HTTP/2,
	// docs/CAMPUS-PROTOCOLS.md §8.1). Redirects are not followed (pkucli disables them for Treehole and
	// the card, docs/CAMPUS-PROTOCOLS.md §5.1), so a plugin sees a 3xx as a reply.
	Transport http.RoundTripper
	// Bases overrides a service's base URL (scheme and host, e.g.
	// "http://127.0.0.1:8080"); for tests against a stand-in server.
	Bases map[string]string
	// Now is the clock for cookie expiry; nil means time.Now.
	Now func() time.Time
	// Renew signs in to service again (Signer.Renew, with the remembered
	// password); nil or an error means the request fails with
	// NotSignedInError. It is tried at most once per request.
	Renew func(ctx context.Context, service string) error
}

// Base returns the base URL requests to service go to, or "" when service
// is not a campus service.
func (c *Client) Base(service string) string {
	if b, ok := c.Bases[service]; ok {
		return b
	}
	if s := Lookup(service); s != nil {
		return s.Base
	}
	return ""
}

// Do sends req to service, signed with the stored session. req.URL holds
// only the path and query (interp.CampusClient). Errors: an unknown
// service; a request to one of the service's sign-in steps (signInStep),
// which only the host sends; *NotSignedInError when there is no session, or it lacks the
// token the service needs; a URL with a scheme or host; the transport's
// error. A reply's Set-Cookie headers are merged into the stored session.
func (c *Client) Do(ctx context.Context, service string, req *http.Request) (*http.Response, error) {
	svc := Lookup(service)
	if svc == nil {
		return nil, fmt.Errorf("campus: unknown service %q (known: %s)", service, knownNames())
	}
	if req.URL.Scheme != "" || req.URL.Host != "" || !strings.HasPrefix(req.URL.Path, "/") {
		return nil, fmt.Errorf("campus %s: the url must be a path starting with / (got %q)", service, req.URL.String())
	}
	if signInStep(service, req.URL) {
		return nil, fmt.Errorf("campus %s: %s is the service's sign-in, which only the host does: sign in with harness campus login %s", service, req.URL.Path, service)
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("campus %s: read the request body: %w", service, err)
		}
		if len(b) > maxBody {
			return nil, fmt.Errorf("campus %s: the request body is over %d bytes", service, maxBody)
		}
		body = b
	}
	renewed := false
	renew := func(reason string) error {
		if c.Renew == nil || renewed {
			return &NotSignedInError{Service: service, Reason: reason}
		}
		renewed = true
		if err := c.Renew(ctx, service); err != nil {
			if errors.Is(err, ErrNoRemembered) {
				return &NotSignedInError{Service: service, Reason: reason}
			}
			return &NotSignedInError{Service: service, Reason: reason + "; signing in again failed: " + err.Error()}
		}
		return nil
	}
	for {
		sess, ok, err := c.Sessions.Get(ctx, service)
		if err != nil {
			return nil, err
		}
		if ok && sess.unopened {
			return nil, &NotSignedInError{Service: service, Reason: "the stored session was sealed with another key (the key file beside the data directory was lost or replaced, or the row is damaged)"}
		}
		if !ok || (svc.Needs == CredToken && sess.Token == "") || (svc.Needs == CredCookie && len(sess.Cookies) == 0 && sess.Token == "") {
			return nil, &NotSignedInError{Service: service}
		}
		now := c.now()
		if !sess.Expires.IsZero() && !now.Before(sess.Expires) {
			if err := renew("the session expired at " + sess.Expires.Format(time.RFC3339)); err != nil {
				return nil, err
			}
			continue
		}
		resp, err := c.send(ctx, svc, sess, req, body, now)
		if err != nil {
			return nil, err
		}
		if reason := svc.expiredReply(resp); reason != "" {
			resp.Body.Close()
			if err := renew(reason); err != nil {
				return nil, err
			}
			continue
		}
		return resp, nil
	}
}

// maxBody is the largest request body the client resends after a renewal.
const maxBody = 8 << 20

// send signs and sends one request with sess.
func (c *Client) send(ctx context.Context, svc *Service, sess *Session, req *http.Request, body []byte, now time.Time) (*http.Response, error) {
	service := svc.Name
	if service == "treehole" && sess.Device == "" {
		sess.Device = newDevice()
		if err := c.Sessions.Put(ctx, sess); err != nil {
			return nil, err
		}
	}
	base, err := url.Parse(c.Base(service))
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("campus %s: bad base URL %q", service, c.Base(service))
	}
	out := req.Clone(ctx)
	out.URL.Scheme, out.URL.Host = base.Scheme, base.Host
	out.Host = ""
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	for _, h := range credentialHeaders {
		out.Header.Del(h)
	}
	if err := svc.sign(out, sess); err != nil {
		return nil, fmt.Errorf("campus %s: sign: %w", service, err)
	}
	rt := c.Transport
	if rt == nil {
		rt = http1Transport
	}
	resp, err := rt.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	if set := resp.Cookies(); len(set) > 0 && mergeCookies(sess, set, now) {
		if err := c.Sessions.Put(ctx, sess); err != nil {
			resp.Body.Close()
			return nil, err
		}
	}
	return resp, nil
}

// http1Transport is http.DefaultTransport speaking HTTP/1.1 only.
var http1Transport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	return t
}()

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Login stores a session for service from what the user pasted: a Cookie
// header value, a token, or both (`harness campus login`). It replaces any
// earlier session but keeps its device id. Errors name the service: unknown,
// nothing given, bad cookies, or a token-signed service given no token.
func Login(ctx context.Context, ss Sessions, service, cookie, token string, now time.Time) (*Session, error) {
	svc := Lookup(service)
	if svc == nil {
		return nil, fmt.Errorf("campus login: unknown service %q (known: %s)", service, knownNames())
	}
	token = strings.TrimSpace(token)
	token = strings.TrimPrefix(strings.TrimPrefix(token, "Bearer "), "bearer ")
	if cookie == "" && token == "" {
		return nil, fmt.Errorf("campus login %s: give --cookie or --token", service)
	}
	if svc.Needs == CredToken && token == "" {
		return nil, fmt.Errorf("campus login %s: %s signs requests with a token: give --token", service, service)
	}
	s := &Session{Service: service, Token: token, Created: now.UTC()}
	if cookie != "" {
		m, err := ParseCookies(cookie)
		if err != nil {
			return nil, fmt.Errorf("campus login %s: %w", service, err)
		}
		s.Cookies = m
	}
	if old, ok, err := ss.Get(ctx, service); err != nil {
		return nil, err
	} else if ok {
		s.Device = old.Device
	}
	if err := ss.Put(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// ErrUnknownService is returned (wrapped) by Logout for a name that is not
// a campus service.
var ErrUnknownService = errors.New("unknown campus service")

// Logout deletes the session of service.
func Logout(ctx context.Context, ss Sessions, service string) error {
	if Lookup(service) == nil {
		return fmt.Errorf("campus logout %q: %w (known: %s)", service, ErrUnknownService, knownNames())
	}
	return ss.Delete(ctx, service)
}

func knownNames() string {
	names := make([]string, len(Services))
	for i, s := range Services {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}
