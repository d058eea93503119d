// Package api is the host's JSON API over HTTP, served by `harness serve`
// (docs/HOST-API.md): the web dashboard and the MCP server use it.
// Every route is under /v1; every reply is JSON; errors are
// {"error":{"code","message",…}} with a status that says what kind of error
// it is (see docs/HOST-API.md). Handlers return errors, and one function
// (writeError) turns a typed error into the reply (STYLE §10).
//
// Without Options.Token the API has no authentication: it is meant for
// loopback. It then refuses requests whose Host header is not a loopback
// name or address (so a web page cannot reach it by DNS rebinding) unless
// Options.AllowedHosts lists the host. With a token, every route (the
// ones added with Handle too) requires "Authorization: Bearer <token>"
// (the optional bearer token, docs/HOST-API.md) and the Host check is off: a
// rebinding page cannot send the token.
//
// Cross-site requests are refused whatever the token (see guard): a request
// whose Origin is not the API's own origin, or whose Sec-Fetch-Site is
// cross-site or same-site, is 403 "cross_site"; a request that changes state
// (POST, PUT, PATCH, DELETE) must say Content-Type: application/json, even
// with an empty body, or it is 415 "bad_content_type" — no HTML form and no
// "simple" fetch of another page can send that without a CORS preflight,
// and the API answers no preflight (it sends no CORS header at all).
package api

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// MaxBody is the largest request body the API reads, in bytes.
const MaxBody = 1 << 20

// Options configures New.
type Options struct {
	// AllowedHosts are extra Host header names (without port) the API
	// answers, besides localhost and loopback addresses.
	AllowedHosts []string
	// Token, when not empty, is the bearer token every request must send
	// as "Authorization: Bearer <Token>"; others get 401 "unauthorized".
	// It is never logged. New does not judge its strength: callers check
	// it with CheckToken. Wrong tokens are slowed per client address (see
	// FreeFailures).
	Token string
	// Now is the clock of the token backoff; nil means time.Now.
	Now func() time.Time
	// Log receives one line per failed request; nil means slog.Default().
	Log *slog.Logger
	// MaxStreams and MaxClientStreams cap the open streams (HandleStream)
	// in all and per client; 0 means the constants of the same names. Tests
	// lower them.
	MaxStreams, MaxClientStreams int
}

// Server is the JSON API of one Host. It is an http.Handler.
type Server struct {
	h      *host.Host
	mux    *http.ServeMux
	opts   Options
	log    *slog.Logger
	routes []string // every pattern added, in order (Routes)
	auth   *authLimiter
	// streams counts the open streams of HandleStream and LimitStreams.
	streams *streamLimiter
	// bodyless maps the patterns whose DELETE may come without a
	// Content-Type to the header such a DELETE must carry (HandleProtocol).
	bodyless map[string]string
}

// New returns the API of h with every route of docs/HOST-API.md.
func New(h *host.Host, opts Options) *Server {
	s := &Server{h: h, mux: http.NewServeMux(), opts: opts, log: opts.Log, bodyless: map[string]string{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s.auth = &authLimiter{now: now, clients: map[string]*authClient{}}
	s.streams = newStreamLimiter(opts.MaxStreams, opts.MaxClientStreams)
	s.route("GET /v1/health", s.health)
	s.route("GET /v1/plugins", s.list)
	s.route("POST /v1/reviews", s.review)
	s.route("POST /v1/plugins", s.install)
	s.route("GET /v1/plugins/{id}", s.show)
	s.route("DELETE /v1/plugins/{id}", s.remove)
	s.route("POST /v1/plugins/{id}/update", s.update)
	s.route("GET /v1/plugins/{id}/held", s.held)
	s.route("POST /v1/plugins/{id}/accept", s.accept)
	s.route("POST /v1/plugins/{id}/rollback", s.rollback)
	s.route("POST /v1/plugins/{id}/rollforward", s.rollforward)
	s.route("GET /v1/plugins/{id}/versions", s.versions)
	s.route("PUT /v1/plugins/{id}/enabled", s.enabled)
	s.route("PUT /v1/plugins/{id}/auto-update", s.autoUpdate)
	s.route("GET /v1/plugins/{id}/modes", s.modes)
	s.route("PUT /v1/plugins/{id}/modes", s.setModes)
	s.route("GET /v1/plugins/{id}/data/{source}", s.data)
	s.route("GET /v1/tools", s.tools)
	s.route("POST /v1/tools/{name}/call", s.call)
	s.route("GET /v1/confirmations", s.pending)
	s.route("POST /v1/confirmations/{cid}", s.confirm)
	s.route("POST /v1/turns/{turn}/end", s.endTurn)
	s.route("GET /v1/audit", s.audit)
	// What no route takes: JSON 404, or 405 with Allow (fallback.go).
	s.route("/", s.fallback)
	return s
}

// Handle adds a route of another package (host abilities, the campus
// client) with the API's token, Host, origin and content-type checks
// (guard). pattern is a http.ServeMux pattern such as "GET /v1/todos".
func (s *Server) Handle(pattern string, h http.Handler) {
	s.routes = append(s.routes, pattern)
	s.mux.Handle(pattern, s.guard(pattern, h))
}

// HandleStatic adds a GET route for public files that carry no data (the
// web app's page and its scripts, docs/HOST-API.md "The web app"), served
// without the guard: a browser loads the page before it can send a token,
// and opening it from a link elsewhere is a cross-site navigation. Such
// routes are not in Routes, whose every pattern is guarded; pattern must be
// a GET pattern, or HandleStatic panics (a programming error).
func (s *Server) HandleStatic(pattern string, h http.Handler) {
	if !strings.HasPrefix(pattern, "GET ") {
		panic("api: HandleStatic " + pattern + ": static routes are GET routes")
	}
	s.mux.Handle(pattern, h)
}

// HandleProtocol is Handle for the endpoint of a protocol whose DELETE
// carries no body and no Content-Type but a header of its own (MCP's
// session end carries Mcp-Session-Id): a bodiless DELETE with header set
// is let through the content-type check (no form can set a header, and a
// page's fetch of DELETE needs a preflight the API never answers); the
// origin check still applies.
func (s *Server) HandleProtocol(pattern, header string, h http.Handler) {
	s.bodyless[pattern] = header
	s.Handle(pattern, h)
}

// Routes returns every pattern the API serves, in the order they were
// added (New's own, then Handle's and HandleFunc's): tests walk it so that
// no route escapes the guard's checks.
func (s *Server) Routes() []string { return slices.Clone(s.routes) }

// HandleFunc is Handle for a function that returns an error: the error is
// written as the API's other errors are (see Error).
func (s *Server) HandleFunc(pattern string, f func(w http.ResponseWriter, r *http.Request) error) {
	s.route(pattern, f)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) route(pattern string, f func(w http.ResponseWriter, r *http.Request) error) {
	s.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}))
}

// guard refuses, in this order: cross-site requests (crossSite, before the
// token so that a page cannot even count as a guess), requests in a token
// lockout (429) and without the token (401, when there is one), foreign
// Host headers (when there is none), and state changes whose Content-Type is not
// application/json (the media type compared case-insensitively,
// parameters allowed, an empty body included).
func (s *Server) guard(pattern string, next http.Handler) http.Handler {
	bodyless := s.bodyless[pattern]
	exempt := func(r *http.Request) bool {
		return bodyless != "" && r.Method == http.MethodDelete && r.ContentLength <= 0 &&
			r.Header.Get("Content-Type") == "" && r.Header.Get(bodyless) != ""
	}
	var want []byte
	if s.opts.Token != "" {
		want = []byte("Bearer " + s.opts.Token)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := crossSite(r); why != "" {
			s.writeError(w, r, &Error{Status: http.StatusForbidden, Code: "cross_site",
				Message: why + ": the API answers its own origin only (requests from other web pages are refused)"})
			return
		}
		if want != nil {
			key := clientKey(r)
			if d := s.auth.locked(key); d > 0 {
				w.Header().Set("Retry-After", retryAfter(d))
				s.writeError(w, r, &Error{Status: http.StatusTooManyRequests, Code: "slow_down",
					Message: fmt.Sprintf("too many wrong tokens from this address: try again in %s", retryAfter(d)+" s")})
				return
			}
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
				if d := s.auth.fail(key); d > 0 {
					w.Header().Set("Retry-After", retryAfter(d))
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="harness"`)
				s.writeError(w, r, &Error{Status: http.StatusUnauthorized, Code: "unauthorized",
					Message: "send the token of harness serve as \"Authorization: Bearer TOKEN\""})
				return
			}
			s.auth.ok(key)
		} else if !s.hostAllowed(r.Host) {
			s.writeError(w, r, &Error{Status: http.StatusForbidden, Code: "forbidden_host",
				Message: fmt.Sprintf("host %q is not allowed: the API answers loopback names only", r.Host)})
			return
		}
		if changesState(r.Method) && !exempt(r) {
			ct := r.Header.Get("Content-Type")
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				s.writeError(w, r, &Error{Status: http.StatusUnsupportedMediaType, Code: "bad_content_type",
					Message: fmt.Sprintf("content type %q: a %s must say Content-Type: application/json, even with an empty body", ct, r.Method)})
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		next.ServeHTTP(w, r)
	})
}

// fromPage reports whether r comes from a web page, the host's own included: a browser sends
// Origin on every POST and Sec-Fetch-Site on every fetch; command-line and MCP clients send
// neither. A page can be made to ask for what its person never meant (a link to
// /install?link=… from another site), so what it may name is narrower.
func fromPage(r *http.Request) bool {
	return r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != ""
}

// WebLink reports whether src is an https or http URL with a host: the only sources a web page
// may have reviewed or fetched (plugin.ResolveLink then judges the link itself: http only to
// this machine). Folders, file: URLs, official:NAME and builtin:ID are not.
func WebLink(src string) bool {
	u, err := url.Parse(strings.TrimSpace(src))
	if err != nil || u.Host == "" {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme == "https" || scheme == "http"
}

// clipSource is src cut for an error message.
func clipSource(src string) string {
	if r := []rune(src); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return src
}

// changesState reports whether a request of this method may change state:
// anything but GET, HEAD and OPTIONS.
func changesState(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// crossSite says why r comes from another web page, or "": an Origin
// header other than the request's own origin (scheme, Host header;
// "null" included), or Sec-Fetch-Site cross-site or same-site (a page of
// another port or subdomain). Requests with neither header (command-line
// clients, MCP clients, old browsers on same-origin pages) pass; the
// content-type check still stops an old browser's cross-site form.
func crossSite(r *http.Request) string {
	switch site := strings.ToLower(r.Header.Get("Sec-Fetch-Site")); site {
	case "cross-site", "same-site":
		return fmt.Sprintf("Sec-Fetch-Site is %s", site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != scheme || !strings.EqualFold(u.Host, r.Host) || u.Path != "" {
		return fmt.Sprintf("Origin %q is not %s://%s", origin, scheme, r.Host)
	}
	return ""
}

func (s *Server) hostAllowed(hostport string) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || slices.Contains(s.opts.AllowedHosts, h) {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Error is an API error with the status and code the client sees.
type Error struct {
	Status  int
	Code    string
	Message string
	// Extra holds more fields of the error object (diagnostics, kind, …).
	Extra map[string]any
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

func badRequest(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "bad_request", Message: fmt.Sprintf(format, args...)}
}

// classify maps the host's typed errors to API errors; anything else is a
// 500 whose message is logged, not shown.
func classify(err error) *Error {
	var (
		ae  *Error
		nf  *host.NotFound
		c   *host.Conflict
		inv *host.Invalid
		ur  *host.Unreadable
		ref *host.Refusal
		ie  *interp.Error
		mbe *http.MaxBytesError
		nse *campus.NotSignedInError
		af  *host.AuditFailure
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &af):
		// The client must learn whether the tool ran (a write must not be repeated blindly);
		// the database's error stays in the server log.
		msg := fmt.Sprintf("%s.%s did not run: its audit record could not be written (see the server log)", af.Plugin, af.Tool)
		if af.Ran {
			msg = fmt.Sprintf("%s.%s ran, but its audit record could not be completed (see the server log); its result is withheld", af.Plugin, af.Tool)
		}
		return &Error{Status: http.StatusInternalServerError, Code: "audit_failed", Message: msg, Extra: map[string]any{"ran": af.Ran}}
	case errors.As(err, &mbe):
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Message: fmt.Sprintf("the body is over %d bytes", MaxBody)}
	case errors.As(err, &nf):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: err.Error()}
	case errors.As(err, &c):
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: err.Error()}
	case errors.As(err, &inv):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_plugin", Message: err.Error(),
			Extra: map[string]any{"diagnostics": inv.Diagnostics}}
	case errors.As(err, &ur):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "bad_source", Message: err.Error()}
	case errors.As(err, &ref):
		return &Error{Status: http.StatusForbidden, Code: "refused", Message: err.Error(),
			Extra: map[string]any{"reason": ref.Reason}}
	case errors.As(err, &ie) && consentAsk(err) != nil:
		// A tool that needs the person's Cloud consent (seed 003 "插件指南" §2): the face shows
		// the host's consent panel from `consent` and runs the tool again once allowed.
		ce := consentAsk(err)
		return &Error{Status: http.StatusForbidden, Code: string(ce.Code), Message: ie.Error(),
			Extra: map[string]any{"kind": ie.Kind, "consent": ce.Ask}}
	case errors.As(err, &nse):
		// A tool that needs a campus session the host does not hold: the face points the
		// person to its own sign-in (the web app to Settings → Campus sign-in) rather than to
		// the CLI command the message names.
		extra := map[string]any{"service": nse.Service}
		if sv := campus.Lookup(nse.Service); sv != nil {
			extra["title"] = sv.Title
		}
		return &Error{Status: http.StatusConflict, Code: "not_signed_in", Message: err.Error(), Extra: extra}
	case errors.As(err, &ie):
		extra := map[string]any{"kind": ie.Kind}
		if ie.File != "" {
			extra["file"], extra["line"], extra["col"] = ie.File, ie.Pos.Line, ie.Pos.Col
		}
		if ie.Step != "" {
			extra["step"] = ie.Step
		}
		return &Error{Status: http.StatusUnprocessableEntity, Code: "tool_failed", Message: ie.Error(), Extra: extra}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error (see the server log)"}
}

// consentAsk is the Cloud error under err that asks for consent (consent_required, or
// unavailable for want of a provider), nil when there is none.
func consentAsk(err error) *cloud.Error {
	var ce *cloud.Error
	if errors.As(err, &ce) && ce.Ask != nil {
		return ce
	}
	return nil
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := classify(err)
	if e.Status >= 500 {
		s.log.Error("api", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body := map[string]any{"code": e.Code, "message": e.Message}
	for k, v := range e.Extra {
		body[k] = v
	}
	WriteJSON(w, e.Status, map[string]any{"error": body})
}

// WriteJSON writes v as every reply of the API is written: status, JSON with
// `Content-Type: application/json; charset=utf-8`, `Cache-Control: no-store`,
// HTML characters not escaped. The error is the connection's.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// ReadJSON decodes a request body into v by the API's one rule
// (docs/HOST-API.md "Errors"): at most MaxBody bytes, past which it is 413
// too_large; an empty or blank body leaves v as it is, like `{}` (a route
// whose fields are required says so itself); unknown fields, a body that is
// not JSON, or more than one JSON value are 400 bad_request.
func ReadJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Message: fmt.Sprintf("the body is over %d bytes", MaxBody)}
		}
		return err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("the body is not the JSON this route takes: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("the body is not the JSON this route takes: more than one JSON value")
	}
	return nil
}

// value turns an expr value into raw JSON for a reply.
func value(v any) (json.RawMessage, error) {
	b, err := expr.ToJSON(v, "")
	if err != nil {
		return nil, fmt.Errorf("the result: %w", err)
	}
	return b, nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	return nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) error {
	list, err := s.h.List(r.Context())
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"plugins": list})
	return nil
}

// reviewReply is a Review plus its sheet text.
type reviewReply struct {
	*host.Review
	Sheet string `json:"sheet"`
}

func (s *Server) review(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Source string `json:"source"`
		Lang   string `json:"lang"`
	}
	if err := ReadJSON(r, &req); err != nil {
		return err
	}
	if req.Source == "" {
		return badRequest("source is required: an install link, a folder or official:NAME")
	}
	if fromPage(r) && !WebLink(req.Source) {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "bad_source",
			Message: fmt.Sprintf("source %q: a web page may have an install link reviewed (https://…, or http:// to this machine), not a folder or another kind of source; review those with harness plugins review", clipSource(req.Source))}
	}
	rv, err := s.h.Review(r.Context(), req.Source)
	if err != nil {
		return err
	}
	lang := req.Lang
	if lang == "" {
		lang = host.LangZh
	}
	WriteJSON(w, http.StatusOK, reviewReply{rv, rv.Sheet(lang)})
	return nil
}

func (s *Server) install(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Source string `json:"source"`
		Hash   string `json:"hash"`
	}
	if err := ReadJSON(r, &req); err != nil {
		return err
	}
	if req.Hash == "" {
		return badRequest("hash is required: the hash of the review the user accepted (POST /v1/reviews)")
	}
	src := req.Source
	if fromPage(r) && !WebLink(src) {
		// A web page installs another kind of source (a draft, a folder) only by the hash of
		// its review on this host, never by reading the source afresh.
		src = ""
	}
	in, err := s.h.Install(r.Context(), src, req.Hash)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, in)
	return nil
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) error {
	in, err := s.h.Show(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, in)
	return nil
}

func (s *Server) remove(w http.ResponseWriter, r *http.Request) error {
	var opts host.RemoveOptions // body {"deleteCloudData": bool}, optional
	if err := ReadJSON(r, &opts); err != nil {
		return err
	}
	out, err := s.h.RemoveWith(r.Context(), r.PathValue("id"), opts)
	if cloud.IsCode(err, cloud.CodeOffline) {
		return &Error{Status: http.StatusBadGateway, Code: "offline", Message: err.Error() + " (nothing was removed; remove without deleteCloudData to keep the data on the provider)"}
	}
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) error {
	o, err := s.h.Update(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) held(w http.ResponseWriter, r *http.Request) error {
	rv, widened, err := s.h.HeldReview(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	lang := r.URL.Query().Get("lang")
	if lang == "" {
		lang = host.LangZh
	}
	WriteJSON(w, http.StatusOK, struct {
		reviewReply
		Widened []string `json:"widened"`
	}{reviewReply{rv, rv.Sheet(lang)}, widened})
	return nil
}

func (s *Server) accept(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Hash string `json:"hash"`
	}
	if err := ReadJSON(r, &req); err != nil {
		return err
	}
	o, err := s.h.AcceptUpdate(r.Context(), r.PathValue("id"), req.Hash)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) rollback(w http.ResponseWriter, r *http.Request) error {
	o, err := s.h.Rollback(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) rollforward(w http.ResponseWriter, r *http.Request) error {
	o, err := s.h.Rollforward(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) versions(w http.ResponseWriter, r *http.Request) error {
	vs, err := s.h.Versions(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if vs == nil {
		vs = []host.KeptVersion{}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"versions": vs})
	return nil
}

func (s *Server) switchRoute(w http.ResponseWriter, r *http.Request, set func(id string, on bool) error) error {
	var req struct {
		On *bool `json:"on"`
	}
	if err := ReadJSON(r, &req); err != nil {
		return err
	}
	if req.On == nil {
		return badRequest(`the body must be {"on": true} or {"on": false}`)
	}
	if err := set(r.PathValue("id"), *req.On); err != nil {
		return err
	}
	return s.show(w, r)
}

func (s *Server) enabled(w http.ResponseWriter, r *http.Request) error {
	return s.switchRoute(w, r, func(id string, on bool) error { return s.h.SetEnabled(r.Context(), id, on) })
}

func (s *Server) autoUpdate(w http.ResponseWriter, r *http.Request) error {
	return s.switchRoute(w, r, func(id string, on bool) error { return s.h.SetAutoUpdate(r.Context(), id, on) })
}

func modesJSON(m map[plugin.Effect]host.Mode) map[string]host.Mode {
	out := map[string]host.Mode{}
	for e, mode := range m {
		out[e.String()] = mode
	}
	return out
}

func (s *Server) modes(w http.ResponseWriter, r *http.Request) error {
	m, err := s.h.Modes(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"modes": modesJSON(m)})
	return nil
}

func (s *Server) setModes(w http.ResponseWriter, r *http.Request) error {
	var req map[string]string
	if err := ReadJSON(r, &req); err != nil {
		return err
	}
	id := r.PathValue("id")
	// Every entry is checked before any is written: a refused request changes nothing.
	set := make(map[plugin.Effect]host.Mode, len(req))
	for eff, mode := range req {
		e, err := plugin.ParseEffect(eff)
		if err != nil {
			return badRequest("%v", err)
		}
		m, err := host.ParseMode(mode)
		if err != nil {
			return badRequest("%s: %v", eff, err)
		}
		set[e] = m
	}
	for e, m := range set {
		if err := s.h.SetMode(r.Context(), id, e, m); err != nil {
			return err
		}
	}
	return s.modes(w, r)
}

func (s *Server) data(w http.ResponseWriter, r *http.Request) error {
	refresh := r.URL.Query().Get("refresh")
	v, err := s.h.DataSource(r.Context(), r.PathValue("id"), r.PathValue("source"), refresh == "1" || refresh == "true")
	if err != nil {
		return err
	}
	raw, err := value(v.Value)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, struct {
		*host.DataValue
		Value json.RawMessage `json:"value"`
	}{v, raw})
	return nil
}

func (s *Server) tools(w http.ResponseWriter, r *http.Request) error {
	tools, err := s.h.AgentTools(r.Context())
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"tools": tools})
	return nil
}

// callReply is the reply of a call: the result, or the confirmation the
// client must answer.
type callReply struct {
	Status       string             `json:"status"` // "ok" or "confirm"
	Result       json.RawMessage    `json:"result,omitempty"`
	Untrusted    bool               `json:"untrusted,omitempty"`
	Confirmation *host.Confirmation `json:"confirmation,omitempty"`
	DurationUs   int64              `json:"durationUs,omitempty"`
}

func reply(w http.ResponseWriter, res *host.CallResult) error {
	if res.Confirmation != nil {
		WriteJSON(w, http.StatusAccepted, callReply{Status: "confirm", Confirmation: res.Confirmation})
		return nil
	}
	raw, err := value(res.Value)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, callReply{Status: "ok", Result: raw, Untrusted: res.Untrusted, DurationUs: res.Duration.Microseconds()})
	return nil
}

func (s *Server) call(w http.ResponseWriter, r *http.Request) error {
	pluginID, tool, ok := host.SplitToolName(r.PathValue("name"))
	if !ok {
		return badRequest("tool %q: name it PLUGIN__TOOL or PLUGIN.TOOL", r.PathValue("name"))
	}
	var req struct {
		Actor string          `json:"actor"`
		Input json.RawMessage `json:"input"`
		Turn  string          `json:"turn"`
		Drawn string          `json:"drawn"`
	}
	if err := ReadJSON(r, &req); err != nil {
		return err
	}
	if req.Drawn != "" && req.Turn != "" {
		return badRequest(`send "drawn" (a button of a document the assistant drew) or "turn", not both: a drawn document's turn is the host's to know`)
	}
	if req.Actor == "" {
		return badRequest(`actor is required: "user" (a person asked for this call), "agent" (the assistant) or "scheduler"`)
	}
	actor, err := host.ParseActor(req.Actor)
	if err != nil {
		return badRequest("%v", err)
	}
	var input any
	if len(req.Input) > 0 {
		if input, err = expr.FromJSON(req.Input); err != nil {
			return badRequest("input: %v", err)
		}
	}
	res, err := s.h.Call(r.Context(), host.CallRequest{Actor: actor, Plugin: pluginID, Tool: tool, Input: input, Turn: req.Turn, Drawn: req.Drawn})
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (s *Server) pending(w http.ResponseWriter, r *http.Request) error {
	WriteJSON(w, http.StatusOK, map[string]any{"confirmations": s.h.Pending()})
	return nil
}

func (s *Server) confirm(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Approve *bool `json:"approve"`
	}
	if err := ReadJSON(r, &req); err != nil {
		return err
	}
	if req.Approve == nil {
		return badRequest(`the body must be {"approve": true} or {"approve": false}`)
	}
	res, err := s.h.Confirm(r.Context(), r.PathValue("cid"), *req.Approve)
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (s *Server) endTurn(w http.ResponseWriter, r *http.Request) error {
	s.h.EndTurn(r.PathValue("turn"))
	WriteJSON(w, http.StatusOK, map[string]any{"ended": r.PathValue("turn")})
	return nil
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) error {
	limit := 100
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return badRequest("limit %q: want 1–1000", l)
		}
		limit = n
	}
	entries, err := s.h.Audit(r.Context(), r.URL.Query().Get("plugin"), limit)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"entries": entries})
	return nil
}
