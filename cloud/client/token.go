package client

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// refreshBefore is how long before its expiry a token is replaced, so a request never leaves
// with a token that dies in flight.
const refreshBefore = time.Minute

// Plugin is a Client scoped to one plugin and a set of services: the host gives each plugin its
// own (seed 003 “设计原则”: separate tokens, storage and consent per plugin). Its tokens are
// bound to device, plugin and services (POST /v1/auth/token) and live 10 minutes.
type Plugin struct {
	c        *Client
	id       string
	services []string
	doc      *protocol.DocumentRef // the consented document, sent with the functions service

	mu      sync.Mutex
	token   string
	expires time.Time
	minting chan struct{} // closed when the mint in flight ends
	mintErr error
	minted  int // tokens minted, for tests and the bench
}

// Plugin returns the scope for plugin id (a PluginId) and services (CloudService names, at
// least one). It does no I/O.
func (c *Client) Plugin(id string, services ...string) (*Plugin, error) {
	if !protocol.ValidPluginID(id) {
		return nil, fmt.Errorf("cloud client: plugin %q: not a PluginId (^[a-z0-9][a-z0-9-]{1,63}$)", id)
	}
	if len(services) == 0 {
		return nil, fmt.Errorf("cloud client: plugin %s: no services", id)
	}
	for _, s := range services {
		if !protocol.ValidService(s) {
			return nil, fmt.Errorf("cloud client: plugin %s: unknown service %q", id, s)
		}
	}
	return &Plugin{c: c, id: id, services: protocol.NormalizeServices(services)}, nil
}

// ID is the plugin id.
func (p *Plugin) ID() string { return p.id }

// Client is the Client this Plugin scopes.
func (p *Plugin) Client() *Client { return p.c }

// Minted is how many tokens this Plugin has minted so far.
func (p *Plugin) Minted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.minted
}

// Token returns a bearer token with at least a minute left, minting one when needed. Concurrent
// callers share one mint.
func (p *Plugin) Token(ctx context.Context) (string, error) {
	for {
		p.mu.Lock()
		if p.token != "" && p.c.serverNow().Add(refreshBefore).Before(p.expires) {
			t := p.token
			p.mu.Unlock()
			return t, nil
		}
		if wait := p.minting; wait != nil {
			p.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			p.mu.Lock()
			err := p.mintErr
			p.mu.Unlock()
			if err != nil {
				return "", err
			}
			continue
		}
		done := make(chan struct{})
		p.minting = done
		p.mu.Unlock()

		tok, exp, err := p.mint(ctx)

		p.mu.Lock()
		p.minting, p.mintErr = nil, err
		if err == nil {
			p.token, p.expires = tok, exp
			p.minted++
		}
		p.mu.Unlock()
		close(done)
		if err != nil {
			return "", err
		}
		return tok, nil
	}
}

// invalidate drops tok if it is still the cached token (the server refused it).
func (p *Plugin) invalidate(tok string) {
	p.mu.Lock()
	if p.token == tok {
		p.token = ""
	}
	p.mu.Unlock()
}

func (p *Plugin) mint(ctx context.Context) (string, time.Time, error) {
	dev, err := p.c.Device(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	for attempt := 0; ; attempt++ {
		var nonce [16]byte
		if _, err := rand.Read(nonce[:]); err != nil {
			return "", time.Time{}, fmt.Errorf("cloud client: auth nonce: %w", err)
		}
		req := protocol.AuthTokenRequest{
			Aud:      p.c.origin,
			DeviceID: dev.DeviceID,
			Plugin:   p.id,
			Services: p.services,
			Ts:       p.c.serverNow().UnixMilli(),
			Nonce:    protocol.B64.EncodeToString(nonce[:]),
		}
		p.mu.Lock()
		req.Document = p.doc
		p.mu.Unlock()
		protocol.SignAuthChallenge(dev.Sign, &req)
		var resp protocol.AuthTokenResponse
		h, err := doJSON(ctx, p.c.hc, p.c.origin, http.MethodPost, "/v1/auth/token", "", nil, &req, &resp)
		if err == nil {
			return resp.Token, time.UnixMilli(resp.ExpiresAt), nil
		}
		// A phone's clock may be minutes off; the server accepts ±5 min. When it refuses and its
		// Date header says the clocks differ by more than a minute, adopt its clock and retry once.
		if attempt == 0 && IsCode(err, protocol.CodeUnauthorized) && p.c.learnSkew(h) {
			continue
		}
		return "", time.Time{}, err
	}
}

// learnSkew sets the clock correction from a response's Date header when it differs from the
// current correction by more than a minute, and reports whether it did.
func (c *Client) learnSkew(h http.Header) bool {
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return false
	}
	skew := date.Sub(c.now()).Milliseconds()
	if d := skew - c.skewMs.Load(); d > -60_000 && d < 60_000 {
		return false
	}
	c.skewMs.Store(skew)
	return true
}

// do sends an authenticated request. A 401 means the token died early (server restart, clock
// skew): do drops it, mints a new one and sends the request once more — safe, since the server
// did nothing with a request it did not authenticate.
func (p *Plugin) do(ctx context.Context, method, path string, header http.Header, body, out any) error {
	_, err := p.doHeader(ctx, method, path, header, body, out)
	return err
}

func (p *Plugin) doHeader(ctx context.Context, method, path string, header http.Header, body, out any) (http.Header, error) {
	for attempt := 0; ; attempt++ {
		tok, err := p.Token(ctx)
		if err != nil {
			return nil, err
		}
		h, err := doJSON(ctx, p.c.hc, p.c.origin, method, path, tok, header, body, out)
		if attempt == 0 && IsCode(err, protocol.CodeUnauthorized) {
			p.invalidate(tok)
			continue
		}
		return h, err
	}
}

// DeleteDevice wipes every record of the device on the provider (DELETE /v1/devices/me; any
// plugin's token works) and forgets the identity locally; the next call registers anew.
func (p *Plugin) DeleteDevice(ctx context.Context) error {
	if err := p.do(ctx, http.MethodDelete, "/v1/devices/me", nil, nil, nil); err != nil {
		return err
	}
	p.mu.Lock()
	p.token = ""
	p.mu.Unlock()
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dev = nil
	return c.ids.Save(ctx, nil)
}
