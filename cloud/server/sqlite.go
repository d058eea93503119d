package server

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pkuinfo/harness/cloud/protocol"
	_ "modernc.org/sqlite" // the embedded SQLite driver, registered as "sqlite"
)

// schema is portable SQL (SQLite and PostgreSQL): TEXT, BIGINT, composite primary keys,
// ON CONFLICT upserts and RETURNING. Sizes are kept in columns so no length function (which
// counts characters in SQLite and bytes in PostgreSQL) is needed. The queries below use the
// same subset; a PostgreSQL backend needs only to number the `?` placeholders ($1, $2, …) and
// to map unique violations to ErrConflict, and must pass TestStorageConformance.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS devices (
		id TEXT PRIMARY KEY, sign_pub TEXT NOT NULL UNIQUE, box_pub TEXT NOT NULL, created_at BIGINT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS auth_nonces (
		device TEXT NOT NULL, nonce TEXT NOT NULL, until_ms BIGINT NOT NULL, PRIMARY KEY (device, nonce))`,
	`CREATE TABLE IF NOT EXISTS store_ns (
		device TEXT NOT NULL, plugin TEXT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (device, plugin))`,
	`CREATE TABLE IF NOT EXISTS store_values (
		device TEXT NOT NULL, plugin TEXT NOT NULL, k TEXT NOT NULL, v TEXT NOT NULL, size BIGINT NOT NULL,
		version BIGINT NOT NULL, updated_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
		PRIMARY KEY (device, plugin, k))`,
	`CREATE TABLE IF NOT EXISTS channels (
		id TEXT PRIMARY KEY, device TEXT NOT NULL, plugin TEXT NOT NULL, join_hash TEXT NOT NULL,
		chan_pub TEXT NOT NULL, meta TEXT NOT NULL, max_peers BIGINT NOT NULL, page TEXT NOT NULL,
		status TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS channels_device ON channels (device, status)`,
	`CREATE TABLE IF NOT EXISTS peers (
		channel TEXT NOT NULL, peer_id TEXT NOT NULL, pub TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
		joined_at BIGINT NOT NULL, PRIMARY KEY (channel, peer_id))`,
	`CREATE TABLE IF NOT EXISTS mailbox (
		channel TEXT NOT NULL, slot TEXT NOT NULL, env TEXT NOT NULL, expires_at BIGINT NOT NULL,
		PRIMARY KEY (channel, slot))`,
	`CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, v TEXT NOT NULL)`,
}

// SQLite is the embedded Storage: one database file (or ":memory:"), one connection, so that
// every conditional write is a serialised transaction.
type SQLite struct {
	db *sql.DB
}

// OpenSQLite opens (creating if needed) the database at path, or an in-memory database when
// path is ":memory:", and creates the schema.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	if path == ":memory:" {
		dsn = ":memory:"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	for _, s := range schema {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("sqlite %s: schema: %w", path, err)
		}
	}
	return &SQLite{db: db}, nil
}

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

func (s *SQLite) tx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unique")
}

// CreateDevice implements Storage.
func (s *SQLite) CreateDevice(ctx context.Context, d Device) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO devices (id, sign_pub, box_pub, created_at) VALUES (?, ?, ?, ?)`,
		d.ID, d.SignPub, d.BoxPub, d.CreatedAt)
	if isUnique(err) {
		return ErrConflict
	}
	return err
}

// Device implements Storage.
func (s *SQLite) Device(ctx context.Context, id string) (Device, error) {
	d := Device{ID: id}
	err := s.db.QueryRowContext(ctx, `SELECT sign_pub, box_pub, created_at FROM devices WHERE id = ?`, id).
		Scan(&d.SignPub, &d.BoxPub, &d.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	return d, err
}

// DeleteDevice implements Storage.
func (s *SQLite) DeleteDevice(ctx context.Context, id string) ([]string, error) {
	var chans []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM channels WHERE device = ? ORDER BY id`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return err
			}
			chans = append(chans, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range chans {
			for _, q := range []string{`DELETE FROM peers WHERE channel = ?`, `DELETE FROM mailbox WHERE channel = ?`} {
				if _, err := tx.ExecContext(ctx, q, c); err != nil {
					return err
				}
			}
		}
		for _, q := range []string{`DELETE FROM channels WHERE device = ?`, `DELETE FROM store_values WHERE device = ?`,
			`DELETE FROM store_ns WHERE device = ?`, `DELETE FROM auth_nonces WHERE device = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
	return chans, err
}

// UseNonce implements Storage.
func (s *SQLite) UseNonce(ctx context.Context, device, nonce string, until, now int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var u int64
		err := tx.QueryRowContext(ctx, `SELECT until_ms FROM auth_nonces WHERE device = ? AND nonce = ?`, device, nonce).Scan(&u)
		switch {
		case err == nil && u > now:
			return ErrConflict
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO auth_nonces (device, nonce, until_ms) VALUES (?, ?, ?)
			ON CONFLICT (device, nonce) DO UPDATE SET until_ms = excluded.until_ms`, device, nonce, until)
		return err
	})
}

// StoreList implements Storage.
func (s *SQLite) StoreList(ctx context.Context, ns Namespace, prefix, after string, limit int, now int64) ([]StoreItem, error) {
	// Prefix match by range, not LIKE: keys may contain '_' which LIKE treats as a wildcard.
	// Store keys are ASCII below '~', so prefix + "~" bounds every key with that prefix.
	lo := after
	if prefix > lo {
		lo = prefix
	}
	rows, err := s.db.QueryContext(ctx, `SELECT k, version, updated_at FROM store_values
		WHERE device = ? AND plugin = ? AND k >= ? AND k > ? AND k < ? AND (expires_at = 0 OR expires_at > ?)
		ORDER BY k LIMIT ?`, ns.Device, ns.Plugin, lo, after, prefix+"~", now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StoreItem
	for rows.Next() {
		var it StoreItem
		if err := rows.Scan(&it.Key, &it.Version, &it.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// StoreGet implements Storage.
func (s *SQLite) StoreGet(ctx context.Context, ns Namespace, key string, now int64) (StoreItem, error) {
	it := StoreItem{Key: key}
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT v, version, updated_at, expires_at FROM store_values
		WHERE device = ? AND plugin = ? AND k = ? AND (expires_at = 0 OR expires_at > ?)`,
		ns.Device, ns.Plugin, key, now).Scan(&v, &it.Version, &it.UpdatedAt, &it.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return it, ErrNotFound
	}
	it.Value = json.RawMessage(v)
	return it, err
}

// StorePut implements Storage.
func (s *SQLite) StorePut(ctx context.Context, ns Namespace, it StoreItem, ifMatch *int64, q protocol.StoreLimits, now int64) (int64, error) {
	var version int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var cur int64
		err := tx.QueryRowContext(ctx, `SELECT version FROM store_values
			WHERE device = ? AND plugin = ? AND k = ? AND (expires_at = 0 OR expires_at > ?)`,
			ns.Device, ns.Plugin, it.Key, now).Scan(&cur)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if ifMatch != nil && *ifMatch != cur {
			return ErrConflict
		}
		var n, bytes int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM store_values
			WHERE device = ? AND plugin = ? AND k <> ? AND (expires_at = 0 OR expires_at > ?)`,
			ns.Device, ns.Plugin, it.Key, now).Scan(&n, &bytes); err != nil {
			return err
		}
		size := int64(len(it.Key) + len(it.Value))
		if n+1 > q.MaxKeys {
			return &QuotaError{Limit: fmt.Sprintf("%d keys", q.MaxKeys)}
		}
		if bytes+size > q.MaxBytes {
			return &QuotaError{Limit: fmt.Sprintf("%d bytes", q.MaxBytes)}
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO store_ns (device, plugin, seq) VALUES (?, ?, 1)
			ON CONFLICT (device, plugin) DO UPDATE SET seq = store_ns.seq + 1 RETURNING seq`,
			ns.Device, ns.Plugin).Scan(&version); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO store_values (device, plugin, k, v, size, version, updated_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (device, plugin, k) DO UPDATE SET v = excluded.v, size = excluded.size,
				version = excluded.version, updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
			ns.Device, ns.Plugin, it.Key, string(it.Value), size, version, now, it.ExpiresAt)
		return err
	})
	return version, err
}

// StoreDelete implements Storage.
func (s *SQLite) StoreDelete(ctx context.Context, ns Namespace, key string, now int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM store_values WHERE device = ? AND plugin = ? AND k = ?
			AND (expires_at = 0 OR expires_at > ?)`, ns.Device, ns.Plugin, key, now)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// CreateChannel implements Storage.
func (s *SQLite) CreateChannel(ctx context.Context, c Channel, maxOpen int, now int64) error {
	meta, err := json.Marshal(c.Meta)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM channels WHERE device = ? AND status = 'open' AND expires_at > ?`,
			c.Device, now).Scan(&n); err != nil {
			return err
		}
		if n >= maxOpen {
			return &QuotaError{Limit: fmt.Sprintf("%d open channels", maxOpen)}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO channels (id, device, plugin, join_hash, chan_pub, meta, max_peers, page,
			status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)`,
			c.ID, c.Device, c.Plugin, c.JoinHash, c.ChanPub, string(meta), c.MaxPeers, c.Page, c.CreatedAt, c.ExpiresAt)
		if isUnique(err) {
			return ErrConflict
		}
		return err
	})
}

// Channel implements Storage.
func (s *SQLite) Channel(ctx context.Context, id string) (Channel, error) {
	c := Channel{ID: id}
	var meta string
	err := s.db.QueryRowContext(ctx, `SELECT device, plugin, join_hash, chan_pub, meta, max_peers, page, status,
		created_at, expires_at FROM channels WHERE id = ?`, id).Scan(&c.Device, &c.Plugin, &c.JoinHash, &c.ChanPub,
		&meta, &c.MaxPeers, &c.Page, &c.Status, &c.CreatedAt, &c.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(meta), &c.Meta); err != nil {
		return c, fmt.Errorf("channel %s: meta: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT peer_id, pub, token_hash, joined_at FROM peers WHERE channel = ? ORDER BY joined_at, peer_id`, id)
	if err != nil {
		return c, err
	}
	defer rows.Close()
	for rows.Next() {
		var p Peer
		if err := rows.Scan(&p.ID, &p.Pub, &p.TokenHash, &p.JoinedAt); err != nil {
			return c, err
		}
		c.Peers = append(c.Peers, p)
	}
	return c, rows.Err()
}

// SetChannelExpiry implements Storage.
func (s *SQLite) SetChannelExpiry(ctx context.Context, id string, expiresAt int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE channels SET expires_at = ? WHERE id = ?`, expiresAt, id)
	return err
}

// SetChannelStatus implements Storage.
func (s *SQLite) SetChannelStatus(ctx context.Context, id, status string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM peers WHERE channel = ?`, `DELETE FROM mailbox WHERE channel = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE channels SET status = ? WHERE id = ?`, status, id)
		return err
	})
}

// AddPeer implements Storage.
func (s *SQLite) AddPeer(ctx context.Context, channel string, p Peer, maxPeers int) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM channels WHERE id = ?`, channel).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM peers WHERE channel = ?`, channel).Scan(&n); err != nil {
			return err
		}
		if n >= maxPeers {
			return ErrConflict
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO peers (channel, peer_id, pub, token_hash, joined_at) VALUES (?, ?, ?, ?, ?)`,
			channel, p.ID, p.Pub, p.TokenHash, p.JoinedAt)
		return err
	})
}

// RemovePeer implements Storage.
func (s *SQLite) RemovePeer(ctx context.Context, channel, peerID string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM peers WHERE channel = ? AND peer_id = ?`, channel, peerID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// PeerByToken implements Storage.
func (s *SQLite) PeerByToken(ctx context.Context, tokenHash string) (string, Peer, error) {
	var ch string
	p := Peer{TokenHash: tokenHash}
	err := s.db.QueryRowContext(ctx, `SELECT channel, peer_id, pub, joined_at FROM peers WHERE token_hash = ?`, tokenHash).
		Scan(&ch, &p.ID, &p.Pub, &p.JoinedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return "", p, ErrNotFound
	}
	return ch, p, err
}

// MailboxPut implements Storage.
func (s *SQLite) MailboxPut(ctx context.Context, channel string, it MailboxItem, maxSlots int, now int64) error {
	env, err := json.Marshal(it.Env)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM mailbox WHERE channel = ? AND slot <> ? AND expires_at > ?`,
			channel, it.Slot, now).Scan(&n); err != nil {
			return err
		}
		if n >= maxSlots {
			return &QuotaError{Limit: fmt.Sprintf("%d mailbox slots", maxSlots)}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mailbox (channel, slot, env, expires_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (channel, slot) DO UPDATE SET env = excluded.env, expires_at = excluded.expires_at`,
			channel, it.Slot, string(env), it.ExpiresAt)
		return err
	})
}

// MailboxDelete implements Storage.
func (s *SQLite) MailboxDelete(ctx context.Context, channel, slot string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM mailbox WHERE channel = ? AND slot = ?`, channel, slot)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// MailboxClear implements Storage.
func (s *SQLite) MailboxClear(ctx context.Context, channel string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM mailbox WHERE channel = ?`, channel)
	return err
}

// MailboxList implements Storage.
func (s *SQLite) MailboxList(ctx context.Context, channel string, now int64) ([]MailboxItem, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT slot, env, expires_at FROM mailbox WHERE channel = ? AND expires_at > ? ORDER BY slot`, channel, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []MailboxItem{}
	for rows.Next() {
		var it MailboxItem
		var env string
		if err := rows.Scan(&it.Slot, &env, &it.ExpiresAt); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(env), &it.Env); err != nil {
			return nil, fmt.Errorf("mailbox %s/%s: %w", channel, it.Slot, err)
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// Secret implements Storage.
func (s *SQLite) Secret(ctx context.Context, name string) ([]byte, error) {
	var v string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT v FROM secrets WHERE name = ?`, name).Scan(&v)
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		v = protocol.B64.EncodeToString(b)
		_, err = tx.ExecContext(ctx, `INSERT INTO secrets (name, v) VALUES (?, ?)`, name, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return protocol.B64.DecodeString(v)
}

// channelRetentionMs is how long a channel's record outlives its expiry, so that GET /v1/c/{id}
// can still answer "closed" or "expired" to a late viewer.
const channelRetentionMs = 24 * 60 * 60 * 1000

// Sweep implements Storage.
func (s *SQLite) Sweep(ctx context.Context, now int64) error {
	old := now - channelRetentionMs
	for _, q := range []string{
		`DELETE FROM peers WHERE channel IN (SELECT id FROM channels WHERE expires_at <= ?)`,
		`DELETE FROM mailbox WHERE channel IN (SELECT id FROM channels WHERE expires_at <= ?)`,
		`DELETE FROM channels WHERE expires_at <= ?`,
	} {
		if _, err := s.db.ExecContext(ctx, q, old); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`DELETE FROM store_values WHERE expires_at <> 0 AND expires_at <= ?`,
		`DELETE FROM auth_nonces WHERE until_ms <= ?`,
		`DELETE FROM mailbox WHERE expires_at <= ?`,
	} {
		if _, err := s.db.ExecContext(ctx, q, now); err != nil {
			return err
		}
	}
	return nil
}
