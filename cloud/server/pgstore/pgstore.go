// Package pgstore is the PostgreSQL Storage of the Cloud reference server (seed 003 “PKU
// harness Cloud”, docs/CLOUD.md "Running several nodes"): the state several `harness cloud serve`
// nodes share, selected by `--db postgres://…`. It passes the same conformance transcript as the
// embedded SQLite store (cloud/server/storagetest).
//
// Every conditional write is one round trip: the store puts and deletes are PL/pgSQL functions
// that lock their namespace's row first, so the If-Match, version and quota checks of one
// namespace are serialised across every node; seats, open-channel counts and mailbox slots are
// serialised by transaction-scoped advisory locks on the channel or device. Times are Unix ms
// taken from the server's clock, never the database's.
package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
)

// schemaLock is the advisory lock key nodes hold while creating the schema, so that several
// nodes starting at once do not race on CREATE OR REPLACE FUNCTION.
const schemaLock = 0x68617200 // "har\0"

var schema = []string{
	`CREATE TABLE IF NOT EXISTS devices (
		id TEXT PRIMARY KEY, sign_pub TEXT NOT NULL UNIQUE, box_pub TEXT NOT NULL, created_at BIGINT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS auth_nonces (
		device TEXT NOT NULL, nonce TEXT NOT NULL, until_ms BIGINT NOT NULL, PRIMARY KEY (device, nonce))`,
	// store_ns: the namespace's version sequence and its usage (rows and bytes of store_values,
	// expired ones included until Sweep removes them: an upper bound of the live usage).
	`CREATE TABLE IF NOT EXISTS store_ns (
		device TEXT NOT NULL, plugin TEXT NOT NULL, seq BIGINT NOT NULL, n BIGINT NOT NULL, bytes BIGINT NOT NULL,
		PRIMARY KEY (device, plugin))`,
	`CREATE TABLE IF NOT EXISTS store_values (
		device TEXT NOT NULL, plugin TEXT NOT NULL, k TEXT COLLATE "C" NOT NULL, v TEXT NOT NULL, size BIGINT NOT NULL,
		version BIGINT NOT NULL, updated_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
		PRIMARY KEY (device, plugin, k))`,
	`CREATE TABLE IF NOT EXISTS channels (
		id TEXT PRIMARY KEY, device TEXT NOT NULL, plugin TEXT NOT NULL, join_hash TEXT NOT NULL,
		chan_pub TEXT NOT NULL, meta TEXT NOT NULL, max_peers BIGINT NOT NULL, page TEXT NOT NULL,
		status TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS channels_device ON channels (device, status)`,
	`CREATE INDEX IF NOT EXISTS channels_expiry ON channels (expires_at)`,
	`CREATE TABLE IF NOT EXISTS peers (
		channel TEXT NOT NULL, peer_id TEXT COLLATE "C" NOT NULL, pub TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
		joined_at BIGINT NOT NULL, PRIMARY KEY (channel, peer_id))`,
	`CREATE TABLE IF NOT EXISTS mailbox (
		channel TEXT NOT NULL, slot TEXT COLLATE "C" NOT NULL, env TEXT NOT NULL, expires_at BIGINT NOT NULL,
		PRIMARY KEY (channel, slot))`,
	`CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, v TEXT NOT NULL)`,
	// rate_windows: the shared fixed-window counters of the request limits (server.SharedRates).
	`CREATE TABLE IF NOT EXISTS rate_windows (
		name TEXT NOT NULL, k TEXT NOT NULL, start_ms BIGINT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (name, k))`,
	// harness_store_put: code 0 with the new version, 1 If-Match failed, 2 over the keys, 3
	// over the bytes, 4 over the plugins per device, 5 over the bytes per device. With device
	// limits the device is locked first (an advisory lock, so puts of one device to different
	// plugins are serialised across nodes), then the namespace row (the upsert takes its row
	// lock). A limit of 0 is no limit.
	`CREATE OR REPLACE FUNCTION harness_store_put(p_dev TEXT, p_plg TEXT, p_k TEXT, p_v TEXT, p_size BIGINT,
		p_if BIGINT, p_exp BIGINT, p_now BIGINT, p_maxkeys BIGINT, p_maxbytes BIGINT,
		p_dmaxplugins BIGINT, p_dmaxbytes BIGINT, OUT code INT, OUT ver BIGINT)
	LANGUAGE plpgsql AS $$
	DECLARE
		u_n BIGINT; u_b BIGINT; c_ver BIGINT; c_size BIGINT := 0; c_exp BIGINT; existed BOOLEAN; inserted BOOLEAN; live BIGINT := 0;
		d_p BIGINT; d_b BIGINT;
	BEGIN
		code := 0; ver := 0;
		IF p_dmaxplugins > 0 OR p_dmaxbytes > 0 THEN
			PERFORM pg_advisory_xact_lock(hashtextextended('store-device:' || p_dev, 0));
		END IF;
		INSERT INTO store_ns AS s (device, plugin, seq, n, bytes) VALUES (p_dev, p_plg, 0, 0, 0)
			ON CONFLICT (device, plugin) DO UPDATE SET seq = s.seq RETURNING s.n, s.bytes INTO u_n, u_b;
		SELECT version, size, expires_at INTO c_ver, c_size, c_exp FROM store_values
			WHERE device = p_dev AND plugin = p_plg AND k = p_k;
		existed := FOUND;
		IF existed THEN
			IF c_exp = 0 OR c_exp > p_now THEN live := c_ver; END IF;
			u_n := u_n - 1; u_b := u_b - c_size;
		ELSE
			c_size := 0;
		END IF;
		IF p_if IS NOT NULL AND p_if <> live THEN code := 1; RETURN; END IF;
		IF u_n + 1 > p_maxkeys OR u_b + p_size > p_maxbytes THEN
			SELECT COUNT(*), COALESCE(SUM(size), 0) INTO u_n, u_b FROM store_values
				WHERE device = p_dev AND plugin = p_plg AND k <> p_k AND (expires_at = 0 OR expires_at > p_now);
			IF u_n + 1 > p_maxkeys THEN code := 2; RETURN; END IF;
			IF u_b + p_size > p_maxbytes THEN code := 3; RETURN; END IF;
		END IF;
		IF p_dmaxplugins > 0 OR p_dmaxbytes > 0 THEN
			-- The device's other namespaces by store_ns (expired rows included: an upper bound),
			-- then, only when that is over, an exact count of the device's live rows.
			SELECT COUNT(*) FILTER (WHERE n > 0), COALESCE(SUM(bytes), 0) INTO d_p, d_b
				FROM store_ns WHERE device = p_dev AND plugin <> p_plg;
			IF (p_dmaxplugins > 0 AND d_p + 1 > p_dmaxplugins) OR (p_dmaxbytes > 0 AND d_b + u_b + p_size > p_dmaxbytes) THEN
				SELECT COUNT(DISTINCT plugin) FILTER (WHERE plugin <> p_plg), COALESCE(SUM(size), 0) INTO d_p, d_b
					FROM store_values WHERE device = p_dev AND NOT (plugin = p_plg AND k = p_k)
					AND (expires_at = 0 OR expires_at > p_now);
				IF p_dmaxplugins > 0 AND d_p + 1 > p_dmaxplugins THEN code := 4; RETURN; END IF;
				IF p_dmaxbytes > 0 AND d_b + p_size > p_dmaxbytes THEN code := 5; RETURN; END IF;
			END IF;
		END IF;
		UPDATE store_ns SET seq = seq + 1 WHERE device = p_dev AND plugin = p_plg RETURNING seq INTO ver;
		-- Whether the row was inserted or updated is read back rather than assumed from the
		-- read above: a Sweep may have removed the expired row in between.
		INSERT INTO store_values (device, plugin, k, v, size, version, updated_at, expires_at)
			VALUES (p_dev, p_plg, p_k, p_v, p_size, ver, p_now, p_exp)
			ON CONFLICT (device, plugin, k) DO UPDATE SET v = excluded.v, size = excluded.size,
				version = excluded.version, updated_at = excluded.updated_at, expires_at = excluded.expires_at
			RETURNING (xmax = 0) INTO inserted;
		UPDATE store_ns SET n = n + (CASE WHEN inserted THEN 1 ELSE 0 END),
			bytes = bytes + p_size - (CASE WHEN inserted THEN 0 ELSE c_size END)
			WHERE device = p_dev AND plugin = p_plg;
	END $$`,
	// harness_store_delete: true when a live value was removed.
	`CREATE OR REPLACE FUNCTION harness_store_delete(p_dev TEXT, p_plg TEXT, p_k TEXT, p_now BIGINT) RETURNS BOOLEAN
	LANGUAGE plpgsql AS $$
	DECLARE
		d_size BIGINT;
	BEGIN
		PERFORM 1 FROM store_ns WHERE device = p_dev AND plugin = p_plg FOR UPDATE;
		DELETE FROM store_values WHERE device = p_dev AND plugin = p_plg AND k = p_k
			AND (expires_at = 0 OR expires_at > p_now) RETURNING size INTO d_size;
		IF NOT FOUND THEN RETURN FALSE; END IF;
		UPDATE store_ns SET n = n - 1, bytes = bytes - d_size WHERE device = p_dev AND plugin = p_plg;
		RETURN TRUE;
	END $$`,
}

// Store is the PostgreSQL Storage: a pgx connection pool over one database (or one schema of
// it, by `search_path` in the connection string). Safe for use by many goroutines and by many
// processes sharing the database.
type Store struct {
	pool *pgxpool.Pool
}

// Open connects to the database named by dsn (a `postgres://` URL or a key=value string, as
// libpq takes them; unknown URL parameters such as `search_path` are sent as run-time
// parameters) and creates the schema if needed. The pool's size is pgx's default (the larger of
// 4 and the number of CPUs) unless dsn sets pool_max_conns.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres %s: schema: %w", cfg.ConnConfig.Host, err)
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		for _, q := range schema {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close closes the pool, waiting for the connections in use.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// isUnique reports a unique violation (SQLSTATE 23505).
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// lock takes a transaction-scoped advisory lock on key (hashed by PostgreSQL's hashtext).
func lock(ctx context.Context, tx pgx.Tx, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, key)
	return err
}

// CreateDevice implements server.Storage.
func (s *Store) CreateDevice(ctx context.Context, d server.Device) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO devices (id, sign_pub, box_pub, created_at) VALUES ($1, $2, $3, $4)`,
		d.ID, d.SignPub, d.BoxPub, d.CreatedAt)
	if isUnique(err) {
		return server.ErrConflict
	}
	return err
}

// Device implements server.Storage. It is not cached: another node may delete the device.
func (s *Store) Device(ctx context.Context, id string) (server.Device, error) {
	d := server.Device{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT sign_pub, box_pub, created_at FROM devices WHERE id = $1`, id).
		Scan(&d.SignPub, &d.BoxPub, &d.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, server.ErrNotFound
	}
	return d, err
}

// DeleteDevice implements server.Storage.
func (s *Store) DeleteDevice(ctx context.Context, id string) ([]string, error) {
	var chans []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM devices WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return server.ErrNotFound
		}
		rows, err := tx.Query(ctx, `DELETE FROM channels WHERE device = $1 RETURNING id`, id)
		if err != nil {
			return err
		}
		chans, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		sortStrings(chans)
		for _, q := range []string{`DELETE FROM peers WHERE channel = ANY($1)`, `DELETE FROM mailbox WHERE channel = ANY($1)`} {
			if _, err := tx.Exec(ctx, q, chans); err != nil {
				return err
			}
		}
		for _, q := range []string{`DELETE FROM store_values WHERE device = $1`, `DELETE FROM store_ns WHERE device = $1`,
			`DELETE FROM auth_nonces WHERE device = $1`} {
			if _, err := tx.Exec(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return chans, nil
}

func sortStrings(a []string) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// UseNonce implements server.Storage in one statement: the insert succeeds, or replaces a
// forgotten nonce, or returns no row (ErrConflict).
func (s *Store) UseNonce(ctx context.Context, device, nonce string, until, now int64) error {
	var one int
	err := s.pool.QueryRow(ctx, `INSERT INTO auth_nonces AS a (device, nonce, until_ms) VALUES ($1, $2, $3)
		ON CONFLICT (device, nonce) DO UPDATE SET until_ms = excluded.until_ms WHERE a.until_ms <= $4
		RETURNING 1`, device, nonce, until, now).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return server.ErrConflict
	}
	return err
}

// StoreList implements server.Storage (keys compare bytewise: the column's collation is "C").
func (s *Store) StoreList(ctx context.Context, ns server.Namespace, prefix, after string, limit int, now int64) ([]server.StoreItem, error) {
	lo := after
	if prefix > lo {
		lo = prefix
	}
	rows, err := s.pool.Query(ctx, `SELECT k, version, updated_at FROM store_values
		WHERE device = $1 AND plugin = $2 AND k >= $3 AND k > $4 AND k < $5 AND (expires_at = 0 OR expires_at > $6)
		ORDER BY k LIMIT $7`, ns.Device, ns.Plugin, lo, after, prefix+"~", now, limit)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (server.StoreItem, error) {
		var it server.StoreItem
		err := r.Scan(&it.Key, &it.Version, &it.UpdatedAt)
		return it, err
	})
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

// StoreGet implements server.Storage.
func (s *Store) StoreGet(ctx context.Context, ns server.Namespace, key string, now int64) (server.StoreItem, error) {
	it := server.StoreItem{Key: key}
	var v string
	err := s.pool.QueryRow(ctx, `SELECT v, version, updated_at, expires_at FROM store_values
		WHERE device = $1 AND plugin = $2 AND k = $3 AND (expires_at = 0 OR expires_at > $4)`,
		ns.Device, ns.Plugin, key, now).Scan(&v, &it.Version, &it.UpdatedAt, &it.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return it, server.ErrNotFound
	}
	it.Value = json.RawMessage(v)
	return it, err
}

// StorePut implements server.Storage in one call of harness_store_put.
func (s *Store) StorePut(ctx context.Context, ns server.Namespace, it server.StoreItem, ifMatch *int64, q server.StoreQuota, now int64) (int64, error) {
	var code int
	var ver int64
	size := int64(len(it.Key) + len(it.Value))
	err := s.pool.QueryRow(ctx, `SELECT code, ver FROM harness_store_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		ns.Device, ns.Plugin, it.Key, string(it.Value), size, ifMatch, it.ExpiresAt, now, q.MaxKeys, q.MaxBytes,
		q.Device.MaxPlugins, q.Device.MaxBytes).Scan(&code, &ver)
	if err != nil {
		return 0, err
	}
	switch code {
	case 0:
		return ver, nil
	case 1:
		return 0, server.ErrConflict
	case 2:
		return 0, &server.QuotaError{Limit: fmt.Sprintf("%d keys", q.MaxKeys)}
	case 3:
		return 0, &server.QuotaError{Limit: fmt.Sprintf("%d bytes", q.MaxBytes)}
	case 4:
		return 0, &server.QuotaError{Limit: fmt.Sprintf("%d plugins per device", q.Device.MaxPlugins)}
	case 5:
		return 0, &server.QuotaError{Limit: fmt.Sprintf("%d bytes per device", q.Device.MaxBytes)}
	}
	return 0, fmt.Errorf("harness_store_put: unknown code %d", code)
}

// StoreDelete implements server.Storage in one call of harness_store_delete.
func (s *Store) StoreDelete(ctx context.Context, ns server.Namespace, key string, now int64) error {
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT harness_store_delete($1, $2, $3, $4)`, ns.Device, ns.Plugin, key, now).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return server.ErrNotFound
	}
	return nil
}

// CreateChannel implements server.Storage; the device's open channels are counted under an
// advisory lock on the device.
func (s *Store) CreateChannel(ctx context.Context, c server.Channel, maxOpen int, now int64) error {
	meta, err := json.Marshal(c.Meta)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lock(ctx, tx, "device:"+c.Device); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM channels WHERE device = $1 AND status = 'open' AND expires_at > $2`,
			c.Device, now).Scan(&n); err != nil {
			return err
		}
		if n >= maxOpen {
			return &server.QuotaError{Limit: fmt.Sprintf("%d open channels", maxOpen)}
		}
		_, err := tx.Exec(ctx, `INSERT INTO channels (id, device, plugin, join_hash, chan_pub, meta, max_peers, page,
			status, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'open', $9, $10)`,
			c.ID, c.Device, c.Plugin, c.JoinHash, c.ChanPub, string(meta), c.MaxPeers, c.Page, c.CreatedAt, c.ExpiresAt)
		if isUnique(err) {
			return server.ErrConflict
		}
		return err
	})
}

// Channel implements server.Storage.
func (s *Store) Channel(ctx context.Context, id string) (server.Channel, error) {
	c := server.Channel{ID: id}
	var meta string
	err := s.pool.QueryRow(ctx, `SELECT device, plugin, join_hash, chan_pub, meta, max_peers, page, status,
		created_at, expires_at FROM channels WHERE id = $1`, id).Scan(&c.Device, &c.Plugin, &c.JoinHash, &c.ChanPub,
		&meta, &c.MaxPeers, &c.Page, &c.Status, &c.CreatedAt, &c.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, server.ErrNotFound
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(meta), &c.Meta); err != nil {
		return c, fmt.Errorf("channel %s: meta: %w", id, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT peer_id, pub, token_hash, joined_at FROM peers WHERE channel = $1
		ORDER BY joined_at, peer_id`, id)
	if err != nil {
		return c, err
	}
	c.Peers, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (server.Peer, error) {
		var p server.Peer
		err := r.Scan(&p.ID, &p.Pub, &p.TokenHash, &p.JoinedAt)
		return p, err
	})
	if len(c.Peers) == 0 {
		c.Peers = nil
	}
	return c, err
}

// SetChannelExpiry implements server.Storage.
func (s *Store) SetChannelExpiry(ctx context.Context, id string, expiresAt int64) error {
	_, err := s.pool.Exec(ctx, `UPDATE channels SET expires_at = $1 WHERE id = $2`, expiresAt, id)
	return err
}

// SetChannelStatus implements server.Storage.
func (s *Store) SetChannelStatus(ctx context.Context, id, status string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lock(ctx, tx, "channel:"+id); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM peers WHERE channel = $1`, `DELETE FROM mailbox WHERE channel = $1`} {
			if _, err := tx.Exec(ctx, q, id); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE channels SET status = $1 WHERE id = $2`, status, id)
		return err
	})
}

// AddPeer implements server.Storage; the seats are counted under an advisory lock on the
// channel, so two nodes cannot both give away the last seat.
func (s *Store) AddPeer(ctx context.Context, channel string, p server.Peer, maxPeers int) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lock(ctx, tx, "channel:"+channel); err != nil {
			return err
		}
		var open bool
		var n int
		err := tx.QueryRow(ctx, `SELECT status = 'open', (SELECT COUNT(*) FROM peers WHERE channel = $1)
			FROM channels WHERE id = $1`, channel).Scan(&open, &n)
		if errors.Is(err, pgx.ErrNoRows) {
			return server.ErrNotFound
		}
		if err != nil {
			return err
		}
		if n >= maxPeers {
			return server.ErrConflict
		}
		_, err = tx.Exec(ctx, `INSERT INTO peers (channel, peer_id, pub, token_hash, joined_at) VALUES ($1, $2, $3, $4, $5)`,
			channel, p.ID, p.Pub, p.TokenHash, p.JoinedAt)
		if isUnique(err) {
			return server.ErrConflict
		}
		return err
	})
}

// RemovePeer implements server.Storage.
func (s *Store) RemovePeer(ctx context.Context, channel, peerID string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM peers WHERE channel = $1 AND peer_id = $2`, channel, peerID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return server.ErrNotFound
	}
	return nil
}

// PeerByToken implements server.Storage.
func (s *Store) PeerByToken(ctx context.Context, tokenHash string) (string, server.Peer, error) {
	var ch string
	p := server.Peer{TokenHash: tokenHash}
	err := s.pool.QueryRow(ctx, `SELECT channel, peer_id, pub, joined_at FROM peers WHERE token_hash = $1`, tokenHash).
		Scan(&ch, &p.ID, &p.Pub, &p.JoinedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", p, server.ErrNotFound
	}
	return ch, p, err
}

// MailboxPut implements server.Storage; the slots are counted under the channel's advisory lock.
func (s *Store) MailboxPut(ctx context.Context, channel string, it server.MailboxItem, maxSlots int, now int64) error {
	env, err := json.Marshal(it.Env)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lock(ctx, tx, "channel:"+channel); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM mailbox WHERE channel = $1 AND slot <> $2 AND expires_at > $3`,
			channel, it.Slot, now).Scan(&n); err != nil {
			return err
		}
		if n >= maxSlots {
			return &server.QuotaError{Limit: fmt.Sprintf("%d mailbox slots", maxSlots)}
		}
		_, err := tx.Exec(ctx, `INSERT INTO mailbox (channel, slot, env, expires_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (channel, slot) DO UPDATE SET env = excluded.env, expires_at = excluded.expires_at`,
			channel, it.Slot, string(env), it.ExpiresAt)
		return err
	})
}

// MailboxDelete implements server.Storage.
func (s *Store) MailboxDelete(ctx context.Context, channel, slot string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM mailbox WHERE channel = $1 AND slot = $2`, channel, slot)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return server.ErrNotFound
	}
	return nil
}

// MailboxClear implements server.Storage.
func (s *Store) MailboxClear(ctx context.Context, channel string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM mailbox WHERE channel = $1`, channel)
	return err
}

// MailboxList implements server.Storage.
func (s *Store) MailboxList(ctx context.Context, channel string, now int64) ([]server.MailboxItem, error) {
	rows, err := s.pool.Query(ctx, `SELECT slot, env, expires_at FROM mailbox WHERE channel = $1 AND expires_at > $2
		ORDER BY slot`, channel, now)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (server.MailboxItem, error) {
		var it server.MailboxItem
		var env string
		if err := r.Scan(&it.Slot, &env, &it.ExpiresAt); err != nil {
			return it, err
		}
		if err := json.Unmarshal([]byte(env), &it.Env); err != nil {
			return it, fmt.Errorf("mailbox %s/%s: %w", channel, it.Slot, err)
		}
		return it, nil
	})
	if out == nil && err == nil {
		out = []server.MailboxItem{}
	}
	return out, err
}

// Secret implements server.Storage: the first node to ask creates it; every node then reads
// the same bytes.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO secrets (name, v) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		name, protocol.B64.EncodeToString(b)); err != nil {
		return nil, err
	}
	var v string
	if err := s.pool.QueryRow(ctx, `SELECT v FROM secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, err
	}
	return protocol.B64.DecodeString(v)
}

// Sweep implements server.Storage. Expired store rows leave their namespace's usage in the same
// statement that removes them.
func (s *Store) Sweep(ctx context.Context, now int64) error {
	old := now - server.ChannelRetentionMs
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range []struct {
			sql string
			at  int64
		}{
			{`DELETE FROM peers WHERE channel IN (SELECT id FROM channels WHERE expires_at <= $1)`, old},
			{`DELETE FROM mailbox WHERE channel IN (SELECT id FROM channels WHERE expires_at <= $1)`, old},
			{`DELETE FROM channels WHERE expires_at <= $1`, old},
			{`WITH d AS (DELETE FROM store_values WHERE expires_at <> 0 AND expires_at <= $1 RETURNING device, plugin, size),
				a AS (SELECT device, plugin, COUNT(*) AS n, SUM(size) AS b FROM d GROUP BY device, plugin)
				UPDATE store_ns s SET n = s.n - a.n, bytes = s.bytes - a.b FROM a
				WHERE s.device = a.device AND s.plugin = a.plugin`, now},
			{`DELETE FROM auth_nonces WHERE until_ms <= $1`, now},
			{`DELETE FROM rate_windows WHERE start_ms < $1`, now - rateRetentionMs},
			{`DELETE FROM mailbox WHERE expires_at <= $1`, now},
		} {
			if _, err := tx.Exec(ctx, q.sql, q.at); err != nil {
				return err
			}
		}
		return nil
	})
}

// rateRetentionMs is how long a rate window's counter is kept: longer than any window.
const rateRetentionMs = 24 * 60 * 60 * 1000

// CountRate implements server.SharedRates in one statement: the window's counter starts at 1 or
// goes up by one, for every node alike.
func (s *Store) CountRate(ctx context.Context, name, key string, windowMs, now int64) (int64, error) {
	if windowMs <= 0 {
		return 0, fmt.Errorf("rate window %d ms", windowMs)
	}
	var n int64
	err := s.pool.QueryRow(ctx, `INSERT INTO rate_windows AS r (name, k, start_ms, n) VALUES ($1, $2, $3, 1)
		ON CONFLICT (name, k) DO UPDATE SET n = CASE WHEN r.start_ms = excluded.start_ms THEN r.n + 1 ELSE 1 END,
			start_ms = excluded.start_ms
		RETURNING n`, name, key, now-now%windowMs).Scan(&n)
	return n, err
}

var (
	_ server.Storage     = (*Store)(nil)
	_ server.SharedRates = (*Store)(nil)
)
