package cloud

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
)

// Store is a plugin's Cloud key-value store (seed 003 "插件指南" §4), end-to-end encrypted
// when the manifest says `e2e: true`. Reads that cannot reach the provider are answered from
// the host's local mirror (Item.Mirror); writes offline fail with CodeOffline and are never
// queued.
type Store struct{ p *Plugin }

// Store returns the plugin's store.
func (p *Plugin) Store() *Store { return &Store{p: p} }

// E2E reports whether the store seals values on this device before they leave it.
func (s *Store) E2E() bool { return s.p.decl.E2E }

// Item is a stored value. Mirror is true when the provider could not be reached and the value
// is the host's local copy as of MirroredAt.
type Item struct {
	Key        string          `json:"key"`
	Value      json.RawMessage `json:"value"`
	Version    int64           `json:"version"`
	UpdatedAt  time.Time       `json:"updatedAt"`
	ExpiresAt  time.Time       `json:"expiresAt,omitzero"`
	Mirror     bool            `json:"mirror,omitempty"`
	MirroredAt time.Time       `json:"mirroredAt,omitzero"`
}

// RequestTimeout bounds one store request or function call (the token it may mint included):
// a provider that does not answer within it counts as offline, so a write on a network that
// drops packets fails with CodeOffline instead of hanging.
const RequestTimeout = 15 * time.Second

// requestTimeout is RequestTimeout, shorter in tests.
var requestTimeout = RequestTimeout

// PutOptions are Put's options: IfVersion (nil unconditional, 0 create only, n only over
// version n: a mismatch is CodeProtocol with wire code conflict), TTL (0 none). Plaintext asks
// to store the value unencrypted; a plugin declaring `e2e: true` is refused with
// CodeE2ERequired.
type PutOptions struct {
	IfVersion *int64
	TTL       time.Duration
	Plaintext bool
}

func (s *Store) scope(ctx context.Context) (*client.Store, error) {
	cp, err := s.p.gate(ctx, protocol.ServiceStore)
	if err != nil {
		return nil, err
	}
	return cp.Store(s.p.decl.E2E), nil
}

// Get reads key; nil, nil when it does not exist. Offline, it answers from the mirror (nil
// when the mirror has no live copy either).
func (s *Store) Get(ctx context.Context, key string) (*Item, error) {
	cs, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	it, err := cs.Get(rctx, key)
	if err != nil {
		err = s.p.m.wrap(ctx, s.p.decl.Plugin, err)
		if IsCode(err, CodeOffline) {
			return s.p.m.mirrored(ctx, s.p.decl.Plugin, key)
		}
		return nil, err
	}
	s.p.m.observe(true)
	if it == nil {
		return nil, s.p.m.unmirror(ctx, s.p.decl.Plugin, key)
	}
	out := &Item{Key: it.Key, Value: it.Value, Version: it.Version, UpdatedAt: it.UpdatedAt, ExpiresAt: it.ExpiresAt}
	return out, s.p.m.mirror(ctx, s.p.decl.Plugin, out)
}

// GetJSON reads key into v; version is 0 when it does not exist.
func (s *Store) GetJSON(ctx context.Context, key string, v any) (int64, error) {
	it, err := s.Get(ctx, key)
	if err != nil || it == nil {
		return 0, err
	}
	return it.Version, json.Unmarshal(it.Value, v)
}

// Put stores value (any JSON-able value) under key and returns its new version.
func (s *Store) Put(ctx context.Context, key string, value any, opts PutOptions) (int64, error) {
	id := s.p.decl.Plugin
	if opts.Plaintext && s.p.decl.E2E {
		return 0, errf(id, CodeE2ERequired, "the manifest says e2e: true, so the host refuses to store %q in plaintext", key)
	}
	cs, err := s.scope(ctx)
	if err != nil {
		return 0, err
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return 0, fmt.Errorf("cloud: %s: store %q: %w", id, key, err)
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	v, err := cs.Put(rctx, key, json.RawMessage(raw), client.PutOptions{IfVersion: opts.IfVersion, TTL: opts.TTL})
	if err = s.p.m.wrap(ctx, id, err); err != nil {
		return 0, err
	}
	now := s.p.m.clock()
	it := &Item{Key: key, Value: raw, Version: v, UpdatedAt: now}
	if opts.TTL > 0 {
		it.ExpiresAt = now.Add(opts.TTL)
	}
	return v, s.p.m.mirror(ctx, id, it)
}

// Delete removes key (also from the mirror).
func (s *Store) Delete(ctx context.Context, key string) error {
	cs, err := s.scope(ctx)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := s.p.m.wrap(ctx, s.p.decl.Plugin, cs.Delete(rctx, key)); err != nil && !isWire(err, protocol.CodeNotFound) {
		return err
	}
	return s.p.m.unmirror(ctx, s.p.decl.Plugin, key)
}

// List returns the keys under prefix; offline, the mirror's.
func (s *Store) List(ctx context.Context, prefix string) ([]client.ListItem, error) {
	cs, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	items, err := cs.List(rctx, prefix)
	if err = s.p.m.wrap(ctx, s.p.decl.Plugin, err); IsCode(err, CodeOffline) {
		return s.p.m.mirrorList(ctx, s.p.decl.Plugin, prefix)
	}
	return items, err
}

func isWire(err error, c protocol.ErrorCode) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeProtocol && e.Wire == c
}

func (m *Manager) clock() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now()
}

func mirrorLabel(plugin, key string) string { return "cloud_mirror/" + plugin + "/" + key }

// mirror keeps it as the plugin's local copy of its key, sealed with the vault (an end-to-end
// value stays unreadable on disk too).
func (m *Manager) mirror(ctx context.Context, plugin string, it *Item) error {
	box, err := m.vault()
	if err != nil {
		return err
	}
	b, _ := json.Marshal(it)
	var exp int64
	if !it.ExpiresAt.IsZero() {
		exp = it.ExpiresAt.UnixMilli()
	}
	_, err = m.db.SQL.ExecContext(ctx, `INSERT INTO cloud_mirror (plugin, k, sealed, size, version, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (plugin, k) DO UPDATE SET sealed = excluded.sealed, size = excluded.size, version = excluded.version, updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
		plugin, it.Key, box.Seal(mirrorLabel(plugin, it.Key), b), len(it.Value), it.Version, m.clock().UnixMilli(), exp)
	if err != nil {
		return fmt.Errorf("cloud: mirror: %w", err)
	}
	return nil
}

func (m *Manager) unmirror(ctx context.Context, plugin, key string) error {
	if _, err := m.db.SQL.ExecContext(ctx, `DELETE FROM cloud_mirror WHERE plugin = ? AND k = ?`, plugin, key); err != nil {
		return fmt.Errorf("cloud: mirror: %w", err)
	}
	return nil
}

// mirrored is the live local copy of key, nil when there is none.
func (m *Manager) mirrored(ctx context.Context, plugin, key string) (*Item, error) {
	var sealed []byte
	var at, exp int64
	err := m.db.SQL.QueryRowContext(ctx, `SELECT sealed, updated_at, expires_at FROM cloud_mirror WHERE plugin = ? AND k = ?`, plugin, key).Scan(&sealed, &at, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cloud: mirror: %w", err)
	}
	if exp != 0 && m.clock().UnixMilli() >= exp {
		return nil, nil
	}
	box, err := m.vault()
	if err != nil {
		return nil, err
	}
	b, err := box.Open(mirrorLabel(plugin, key), sealed)
	if err != nil {
		return nil, err
	}
	var it Item
	if err := json.Unmarshal(b, &it); err != nil {
		return nil, fmt.Errorf("cloud: mirror of %s/%s: %w", plugin, key, err)
	}
	it.Mirror, it.MirroredAt = true, time.UnixMilli(at).UTC()
	return &it, nil
}

func (m *Manager) mirrorList(ctx context.Context, plugin, prefix string) ([]client.ListItem, error) {
	rows, err := m.db.SQL.QueryContext(ctx, `SELECT k, version, updated_at, expires_at FROM cloud_mirror WHERE plugin = ? ORDER BY k`, plugin)
	if err != nil {
		return nil, fmt.Errorf("cloud: mirror: %w", err)
	}
	defer rows.Close()
	now := m.clock().UnixMilli()
	out := []client.ListItem{}
	for rows.Next() {
		var k string
		var v, at, exp int64
		if err := rows.Scan(&k, &v, &at, &exp); err != nil {
			return nil, err
		}
		if strings.HasPrefix(k, prefix) && (exp == 0 || now < exp) {
			out = append(out, client.ListItem{Key: k, Version: v, UpdatedAt: time.UnixMilli(at).UTC()})
		}
	}
	return out, rows.Err()
}

// Usage is a plugin's quota used (seed 003 "插件指南" §2, the consent panel's 配额用量) against
// the provider's per-plugin limits (0 when unknown). The protocol has no usage figure: GET
// /v1/store lists keys with their version and time but no sizes, and /v1/devices/me has only
// DELETE. So Keys is counted on the provider (every page of GET /v1/store) when the plugin
// uses the store, is allowed and the provider answers (KeysFrom "provider"), else it is what
// this device's mirror holds (KeysFrom "mirror"); Bytes is always the mirror's sum of
// key + value sizes (BytesFrom "mirror"): an estimate that misses values this device never
// read or wrote and counts plaintext where the provider holds envelopes.
type Usage struct {
	Keys      int64  `json:"keys"`
	Bytes     int64  `json:"bytes"`
	MaxKeys   int64  `json:"maxKeys"`
	MaxBytes  int64  `json:"maxBytes"`
	Channels  int    `json:"channels"`  // channels this device keeps open for the plugin
	KeysFrom  string `json:"keysFrom"`  // FromProvider or FromMirror
	BytesFrom string `json:"bytesFrom"` // always FromMirror: the protocol reports no sizes
}

// Where a Usage figure comes from.
const (
	FromProvider = "provider" // counted on the provider: exact
	FromMirror   = "mirror"   // what this device's mirror holds: an estimate
)

// Usage reports plugin's quota used as this device's mirror holds it (KeysFrom and BytesFrom
// "mirror"); UsageOf counts the keys on the provider.
func (m *Manager) Usage(ctx context.Context, plugin string) (Usage, error) {
	u := Usage{KeysFrom: FromMirror, BytesFrom: FromMirror}
	if err := m.db.SQL.QueryRowContext(ctx, `SELECT count(*), COALESCE(sum(size), 0) FROM cloud_mirror WHERE plugin = ?`, plugin).Scan(&u.Keys, &u.Bytes); err != nil {
		return u, fmt.Errorf("cloud: mirror: %w", err)
	}
	if meta, _ := m.KnownMeta(ctx); meta != nil {
		u.MaxKeys, u.MaxBytes = meta.Limits.Store.MaxKeys, meta.Limits.Store.MaxBytes
		ids, err := m.channelIDs(ctx, meta.Origin, plugin)
		if err != nil {
			return u, err
		}
		u.Channels = len(ids)
	}
	return u, nil
}

// UsageOf is Usage with the keys counted on the provider (KeysFrom "provider") when d uses the
// store, the person allowed it and the provider answers; when listing fails (offline, refused)
// the figure stays the mirror's, labelled so.
func (m *Manager) UsageOf(ctx context.Context, d *Decl) (Usage, error) {
	u, err := m.Usage(ctx, d.Plugin)
	if err != nil || !slices.Contains(d.Uses, "store") {
		return u, err
	}
	h, err := m.Plugin(d)
	if err != nil {
		return u, nil
	}
	cs, err := h.Store().scope(ctx)
	if err != nil {
		return u, nil
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	items, err := cs.List(rctx, "")
	if err != nil {
		return u, nil
	}
	u.Keys, u.KeysFrom = int64(len(items)), FromProvider
	return u, nil
}
