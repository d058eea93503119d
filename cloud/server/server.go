package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// Config configures a Server. Zero fields take the defaults DefaultConfig documents, except
// PowDifficulty, where 0 is a valid (no-work) setting: start from DefaultConfig.
type Config struct {
	// Storage keeps devices, store values, channels and mailboxes. Required.
	Storage Storage
	// Origin is the server's public origin, lowercase scheme://host[:port]; auth requests must
	// name it as `aud`. Empty: each request's own scheme and Host are used (fine on loopback,
	// not behind a proxy that rewrites Host).
	Origin string
	// Now is the clock; nil is time.Now. Tests inject a fake one to expire things instantly.
	Now func() time.Time
	// Limits are the provider limits announced in GET /v1/meta and enforced.
	Limits protocol.Limits
	// DeviceStore bounds one device's store across all its plugins (the plugin name of a token
	// is the client's choice, so Limits.store alone, per (device, plugin), bounds nothing):
	// zero fields take DefaultDeviceStore. See docs/CLOUD.md "Quotas per device".
	DeviceStore DeviceStoreLimits
	// PowDifficulty is the number of leading zero bits registration needs (default 16).
	PowDifficulty int
	// SaltRotation is how long a PoW salt is current; the previous salt is still accepted
	// (default 1 h).
	SaltRotation time.Duration
	// Operator names who runs the server (GET /v1/meta).
	Operator protocol.Operator
	// Pages is the viewer pages: {plugin}/{page}/index.html and its assets beside it, served at
	// /w/{plugin}/{page}. Nil serves none.
	Pages fs.FS
	// Registrations limits POST /v1/devices per client IP (default 10 per hour).
	Registrations RatePolicy
	// TokensPerDevice limits POST /v1/auth/token per device (default 120 per minute).
	TokensPerDevice RatePolicy
	// RequestsPerDevice limits every request made with a plugin token (store, channels,
	// DELETE /v1/devices/me), per device. A zero Quota, the DefaultConfig, disables it;
	// `harness cloud serve` sets 600 per minute.
	RequestsPerDevice RatePolicy
	// WebSocketOrigins are extra Origin host patterns (path.Match syntax) allowed to open
	// sockets; the server's own host is always allowed, and clients without Origin (apps) too.
	WebSocketOrigins []string
	// TrustForwardedFor takes the client IP from the last X-Forwarded-For entry (only behind a
	// proxy that sets it).
	TrustForwardedFor bool
	// PingInterval is how often sockets are pinged and SSE streams get a comment (default 25 s).
	PingInterval time.Duration
	// WriteTimeout bounds each write to a client (default 10 s).
	WriteTimeout time.Duration
	// BodyTimeout bounds reading each request, body included, from the moment its headers are
	// in (default 30 s): a client that declares a body and trickles it, or never sends it, is cut
	// off even when the handler answers without reading it (net/http would otherwise wait to
	// discard up to 256 KB of it). Sockets and SSE streams lift it once accepted.
	BodyTimeout time.Duration
	// SweepInterval is how often expiry is checked (default 1 s).
	SweepInterval time.Duration
	// SendQueueBytes bounds the bytes queued for one connection, frames being written included
	// (default 1 MiB). A relayed frame past it is refused with an `error` frame to its sender;
	// the relay's own frames (hello, presence, closed, replies) may go 64 KiB further.
	SendQueueBytes int
	// SlowAfter is how long a connection may keep refusing frames for the bound before it is
	// closed with 1008 "too slow" (default 5 s). A connection that does not read at all is
	// closed sooner or later by WriteTimeout too.
	SlowAfter time.Duration
	// MaxFunctionRuns bounds the server functions running at once on this node, every device
	// together (default 64; each run may take up to a minute). A call past it is answered
	// `429 rate_limited` with Retry-After 1 and no run.
	MaxFunctionRuns int
	// Bus, when set, makes this server one node of several sharing Storage (which must then be
	// shared too: cloud/server/pgstore): channel frames, presence, joins, kicks, extensions and
	// closes reach the parties connected to the other nodes through it, and the one-owner-socket
	// and one-socket-per-seat rules and the frame rates hold across nodes. Nil: one node.
	Bus Bus
	// Functions runs plugin server functions (POST /v1/fn/{plugin}/{name}) under the operator's
	// policy; nil, the default, offers none (501 unsupported), as on the official server.
	Functions Functions
	// Node names this node on the Bus (default: random). Two live nodes must not share a name.
	Node string
	// Logger receives request errors and lifecycle events; tokens are never logged. Nil
	// discards.
	Logger *slog.Logger
}

// DefaultConfig is the reference configuration over st: DEFAULT_LIMITS, difficulty 16, salts
// rotating hourly, 10 registrations per IP per hour, operator "PKU harness Cloud (self-hosted)".
func DefaultConfig(st Storage) Config {
	return Config{
		Storage:         st,
		Limits:          protocol.DefaultLimits(),
		DeviceStore:     DefaultDeviceStore,
		PowDifficulty:   protocol.DefaultPowDifficulty,
		SaltRotation:    time.Hour,
		Operator:        protocol.Operator{Name: "PKU harness Cloud (self-hosted)", Contact: ""},
		Registrations:   RatePolicy{Name: "register", Quota: 10, Window: time.Hour},
		TokensPerDevice: RatePolicy{Name: "token", Quota: 120, Window: time.Minute},
		PingInterval:    25 * time.Second,
		WriteTimeout:    10 * time.Second,
		BodyTimeout:     bodyTimeout,
		SweepInterval:   time.Second,
		SendQueueBytes:  1 << 20,
		SlowAfter:       5 * time.Second,
		MaxFunctionRuns: 64,
	}
}

// Server is the Cloud v1 reference server, an http.Handler. Build it with New; call Close (or
// cancel the context given to Serve) to stop its background work and close every socket with
// 1001.
type Server struct {
	cfg      Config
	st       Storage
	log      *slog.Logger
	tokenKey []byte
	saltKey  []byte
	pages    []protocol.MetaPage
	reg      *limiter
	tokens   *limiter
	requests *limiter
	joins    *limiter
	infos    *limiter
	calls    *limiter
	fnRuns   chan struct{} // one token per function run in flight (Config.MaxFunctionRuns)
	shared   SharedRates   // with a Bus and a storage that has it: limits counted across nodes
	hub      *hub

	stopOnce sync.Once
	stop     chan struct{}
	bg       sync.WaitGroup
	sockets  sync.WaitGroup // socket writers, which end after their close handshake
}

// New checks cfg, fills defaults, reads (or creates) the server secrets from storage and starts
// the expiry sweeper.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Storage == nil {
		return nil, errors.New("cloud server: Config.Storage is required")
	}
	def := DefaultConfig(cfg.Storage)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Limits == (protocol.Limits{}) {
		cfg.Limits = def.Limits
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("cloud server: limits: %w", err)
	}
	if cfg.DeviceStore.MaxBytes <= 0 {
		cfg.DeviceStore.MaxBytes = max(DefaultDeviceStore.MaxBytes, cfg.Limits.Store.MaxBytes)
	}
	if cfg.DeviceStore.MaxPlugins <= 0 {
		cfg.DeviceStore.MaxPlugins = DefaultDeviceStore.MaxPlugins
	}
	if cfg.PowDifficulty < 0 || cfg.PowDifficulty > protocol.MaxPowDifficulty {
		return nil, fmt.Errorf("cloud server: pow difficulty %d is outside 0–%d", cfg.PowDifficulty, protocol.MaxPowDifficulty)
	}
	if cfg.Origin != "" {
		o, err := protocol.Origin(cfg.Origin)
		if err != nil {
			return nil, fmt.Errorf("cloud server: %w", err)
		}
		cfg.Origin = o
	}
	fill := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	fill(&cfg.SaltRotation, def.SaltRotation)
	fill(&cfg.PingInterval, def.PingInterval)
	fill(&cfg.WriteTimeout, def.WriteTimeout)
	fill(&cfg.BodyTimeout, def.BodyTimeout)
	fill(&cfg.SweepInterval, def.SweepInterval)
	fill(&cfg.SlowAfter, def.SlowAfter)
	if cfg.MaxFunctionRuns <= 0 {
		cfg.MaxFunctionRuns = def.MaxFunctionRuns
	}
	if cfg.SendQueueBytes <= 0 {
		cfg.SendQueueBytes = def.SendQueueBytes
	}
	if cfg.Registrations.Window <= 0 {
		cfg.Registrations = def.Registrations
	}
	if cfg.TokensPerDevice.Window <= 0 {
		cfg.TokensPerDevice = def.TokensPerDevice
	}
	if cfg.Operator.Name == "" {
		cfg.Operator = def.Operator
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, st: cfg.Storage, log: cfg.Logger, stop: make(chan struct{})}
	var err error
	if s.tokenKey, err = s.st.Secret(ctx, "token"); err != nil {
		return nil, fmt.Errorf("cloud server: secret: %w", err)
	}
	if s.saltKey, err = s.st.Secret(ctx, "pow-salt"); err != nil {
		return nil, fmt.Errorf("cloud server: secret: %w", err)
	}
	if s.pages, err = listPages(cfg.Pages); err != nil {
		return nil, fmt.Errorf("cloud server: pages: %w", err)
	}
	s.reg = newLimiter(cfg.Registrations)
	s.tokens = newLimiter(cfg.TokensPerDevice)
	s.requests = newLimiter(cfg.RequestsPerDevice)
	perMin := int(cfg.Limits.JoinsPerIPPerMin)
	s.joins = newLimiter(RatePolicy{Name: "join", Quota: perMin, Window: time.Minute})
	s.infos = newLimiter(RatePolicy{Name: "channel-info", Quota: perMin, Window: time.Minute})
	s.calls = newLimiter(functionsPolicy(cfg.Limits))
	s.fnRuns = make(chan struct{}, cfg.MaxFunctionRuns)
	s.hub = newHub(s)
	if cfg.Bus != nil {
		s.shared, _ = cfg.Storage.(SharedRates)
		if cfg.Node == "" {
			cfg.Node = randomID(9)
			s.cfg.Node = cfg.Node
		}
		if s.hub.cl, err = newCluster(s.hub, cfg.Bus, cfg.Node); err != nil {
			return nil, fmt.Errorf("cloud server: bus: %w", err)
		}
		s.bg.Add(2)
		go s.aliveLoop()
		go s.gossipLoop()
	}
	s.bg.Add(1)
	go s.sweepLoop()
	return s, nil
}

func (s *Server) nowMs() int64 { return s.cfg.Now().UnixMilli() }

// Limits reports the limits in force.
func (s *Server) Limits() protocol.Limits { return s.cfg.Limits }

// Close stops the sweeper and closes every live socket with 1001 (reconnect), waiting for the
// close handshakes (each bounded by WriteTimeout). It does not close the Storage, which the
// caller opened.
func (s *Server) Close() {
	s.stopOnce.Do(func() {
		close(s.stop)
		if s.hub.cl != nil {
			s.hub.cl.stop()
		}
		s.hub.shutdown()
	})
	s.bg.Wait()
	s.sockets.Wait()
}

// gossipLoop tells the other nodes every gossipEvery the per-device request counts this one
// added, so the request limit holds across nodes.
func (s *Server) gossipLoop() {
	defer s.bg.Done()
	t := time.NewTicker(gossipEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			s.hub.cl.gossipRates()
			return
		case <-t.C:
			s.hub.cl.gossipRates()
		}
	}
}

// aliveLoop tells the other nodes every aliveEvery that this one is up, and forgets the parties
// of nodes that have stopped saying so.
func (s *Server) aliveLoop() {
	defer s.bg.Done()
	t := time.NewTicker(aliveEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.hub.cl.tick()
		}
	}
}

func (s *Server) sweepLoop() {
	defer s.bg.Done()
	t := time.NewTicker(s.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.Sweep(context.Background())
		}
	}
}

// Sweep expires channels whose time has come (peers and the owner get `closed` then 4010),
// deletes expired store values, nonces and mailbox slots, and forgets old rate-limit windows.
// The background sweeper calls it every SweepInterval; tests call it after moving the clock.
func (s *Server) Sweep(ctx context.Context) {
	now := s.nowMs()
	s.hub.expire(ctx, now)
	if err := s.st.Sweep(ctx, now); err != nil {
		s.log.Error("sweep", "err", err)
	}
	for _, l := range []*limiter{s.reg, s.tokens, s.requests, s.joins, s.infos, s.calls} {
		l.sweep(now)
	}
}

// ListenAndServe serves on addr until ctx ends, then shuts down: sockets close with 1001,
// in-flight requests get 5 s to finish. ready, when not nil, receives the bound address.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends. There is no server-wide write timeout (it would cut SSE
// streams and sockets); handlers set per-write deadlines instead.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-errc
	return err
}

// ----- request plumbing -----

// handlerFunc is an HTTP handler that returns its error; *protocol.Error is shown to the
// client, anything else is logged and answered `500 server`.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) run(w http.ResponseWriter, r *http.Request, h handlerFunc) {
	err := h(w, r)
	if err == nil {
		return
	}
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		pe = protocol.Errorf(protocol.CodeServer, "internal error")
	}
	writeError(w, pe)
}

// writeError answers pe with the status its code carries (seed 003: `bad_request` 400, …), so
// that status and error.code always agree.
func writeError(w http.ResponseWriter, pe *protocol.Error) {
	writeJSON(w, pe.Code.HTTPStatus(), pe.Body())
}

// bodyTimeout bounds reading a request body and writing a JSON answer; the connection's
// deadlines are reset by net/http after each request, so they never reach a later socket.
const bodyTimeout = 30 * time.Second

func writeJSON(w http.ResponseWriter, status int, v any) {
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(bodyTimeout))
	b, err := json.Marshal(v)
	if err != nil {
		status, b = 500, []byte(`{"error":{"code":"server","message":"encoding failed"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

var okBody = protocol.Ok{Ok: true}

func errf(code protocol.ErrorCode, format string, args ...any) *protocol.Error {
	return protocol.Errorf(code, format, args...)
}

// isJSONMediaType reports whether a Content-Type value is application/json, whatever its case
// and parameters (RFC 9110 §8.3.1: type, subtype and parameter names are case-insensitive):
// "APPLICATION/JSON; charset=UTF-8" is, "application/jsonp" is not.
func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// readJSON reads a body of at most max bytes and decodes it strictly into v.
func readJSON(w http.ResponseWriter, r *http.Request, max int64, v protocol.Validatable) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSONMediaType(ct) {
		return errf(protocol.CodeBadRequest, "Content-Type must be application/json")
	}
	body, err := readBody(w, r, max)
	if err != nil {
		return err
	}
	if err := protocol.Decode(body, v); err != nil {
		return errf(protocol.CodeBadRequest, "%v", err)
	}
	return nil
}

// clientIP is the request's client address for per-IP limits: an IPv4 address, or the /64 an
// IPv6 address belongs to (one subscriber usually holds a whole /64).
func (s *Server) clientIP(r *http.Request) string {
	host := ""
	if s.cfg.TrustForwardedFor {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			parts := strings.Split(xff, ",")
			host = strings.TrimSpace(parts[len(parts)-1])
		}
	}
	if host == "" {
		h, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			h = r.RemoteAddr
		}
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// limit counts one event against l for key; over the quota it answers 429 with Retry-After and
// the RateLimit fields.
func (s *Server) limit(w http.ResponseWriter, l *limiter, key string) error {
	if l.policy.Quota <= 0 {
		return nil
	}
	var ok bool
	var remaining int
	var reset int64
	if l == s.requests && s.hub.cl != nil {
		// The per-device request limit applies to every store request, where a storage round
		// trip more would halve the store's rate: the nodes tell each other their counts over
		// the bus instead (cluster.gossipRates).
		ok, remaining, reset = l.allowGossip(key, s.nowMs())
	} else if s.shared != nil && l != s.requests {
		// Counted in the shared storage, so every node's requests count.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var err error
		ok, remaining, reset, err = l.allowShared(ctx, s.shared, key, s.nowMs())
		cancel()
		if err != nil {
			s.log.Warn("shared rate limit; counting on this node", "limit", l.policy.Name, "err", err)
			ok, remaining, reset = l.allow(key, s.nowMs())
		}
	} else {
		ok, remaining, reset = l.allow(key, s.nowMs())
	}
	l.headers(w.Header(), remaining, reset, !ok)
	if !ok {
		e := errf(protocol.CodeRateLimited, "over the %s rate limit: %d per %d s", l.policy.Name, l.policy.Quota, int64(l.policy.Window/time.Second))
		e.RetryAfterS = reset
		return e
	}
	return nil
}

// origin is the provider origin requests are checked against.
func (s *Server) origin(r *http.Request) string {
	if s.cfg.Origin != "" {
		return s.cfg.Origin
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	o, err := protocol.Origin(scheme + "://" + r.Host)
	if err != nil {
		return ""
	}
	return o
}

// randomID is n random bytes in base64url.
func randomID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return protocol.B64.EncodeToString(b)
}

func sha256B64(s string) string {
	h := sha256.Sum256([]byte(s))
	return protocol.B64.EncodeToString(h[:])
}

func (s *Server) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.tokenKey)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

func (s *Server) macWith(key []byte, parts ...string) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

func hmacEqual(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }
