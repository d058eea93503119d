package campus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// NotSignedInError is the error of a request for a service the host holds
// no session for (issue 4 "Campus client").
type NotSignedInError struct{ Service string }

// Error returns "not signed in to SERVICE: run harness campus login SERVICE".
func (e *NotSignedInError) Error() string {
	return fmt.Sprintf("not signed in to %s: run harness campus login %s", e.Service, e.Service)
}

// Client signs campus requests with the stored sessions. It implements
// interp.CampusClient. The zero value is not usable: set Sessions.
type Client struct {
	// Sessions holds one session per service.
	Sessions Sessions
	// Transport sends the signed requests; nil means an HTTP/1.1-only copy
	// of http.DefaultTransport (the card server does not handle HTTP/2,
	// pku-services.md §8.1). Redirects are not followed (pkucli disables them for Treehole and
	// the card, pku-services.md §5.1), so a plugin sees a 3xx as a reply.
	Transport http.RoundTripper
	// Bases overrides a service's base URL (scheme and host, e.g.
	// "http://127.0.0.1:8080"); for tests against a stand-in server.
	Bases map[string]string
	// Now is the clock for cookie expiry; nil means time.Now.
	Now func() time.Time
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
// service; *NotSignedInError when there is no session, or it lacks the
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
	sess, ok, err := c.Sessions.Get(ctx, service)
	if err != nil {
		return nil, err
	}
	if !ok || (svc.Needs == CredToken && sess.Token == "") || (svc.Needs == CredCookie && len(sess.Cookies) == 0 && sess.Token == "") {
		return nil, &NotSignedInError{Service: service}
	}
	now := c.now()
	if !sess.Expires.IsZero() && !now.Before(sess.Expires) {
		return nil, fmt.Errorf("campus %s: the session expired at %s: run harness campus login %s",
			service, sess.Expires.Format(time.RFC3339), service)
	}
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
