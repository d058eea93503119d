package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// maxResponseBytes caps every JSON response body read: a store value is at most 64 KB, a list
// page and the meta document are far smaller.
const maxResponseBytes = 1 << 20

// Config configures a Client.
type Config struct {
	// BaseURL is the provider, "https://host[:port]" or "http://127.0.0.1:8787"; any path is
	// dropped (the protocol lives at /v1 of the origin).
	BaseURL string
	// HTTPClient makes every request and WebSocket dial. Nil means a client with no Timeout:
	// deadlines come from the contexts callers pass, which is what streams need.
	HTTPClient *http.Client
	// Identities persists the device identity. Nil keeps it in memory only (a new device per
	// Client).
	Identities IdentityStore
	// Now is the clock used for auth timestamps and token expiry; nil means time.Now.
	Now func() time.Time
	// Backoff paces channel reconnects; the zero value means DefaultBackoff.
	Backoff Backoff
}

// Client is one device's connection to one provider. It is safe for concurrent use.
type Client struct {
	origin  string
	hc      *http.Client
	ids     IdentityStore
	now     func() time.Time
	backoff Backoff

	mu  sync.Mutex
	dev *Identity // registered identity, once known

	skewMs atomic.Int64 // server clock − local clock, learned from a refused auth
}

// serverNow is the local clock corrected by the skew learned from the server, the clock auth
// timestamps and token expiry are measured on.
func (c *Client) serverNow() time.Time {
	return c.now().Add(time.Duration(c.skewMs.Load()) * time.Millisecond)
}

// New checks cfg and returns a Client. It does no I/O: the device registers on first use
// (Device).
func New(cfg Config) (*Client, error) {
	origin, err := protocol.Origin(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("cloud client: BaseURL: %w", err)
	}
	c := &Client{origin: origin, hc: cfg.HTTPClient, ids: cfg.Identities, now: cfg.Now, backoff: cfg.Backoff}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	if c.hc.Timeout != 0 {
		return nil, errors.New("cloud client: HTTPClient.Timeout must be 0; pass deadlines in contexts (streams would be cut)")
	}
	if c.ids == nil {
		c.ids = &MemIdentityStore{}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.backoff == (Backoff{}) {
		c.backoff = DefaultBackoff
	}
	return c, nil
}

// Origin is the provider origin, the `aud` of every auth challenge.
func (c *Client) Origin() string { return c.origin }

// Meta reads GET /v1/meta: protocol version, services, limits and the proof-of-work parameters.
func (c *Client) Meta(ctx context.Context) (*protocol.MetaResponse, error) {
	var m protocol.MetaResponse
	if _, err := doJSON(ctx, c.hc, c.origin, http.MethodGet, "/v1/meta", "", nil, nil, &m); err != nil {
		return nil, err
	}
	if m.Protocol != protocol.ProtocolVersion {
		return nil, fmt.Errorf("cloud client: GET /v1/meta: protocol %d, this client speaks %d", m.Protocol, protocol.ProtocolVersion)
	}
	return &m, nil
}

// IsCode reports whether err is (or wraps) a *protocol.Error with the given wire code.
func IsCode(err error, code protocol.ErrorCode) bool {
	var pe *protocol.Error
	return errors.As(err, &pe) && pe.Code == code
}

// doJSON sends one request to origin+path and decodes a 2xx JSON answer into out (nil to
// discard). body, when not nil, is marshalled as JSON; token, when set, is sent as a bearer
// token. A non-2xx answer becomes a *protocol.Error (from the ErrorBody when there is one, with
// Retry-After honoured). Every error names the method and path, never the token.
func doJSON(ctx context.Context, hc *http.Client, origin, method, path, token string, header http.Header, body, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("cloud client: %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, origin+path, rd)
	if err != nil {
		return nil, fmt.Errorf("cloud client: %s %s: %w", method, path, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cloud client: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cloud client: %s %s: reading the answer: %w", method, path, err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("cloud client: %s %s: answer larger than %d bytes", method, path, maxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.Header, fmt.Errorf("cloud client: %s %s: %w", method, path, wireError(resp, data))
	}
	if out == nil {
		return resp.Header, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.Header, fmt.Errorf("cloud client: %s %s: bad answer: %w", method, path, err)
	}
	if v, ok := out.(protocol.Validatable); ok {
		if err := v.Validate(); err != nil {
			return resp.Header, fmt.Errorf("cloud client: %s %s: bad answer: %w", method, path, err)
		}
	}
	return resp.Header, nil
}

// wireError turns a non-2xx answer into a *protocol.Error. A body that is not an ErrorBody
// (a proxy's HTML page) keeps the status and a code guessed from it.
func wireError(resp *http.Response, data []byte) *protocol.Error {
	var body protocol.ErrorBody
	e := &protocol.Error{Status: resp.StatusCode}
	if json.Unmarshal(data, &body) == nil && body.Validate() == nil {
		e.Code, e.Message = body.Error.Code, body.Error.Message
		if body.Error.RetryAfterS != nil {
			e.RetryAfterS = *body.Error.RetryAfterS
		}
	} else {
		e.Code = codeForStatus(resp.StatusCode)
		e.Message = strings.TrimSpace(http.StatusText(resp.StatusCode))
	}
	if e.RetryAfterS == 0 {
		if s, err := strconv.ParseInt(resp.Header.Get("Retry-After"), 10, 64); err == nil && s > 0 {
			e.RetryAfterS = s
		}
	}
	return e
}

func codeForStatus(status int) protocol.ErrorCode {
	for _, c := range []protocol.ErrorCode{protocol.CodeBadRequest, protocol.CodeUnauthorized, protocol.CodeForbidden,
		protocol.CodeNotFound, protocol.CodeConflict, protocol.CodeGone, protocol.CodePayloadTooLarge,
		protocol.CodeRateLimited, protocol.CodeUnsupported} {
		if c.HTTPStatus() == status {
			return c
		}
	}
	return protocol.CodeServer
}
