package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
	"github.com/pkuinfo/harness/lang/expr"
)

// KV is the host's persistent interp.KV, a table of its SQLite database (pure Go,
// modernc.org/sqlite). It is safe for concurrent use within one process;
// writes are serialised so the quota check and the write are atomic.
type KV struct {
	db     *sql.DB
	mu     sync.Mutex // serialises Set and Delete
	quota  int
	shared bool // db belongs to the caller (NewKV): Close leaves it open
}

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS kv (
	plugin  TEXT    NOT NULL,
	key     TEXT    NOT NULL,
	value   BLOB    NOT NULL, -- JSON
	size    INTEGER NOT NULL, -- len(key) + len(value), counted against the quota
	expires INTEGER NOT NULL, -- Unix ms; 0 = never
	PRIMARY KEY (plugin, key)
) WITHOUT ROWID;`

// OpenKV opens (creating if needed) the store in the database file at
// path; ":memory:" gives a private in-memory database. It holds at most four
// connections to a file (one to memory). The caller must Close it.
func OpenKV(path string) (*KV, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	if path == ":memory:" {
		dsn = "file::memory:?_txlock=immediate"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: kv: open %s: %w", path, err)
	}
	if path == ":memory:" {
		db.SetMaxOpenConns(1) // every connection would get its own database
	} else {
		// Writes are serialised by mu anyway: a few connections serve the
		// readers, and idle ones give their descriptors back.
		db.SetMaxOpenConns(4)
		db.SetMaxIdleConns(1)
		db.SetConnMaxIdleTime(30 * time.Second)
	}
	if _, err := db.Exec(sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: kv: create schema in %s: %w", path, err)
	}
	return &KV{db: db, quota: interp.KVQuota}, nil
}

// NewKV keeps the store in db, a database the caller opened and owns
// (the host keeps all its state in one file), creating the kv table if it is
// missing. db should use "_txlock=immediate" and a busy timeout so that
// writes from several processes wait for each other. Close does not close
// db.
func NewKV(db *sql.DB) (*KV, error) {
	if _, err := db.Exec(sqliteSchema); err != nil {
		return nil, fmt.Errorf("store: kv: create schema: %w", err)
	}
	return &KV{db: db, quota: interp.KVQuota, shared: true}, nil
}

// Close closes the database, unless it came from the caller (NewKV).
func (s *KV) Close() error {
	if s.shared {
		return nil
	}
	return s.db.Close()
}

// Get implements interp.KV: it returns the entry under key, expired or not.
func (s *KV) Get(ctx context.Context, plugin, key string) (interp.Entry, bool, error) {
	var (
		b       []byte
		expires int64
	)
	err := s.db.QueryRowContext(ctx, `SELECT value, expires FROM kv WHERE plugin = ? AND key = ?`, plugin, key).Scan(&b, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return interp.Entry{}, false, nil
	}
	if err != nil {
		return interp.Entry{}, false, fmt.Errorf("store: kv: get %q: %w", key, err)
	}
	v, err := expr.FromJSON(b)
	if err != nil {
		return interp.Entry{}, false, fmt.Errorf("store: kv: get %q: stored value: %w", key, err)
	}
	e := interp.Entry{Value: v}
	if expires != 0 {
		e.Expires = time.UnixMilli(expires)
	}
	return e, true, nil
}

// Set implements interp.KV. A write that would take the plugin over its
// quota returns an error wrapping interp.ErrQuota and keeps the old value.
func (s *KV) Set(ctx context.Context, plugin, key string, e interp.Entry) error {
	b, size, err := kvstore.Encode(key, e.Value)
	if err != nil {
		return err
	}
	var expires int64
	if !e.Expires.IsZero() {
		expires = e.Expires.UnixMilli()
		if expires == 0 {
			expires = -1 // the epoch itself: already expired, not "never"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: kv: set %q: %w", key, err)
	}
	defer tx.Rollback()
	var used int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM kv WHERE plugin = ? AND key <> ?`, plugin, key).Scan(&used); err != nil {
		return fmt.Errorf("store: kv: set %q: %w", key, err)
	}
	if used+size > s.quota {
		return &interp.QuotaError{Key: key, Total: used + size}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kv (plugin, key, value, size, expires) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (plugin, key) DO UPDATE SET value = excluded.value, size = excluded.size, expires = excluded.expires`,
		plugin, key, b, size, expires); err != nil {
		return fmt.Errorf("store: kv: set %q: %w", key, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: kv: set %q: %w", key, err)
	}
	return nil
}

// Delete implements interp.KV.
func (s *KV) Delete(ctx context.Context, plugin, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM kv WHERE plugin = ? AND key = ?`, plugin, key); err != nil {
		return fmt.Errorf("store: kv: delete %q: %w", key, err)
	}
	return nil
}

// Usage returns the bytes plugin's entries count against the quota.
func (s *KV) Usage(ctx context.Context, plugin string) (int, error) {
	var used int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM kv WHERE plugin = ?`, plugin).Scan(&used)
	return used, err
}

// DeletePlugin removes every entry of plugin (when it is uninstalled).
func (s *KV) DeletePlugin(ctx context.Context, plugin string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM kv WHERE plugin = ?`, plugin); err != nil {
		return fmt.Errorf("store: kv: delete plugin %s: %w", plugin, err)
	}
	return nil
}

// PurgeExpired removes, across plugins, the entries that expired before
// before, and returns how many it removed. Entries that expired later stay
// for `cache` staleOnError (docs/DECISIONS.md §10); a host calls this now and
// then with a horizon such as a week ago.
func (s *KV) PurgeExpired(ctx context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.db.ExecContext(ctx, `DELETE FROM kv WHERE expires <> 0 AND expires < ?`, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: kv: purge: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
