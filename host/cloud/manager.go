package cloud

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/host/vault"
)

func init() {
	store.Register(store.Migration{Version: 500, Name: "cloud: provider setting, sealed secrets, consent, store mirror", SQL: `
CREATE TABLE cloud_settings (
	k TEXT PRIMARY KEY,
	v TEXT NOT NULL
);
CREATE TABLE cloud_secrets (
	name TEXT PRIMARY KEY,
	sealed BLOB NOT NULL
);
CREATE TABLE cloud_consent (
	plugin TEXT PRIMARY KEY,
	provider TEXT NOT NULL,
	at INTEGER NOT NULL,
	disclosure TEXT NOT NULL,
	e2e INTEGER NOT NULL,
	uses TEXT NOT NULL
);
CREATE TABLE cloud_mirror (
	plugin TEXT NOT NULL,
	k TEXT NOT NULL,
	sealed BLOB NOT NULL,
	size INTEGER NOT NULL,
	version INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (plugin, k)
);
`})
	store.Register(store.Migration{Version: 501, Name: "cloud: the document version a consent covers", SQL: `
ALTER TABLE cloud_consent ADD COLUMN document TEXT NOT NULL DEFAULT '';
`})
	store.Register(store.Migration{Version: 502, Name: "cloud: the server functions a consent covers", SQL: `
ALTER TABLE cloud_consent ADD COLUMN functions TEXT NOT NULL DEFAULT '[]';
`})
}

// OfficialURL is the official provider's origin. The official instance is not deployed yet
// (seed 003 "PKU harness Cloud"), so it is empty and every provider set is "custom".
const OfficialURL = ""

// probeEvery is how long a reachability observation stands before Status probes again.
const probeEvery = 15 * time.Second

// checkTimeout bounds the GET /v1/meta of Check and of a status probe.
const checkTimeout = 10 * time.Second

// Manager is the Cloud connection of one host database: the provider setting, the device
// identity, consents and mirrors. It is safe for concurrent use; For returns the one of a
// database.
type Manager struct {
	db  *store.DB
	now func() time.Time
	hc  *http.Client

	mu       sync.Mutex
	base     string // the provider origin in use ("" off), as last read from the database
	cl       *client.Client
	plugins  map[string]*client.Plugin // plugin id + services → scope, for base
	meta     *protocol.MetaResponse    // last meta of base
	online   bool
	seen     time.Time // when online was last observed
	box      *vault.Box
	boxErr   error
	channels map[string]openChannel // channels this process has open, by id
}

var (
	forMu sync.Mutex
	forDB = map[*store.DB]*Manager{}
)

// For returns the Manager of db, making it on first use.
func For(db *store.DB) *Manager {
	forMu.Lock()
	defer forMu.Unlock()
	if m, ok := forDB[db]; ok {
		return m
	}
	m := &Manager{db: db, now: time.Now, hc: &http.Client{}, plugins: map[string]*client.Plugin{}, channels: map[string]openChannel{}}
	forDB[db] = m
	return m
}

// Release forgets the Manager of db (call it when the database closes); open channels are
// disconnected.
func Release(db *store.DB) {
	forMu.Lock()
	m := forDB[db]
	delete(forDB, db)
	forMu.Unlock()
	if m != nil {
		m.mu.Lock()
		for _, o := range m.channels {
			o.ch.Disconnect()
		}
		m.channels = map[string]openChannel{}
		m.mu.Unlock()
	}
}

// SetClock sets the clock consents and mirrors are stamped with (tests); nil is time.Now.
func (m *Manager) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	m.mu.Lock()
	m.now = now
	m.cl, m.plugins = nil, map[string]*client.Plugin{}
	m.mu.Unlock()
}

func (m *Manager) vault() (*vault.Box, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.box == nil && m.boxErr == nil {
		m.box, m.boxErr = vault.Open(m.db.Dir(), vault.DefaultKeyring())
	}
	return m.box, m.boxErr
}

// Provider is the provider origin set ("" when Cloud is off).
func (m *Manager) Provider(ctx context.Context) (string, error) {
	v, err := m.setting(ctx, "provider")
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	if v != m.base {
		m.base, m.cl, m.plugins, m.meta, m.seen = v, nil, map[string]*client.Plugin{}, nil, time.Time{}
	}
	m.mu.Unlock()
	return v, nil
}

func (m *Manager) setting(ctx context.Context, k string) (string, error) {
	var v string
	err := m.db.SQL.QueryRowContext(ctx, `SELECT v FROM cloud_settings WHERE k = ?`, k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cloud: settings: %w", err)
	}
	return v, nil
}

// Meta is what "test connection" reports of a provider (GET /v1/meta).
type Meta struct {
	Origin    string                  `json:"origin"`   // the provider origin checked
	Host      string                  `json:"host"`     // its host[:port], what consent panels show
	Protocol  int                     `json:"protocol"` // 1
	Services  []string                `json:"services"` // the services it offers
	Limits    protocol.Limits         `json:"limits"`
	Operator  protocol.Operator       `json:"operator"`
	Functions []protocol.MetaFunction `json:"functions"`
}

// URLError is a provider URL that is not usable: Why says what is wrong with it.
type URLError struct{ URL, Why string }

// Error is "cloud: provider URL "…": why".
func (e *URLError) Error() string {
	if e.URL == "" {
		return "cloud: provider URL: " + e.Why
	}
	return fmt.Sprintf("cloud: provider URL %q: %s", e.URL, e.Why)
}

// CheckError is a provider that did not pass "test connection": unreachable, not protocol 1,
// or an invalid meta document.
type CheckError struct {
	Origin string
	Err    error
}

// Error is "cloud: ORIGIN: GET /v1/meta: why".
func (e *CheckError) Error() string {
	return fmt.Sprintf("cloud: %s: GET /v1/meta: %v", e.Origin, e.Err)
}

// Unwrap returns the cause.
func (e *CheckError) Unwrap() error { return e.Err }

// NormalizeURL checks a provider URL as `harness cloud use` takes it: https, or http to a
// loopback address (a reference server on this machine); it returns the origin. Errors are
// *URLError.
func NormalizeURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", &URLError{Why: "empty"}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", &URLError{raw, "not an absolute URL (https://host)"}
	}
	switch u.Scheme {
	case "https":
	case "http":
		h := u.Hostname()
		if h != "localhost" && h != "127.0.0.1" && h != "::1" {
			return "", &URLError{raw, "plain http only to localhost; use https"}
		}
	default:
		return "", &URLError{raw, fmt.Sprintf("scheme %q; use https", u.Scheme)}
	}
	if u.User != nil {
		return "", &URLError{raw, "no user name or password in the URL"}
	}
	o, err := protocol.Origin(raw)
	if err != nil {
		return "", &URLError{raw, err.Error()}
	}
	return o, nil
}

// Check is "test connection": it reads GET /v1/meta of the provider at raw (within 10 s) and
// reports its protocol, services and limits, or an error saying why it is not a usable
// provider: a *URLError for the URL, a *CheckError when it does not answer as a provider.
func (m *Manager) Check(ctx context.Context, raw string) (*Meta, error) {
	origin, err := NormalizeURL(raw)
	if err != nil {
		return nil, err
	}
	c, err := client.New(client.Config{BaseURL: origin, HTTPClient: m.hc})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	meta, err := c.Meta(ctx)
	if err != nil {
		return nil, &CheckError{origin, err}
	}
	if err := meta.Validate(); err != nil {
		return nil, &CheckError{origin, fmt.Errorf("not a valid meta document: %w", err)}
	}
	return metaOf(origin, meta), nil
}

func metaOf(origin string, meta *protocol.MetaResponse) *Meta {
	return &Meta{Origin: origin, Host: hostOf(origin), Protocol: meta.Protocol, Services: nonNil(meta.Services),
		Limits: meta.Limits, Operator: meta.Operator, Functions: nonNilF(meta.Functions)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilF(s []protocol.MetaFunction) []protocol.MetaFunction {
	if s == nil {
		return []protocol.MetaFunction{}
	}
	return s
}

func hostOf(origin string) string {
	if u, err := url.Parse(origin); err == nil {
		return u.Host
	}
	return origin
}

// Use sets the provider: raw is checked first (Check) and kept only when it answers; "off"
// (or "") turns Cloud off. Consents stay recorded but name the host they were given for, so
// they count again only if the same provider is set again. Turning Cloud off or changing
// provider ends what the consents allowed, in the same transaction as the setting: every
// saved channel has its keys forgotten and is recorded as closing, and every consent gets a
// new id, so a channel open in another process (a running `harness serve`) is not resumed or
// saved again under it. The channels are then closed on the old provider (ClosePending); a
// close it does not confirm stays pending and is not an error.
func (m *Manager) Use(ctx context.Context, raw string) (*Meta, error) {
	before, err := m.Provider(ctx)
	if err != nil {
		return nil, err
	}
	var meta *Meta
	settings := map[string]string{}
	if s := strings.TrimSpace(raw); s != "" && s != "off" {
		if meta, err = m.Check(ctx, raw); err != nil {
			return nil, err
		}
		mb, _ := json.Marshal(meta)
		settings = map[string]string{"provider": meta.Origin, "meta": string(mb)}
	}
	changed := meta == nil || before != meta.Origin
	err = m.db.Tx(ctx, func(tx *sql.Tx) error {
		if meta == nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM cloud_settings WHERE k IN ('provider', 'meta')`); err != nil {
				return err
			}
		}
		for k, v := range settings {
			if _, err := tx.ExecContext(ctx, `INSERT INTO cloud_settings (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`, k, v); err != nil {
				return err
			}
		}
		if !changed {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cloud_consent SET id = lower(hex(randomblob(16)))`); err != nil {
			return err
		}
		return m.retireTx(ctx, tx, func(_, _, _ string) bool { return true })
	})
	if err != nil {
		return nil, fmt.Errorf("cloud: settings: %w", err)
	}
	if changed {
		if err := m.retireOpen(ctx, m.takeChannels("")); err != nil {
			return nil, err
		}
	}
	if _, err := m.Provider(ctx); err != nil {
		return nil, err
	}
	if meta != nil {
		m.observe(true)
	}
	if changed {
		if _, err := m.ClosePending(ctx, ""); err != nil {
			return nil, err
		}
	}
	return meta, nil
}

// KnownMeta is the provider's meta as last read (at Use or a later probe), nil when off or
// never read.
func (m *Manager) KnownMeta(ctx context.Context) (*Meta, error) {
	base, err := m.Provider(ctx)
	if err != nil || base == "" {
		return nil, err
	}
	v, err := m.setting(ctx, "meta")
	if err != nil || v == "" {
		return nil, err
	}
	var meta Meta
	if err := json.Unmarshal([]byte(v), &meta); err != nil || meta.Origin != base {
		return nil, nil
	}
	return &meta, nil
}

func (m *Manager) observe(online bool) {
	m.mu.Lock()
	m.online, m.seen = online, m.now()
	m.mu.Unlock()
}

// lastOnline is the provider's reachability as last observed, without a probe.
func (m *Manager) lastOnline() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.online && !m.seen.IsZero()
}

// Online reports whether the provider answered lately, probing GET /v1/meta when the last
// observation is older than 15 s (a fresh meta is kept). It is false when Cloud is off.
func (m *Manager) Online(ctx context.Context) bool {
	base, err := m.Provider(ctx)
	if err != nil || base == "" {
		return false
	}
	m.mu.Lock()
	fresh := !m.seen.IsZero() && m.now().Sub(m.seen) < probeEvery
	online := m.online
	m.mu.Unlock()
	if fresh {
		return online
	}
	meta, err := m.Check(ctx, base)
	if err != nil {
		m.observe(false)
		return false
	}
	if mb, err := json.Marshal(meta); err == nil {
		_, _ = m.db.SQL.ExecContext(ctx, `INSERT INTO cloud_settings (k, v) VALUES ('meta', ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`, string(mb))
	}
	m.observe(true)
	return true
}

// client returns the Client of the current provider, nil when Cloud is off.
func (m *Manager) client(ctx context.Context) (*client.Client, string, error) {
	base, err := m.Provider(ctx)
	if err != nil || base == "" {
		return nil, base, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cl == nil {
		c, err := client.New(client.Config{BaseURL: base, HTTPClient: m.hc, Identities: &vaultIdentities{m: m, origin: base}, Now: m.now})
		if err != nil {
			return nil, base, err
		}
		m.cl = c
	}
	return m.cl, base, nil
}

// scope returns the client.Plugin of plugin id with services (sorted, deduplicated).
func (m *Manager) scope(ctx context.Context, id string, services []string, doc *protocol.DocumentRef) (*client.Plugin, error) {
	c, _, err := m.client(ctx)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errf(id, CodeUnavailable, "no Cloud provider is set (Settings → Cloud, or `harness cloud use URL`)")
	}
	services = protocol.NormalizeServices(services)
	k := id + "\x00" + strings.Join(services, ",")
	if doc != nil {
		k += "\x00" + doc.Link + "\x00" + doc.Hash
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.plugins[k]; ok {
		return p, nil
	}
	p, err := c.Plugin(id, services...)
	if err != nil {
		return nil, err
	}
	if doc != nil && slices.Contains(services, protocol.ServiceFunctions) {
		if err := p.SetDocument(*doc); err != nil {
			return nil, err
		}
	}
	m.plugins[k] = p
	return p, nil
}

// wrap turns a client error into an *Error: a transport failure is CodeOffline (and marks
// the provider offline), a provider's error CodeProtocol with its wire code.
func (m *Manager) wrap(ctx context.Context, plugin string, err error) error {
	if err == nil {
		m.observe(true)
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		m.observe(true)
		return &Error{Code: CodeProtocol, Plugin: plugin, Wire: pe.Code, Err: err}
	}
	if ctx.Err() != nil {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		m.observe(false)
		return &Error{Code: CodeOffline, Plugin: plugin, Msg: "the Cloud provider cannot be reached; nothing was queued", Err: err}
	}
	return err
}

// servicesOffered reports the services of uses the provider does not offer, from the known
// meta; ok is false when no meta is known yet.
func missing(meta *Meta, uses []string) []string {
	var out []string
	for _, u := range uses {
		s := wireService(u)
		if !slices.Contains(meta.Services, s) {
			out = append(out, u)
		}
	}
	return out
}

// wireService maps a manifest service name to the protocol's: mailbox is part of channels.
func wireService(s string) string {
	if s == "mailbox" {
		return protocol.ServiceChannels
	}
	return s
}
