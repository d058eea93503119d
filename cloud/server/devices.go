package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// services is what this provider offers; push and files answer 501 unsupported, and functions
// too unless Config.Functions is set (see offered).
var services = []string{protocol.ServiceStore, protocol.ServiceChannels}

var servicesWithFunctions = []string{protocol.ServiceStore, protocol.ServiceChannels, protocol.ServiceFunctions}

// offered is the services this server offers.
func (s *Server) offered() []string {
	if s.cfg.Functions != nil {
		return servicesWithFunctions
	}
	return services
}

// powSalt is the salt of the given rotation epoch: HMAC(server secret, epoch), 16 bytes in
// base64url. Deriving it means no salt state to store, and a restart keeps the current salt.
func (s *Server) powSalt(epoch int64) string {
	m := s.macWith(s.saltKey, "pow-salt", strconv.FormatInt(epoch, 10))
	return protocol.B64.EncodeToString(m[:16])
}

func (s *Server) saltEpoch() int64 {
	return s.nowMs() / s.cfg.SaltRotation.Milliseconds()
}

// getMeta answers GET /v1/meta (seed 003 “# 元数据”).
func (s *Server) getMeta(w http.ResponseWriter, r *http.Request) error {
	pages := s.pages
	if pages == nil {
		pages = []protocol.MetaPage{}
	}
	writeJSON(w, http.StatusOK, protocol.MetaResponse{
		Protocol:  protocol.ProtocolVersion,
		Services:  s.offered(),
		Limits:    s.cfg.Limits,
		Pow:       protocol.MetaPow{Difficulty: s.cfg.PowDifficulty, Salt: s.powSalt(s.saltEpoch())},
		Pages:     pages,
		Functions: s.listedFunctions(),
		Operator:  s.cfg.Operator,
	})
	return nil
}

// registerDevice answers POST /v1/devices: it recomputes the proof of work against the current
// or the previous salt and stores the identity (seed 003 “POST /v1/devices”).
func (s *Server) registerDevice(w http.ResponseWriter, r *http.Request) error {
	if err := s.limit(w, s.reg, s.clientIP(r)); err != nil {
		return err
	}
	var req protocol.RegisterDeviceRequest
	if err := readJSON(w, r, 4<<10, &req); err != nil {
		return err
	}
	// Before the proof of work: a low-order boxPub (all zeros, or another point of small order)
	// would make every secret sealed to the device known to anyone, as chanPub and peerPub.
	if pub, err := protocol.DecodeKey32(req.BoxPub); err != nil {
		return errf(protocol.CodeBadRequest, "boxPub: %v", err)
	} else if protocol.CheckX25519Public(pub) != nil {
		return errf(protocol.CodeBadRequest, "boxPub: a low-order X25519 key")
	}
	epoch := s.saltEpoch()
	if req.Pow.Salt != s.powSalt(epoch) && req.Pow.Salt != s.powSalt(epoch-1) {
		return errf(protocol.CodePowInvalid, "pow.salt is not the current or the previous salt; read GET /v1/meta again")
	}
	if !protocol.VerifyPow(req.Pow.Salt, req.SignPub, req.BoxPub, req.Pow.Nonce, s.cfg.PowDifficulty) {
		return errf(protocol.CodePowInvalid, "the proof of work has fewer than %d leading zero bits", s.cfg.PowDifficulty)
	}
	d := Device{ID: randomID(16), SignPub: req.SignPub, BoxPub: req.BoxPub, CreatedAt: s.nowMs()}
	if err := s.st.CreateDevice(r.Context(), d); err != nil {
		if errors.Is(err, ErrConflict) {
			return errf(protocol.CodeConflict, "this signPub is already registered")
		}
		return err
	}
	s.log.Info("device registered", "device", d.ID)
	writeJSON(w, http.StatusOK, protocol.RegisterDeviceResponse{DeviceID: d.ID})
	return nil
}

// tokenClaims is what a plugin token carries: sub (device), plg (plugin), svc (services), exp
// (Unix ms).
type tokenClaims struct {
	Sub string   `json:"sub"`
	Plg string   `json:"plg"`
	Svc []string `json:"svc"`
	Exp int64    `json:"exp"`
	// Doc and Hash are the consented document (link and content hash) of a token with the
	// functions service: the only version POST /v1/fn runs for it.
	Doc  string `json:"doc,omitempty"`
	Hash string `json:"hash,omitempty"`
}

const tokenPrefix = "pt1."

func (s *Server) mintToken(c tokenClaims) string {
	body, _ := json.Marshal(c)
	p := protocol.B64.EncodeToString(body)
	return tokenPrefix + p + "." + protocol.B64.EncodeToString(s.mac("plugin-token", p))
}

// verifyToken checks a plugin token's MAC and expiry and that its device still exists, and that
// it grants service (when not empty).
func (s *Server) verifyToken(r *http.Request, tok, service string) (tokenClaims, error) {
	var c tokenClaims
	bad := errf(protocol.CodeUnauthorized, "missing, malformed or expired token")
	if !strings.HasPrefix(tok, tokenPrefix) {
		return c, bad
	}
	p, sig, ok := strings.Cut(tok[len(tokenPrefix):], ".")
	if !ok {
		return c, bad
	}
	want := protocol.B64.EncodeToString(s.mac("plugin-token", p))
	if !hmacEqual(sig, want) {
		return c, bad
	}
	body, err := protocol.B64.DecodeString(p)
	if err != nil || json.Unmarshal(body, &c) != nil {
		return c, bad
	}
	if c.Exp <= s.nowMs() {
		return c, bad
	}
	if _, err := s.st.Device(r.Context(), c.Sub); err != nil {
		if errors.Is(err, ErrNotFound) {
			return c, errf(protocol.CodeUnauthorized, "the device of this token is deleted")
		}
		return c, err
	}
	if service != "" && !slices.Contains(c.Svc, service) {
		return c, errf(protocol.CodeForbidden, "the token does not grant the %s service", service)
	}
	return c, nil
}

// pluginToken reads the bearer token (or, for sockets, `?t=`), verifies it and counts the
// request against Config.RequestsPerDevice.
func (s *Server) pluginToken(w http.ResponseWriter, r *http.Request, service string, queryOK bool) (tokenClaims, error) {
	tok, ok := bearer(r)
	if !ok && queryOK {
		tok = r.URL.Query().Get("t")
	}
	c, err := s.verifyToken(r, tok, service)
	if err != nil {
		return c, err
	}
	return c, s.limit(w, s.requests, c.Sub)
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", false
}

// createToken answers POST /v1/auth/token (seed 003): aud must be this server's origin, ts
// within ±5 min, the nonce unused for the device, the signature valid for the device's key.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	var req protocol.AuthTokenRequest
	if err := readJSON(w, r, 4<<10, &req); err != nil {
		return err
	}
	if want := s.origin(r); !audMatches(req.Aud, want) {
		return errf(protocol.CodeUnauthorized, "aud %q is not this server's origin %q", req.Aud, want)
	}
	now := s.nowMs()
	if d := now - req.Ts; d > protocol.AuthSkewMs || d < -protocol.AuthSkewMs {
		return errf(protocol.CodeUnauthorized, "ts is %d ms from the server's clock; the limit is ±%d", d, protocol.AuthSkewMs)
	}
	for _, svc := range req.Services {
		if !slices.Contains(s.offered(), svc) {
			return errf(protocol.CodeUnsupported, "the %s service is not offered by this provider", svc)
		}
	}
	if slices.Contains(req.Services, protocol.ServiceFunctions) && req.Document == nil {
		return errf(protocol.CodeBadRequest, "document: the functions service needs the consented document (link and hash)")
	}
	dev, err := s.st.Device(r.Context(), req.DeviceID)
	if errors.Is(err, ErrNotFound) {
		return errf(protocol.CodeUnauthorized, "unknown device")
	} else if err != nil {
		return err
	}
	if err := protocol.VerifyAuthChallenge(dev.SignPub, &req); err != nil {
		return errf(protocol.CodeUnauthorized, "bad signature")
	}
	// Counted after the signature, so nobody else can use up a device's budget.
	if err := s.limit(w, s.tokens, dev.ID); err != nil {
		return err
	}
	// Remembered for 10 minutes: longer than any ts the ±5 min window still accepts.
	if err := s.st.UseNonce(r.Context(), dev.ID, req.Nonce, now+2*protocol.AuthSkewMs, now); err != nil {
		if errors.Is(err, ErrConflict) {
			return errf(protocol.CodeUnauthorized, "nonce already used")
		}
		return err
	}
	exp := now + protocol.TokenTTLms
	claims := tokenClaims{Sub: dev.ID, Plg: req.Plugin, Svc: protocol.NormalizeServices(req.Services), Exp: exp}
	if req.Document != nil && slices.Contains(claims.Svc, protocol.ServiceFunctions) {
		claims.Doc, claims.Hash = req.Document.Link, req.Document.Hash
	}
	tok := s.mintToken(claims)
	writeJSON(w, http.StatusOK, protocol.AuthTokenResponse{Token: tok, ExpiresAt: exp})
	return nil
}

// audMatches reports whether a signed aud names this server, whose origin is want. Besides want
// itself, a loopback origin (http://127.0.0.1:8787, the default of `harness cloud serve`) also
// accepts the other loopback spellings of the same scheme and port — localhost, any 127/8
// address, [::1] — since they name the same machine: the seed's own Base URL is
// http://localhost:8787. A token request signed for another machine is still refused.
func audMatches(aud, want string) bool {
	if aud == want {
		return true
	}
	if want == "" {
		return false
	}
	a, errA := url.Parse(aud)
	w, errW := url.Parse(want)
	if errA != nil || errW != nil || a.Scheme != w.Scheme || a.Port() != w.Port() || a.Port() == "" {
		return false
	}
	return isLoopbackHost(a.Hostname()) && isLoopbackHost(w.Hostname())
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// deleteDevice answers DELETE /v1/devices/me: every record of the device goes, its open
// channels close with reason "revoked".
func (s *Server) deleteDevice(w http.ResponseWriter, r *http.Request) error {
	c, err := s.pluginToken(w, r, "", false)
	if err != nil {
		return err
	}
	chans, err := s.st.DeleteDevice(r.Context(), c.Sub)
	if errors.Is(err, ErrNotFound) {
		return errf(protocol.CodeUnauthorized, "the device of this token is deleted")
	} else if err != nil {
		return fmt.Errorf("delete device: %w", err)
	}
	for _, id := range chans {
		s.hub.dropRoom(id, protocol.ReasonRevoked)
	}
	s.log.Info("device deleted", "device", c.Sub, "channels", len(chans))
	writeJSON(w, http.StatusOK, okBody)
	return nil
}
