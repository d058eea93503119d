// Package store keeps all of the host's state in one embedded SQLite database
// (modernc.org/sqlite, pure Go) inside one data directory, so that CLI
// commands and a running `harness serve` share it (docs/ARCHITECTURE.md "Tables and migrations"). The
// database runs in WAL mode with a busy timeout and immediate transactions:
// readers never block, and writers from several processes wait for each
// other instead of failing. A process holds at most MaxConns connections to
// it (each is three descriptors: the database, its -wal and its -shm), keeps
// at most MaxIdleConns of them when idle and closes those after ConnIdle, so
// a burst of requests waits for a connection instead of opening one each.
//
// Tables are created by numbered migrations. A package that keeps state adds
// its own with Register from an init function; Open applies, in version
// order, every registered migration the database has not seen yet, each in
// its own transaction, and records it in schema_migrations. Version ranges
// keep packages apart:
//
//	1–99     host core (plugins, versions, files, modes, data-source cache, audit)
//	100–199  host abilities (todos, timetable, schedules, TOTP secret; and 211, see below)
//	200–299  campus client (campus sessions and accounts)
//	300–399  mcpx (remote plugins)
//	400–499  agent (conversations)
//	500–599  host/cloud (Cloud connection)
//
// Migration 211 belongs to host/abilities although it sits among the campus
// numbers: it came with the vault, beside 210. Numbers are never changed, since
// databases have recorded them (docs/ARCHITECTURE.md "Tables and migrations").
//
// KV returns the plugins' key-value storage (interp.KV) on the same
// database (KV).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go)
)

// FileName is the name of the database file inside the data directory.
const FileName = "harness.db"

// AppDir is the name of the data directory under the XDG data home.
const AppDir = "pku-harness"

// DefaultDir returns the default data directory: $XDG_DATA_HOME/pku-harness
// when XDG_DATA_HOME is an absolute path, else ~/.local/share/pku-harness (the
// XDG Base Directory default). The error says why no directory could be
// found (no home directory); pass --data then.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, AppDir), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("store: no data directory: %w (pass --data DIR)", err)
	}
	return filepath.Join(home, ".local", "share", AppDir), nil
}

// Migration is one numbered change to the schema. Version is unique across
// all packages (see the ranges in the package comment); Name says what it
// does; SQL is one or more statements run in one transaction.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

var (
	migMu      sync.Mutex
	migrations = map[int]Migration{}
)

// Register adds a migration, normally from an init function. It panics when
// the version is not positive or is already taken by a different migration:
// both are programming errors found at start-up.
func Register(m Migration) {
	migMu.Lock()
	defer migMu.Unlock()
	if m.Version <= 0 {
		panic(fmt.Sprintf("store: migration %q: version %d is not positive", m.Name, m.Version))
	}
	if old, dup := migrations[m.Version]; dup && old != m {
		panic(fmt.Sprintf("store: migration %d registered twice (%q and %q)", m.Version, old.Name, m.Name))
	}
	migrations[m.Version] = m
}

// Registered returns every registered migration in version order.
func Registered() []Migration {
	migMu.Lock()
	defer migMu.Unlock()
	ms := make([]Migration, 0, len(migrations))
	for _, m := range migrations {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	return ms
}

// Bounds of the connection pool of Open. SQLite lets one connection write at
// a time (the others wait in busy_timeout); readers run side by side in WAL
// mode, and two cores keep a few of them busy. A request past MaxConns waits
// for a free connection (until its context ends) rather than opening a file.
const (
	// MaxConns is the most connections one DB opens at once.
	MaxConns = 8
	// MaxIdleConns is the most connections kept open while idle.
	MaxIdleConns = 2
	// ConnIdle is how long an idle connection stays open.
	ConnIdle = 30 * time.Second
)

// DB is the host's open database. It is safe for concurrent use, and other
// processes may have the same file open.
type DB struct {
	// SQL is the database handle for packages that keep their own tables.
	// Write transactions are IMMEDIATE (they take the write lock at BEGIN),
	// so a read-then-write inside one transaction cannot deadlock. Its pool
	// holds at most MaxConns connections: code inside a transaction uses the
	// *sql.Tx, never SQL, and closes a Rows before it queries again.
	SQL *sql.DB
	dir string
	kv  *KV
}

// Open opens (creating if needed, with mode 0700) the data directory dir and
// the database in it (created with mode 0600: it holds campus sessions and
// the TOTP secret), and applies every registered migration it has not seen.
// The caller must Close the DB.
func Open(ctx context.Context, dir string) (*DB, error) {
	if dir == "" {
		return nil, errors.New("store: no data directory given")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	// The database holds sessions and secrets: create it 0600 before SQLite
	// does (SQLite gives the -wal and -shm files the database file's mode).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	f.Close()
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(MaxConns)
	db.SetMaxIdleConns(MaxIdleConns)
	db.SetConnMaxIdleTime(ConnIdle)
	s := &DB{SQL: db, dir: dir}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	kv, err := NewKV(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	s.kv = kv
	return s, nil
}

// memSeq names each OpenMemory database apart.
var memSeq atomic.Int64

// OpenMemory opens a database that lives in this process's memory only, with every
// registered migration applied, for a command that must not create a data directory (a
// review where none exists yet). It writes no file; it goes when the DB is closed. Its Dir is
// "": what keeps files beside a data directory (the vault's key) refuses it.
func OpenMemory(ctx context.Context) (*DB, error) {
	dsn := fmt.Sprintf("file:harness-memory-%d?mode=memory&cache=shared&_pragma=foreign_keys(ON)&_txlock=immediate", memSeq.Add(1))
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open in memory: %w", err)
	}
	// Every connection to a shared-cache memory database sees the same tables, and the
	// database lasts while one is open: idle ones are kept, never closed for age.
	db.SetMaxOpenConns(MaxConns)
	db.SetMaxIdleConns(MaxConns)
	db.SetConnMaxIdleTime(0)
	s := &DB{SQL: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	kv, err := NewKV(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: in memory: %w", err)
	}
	s.kv = kv
	return s, nil
}

// Dir returns the data directory ("" for OpenMemory).
func (s *DB) Dir() string { return s.dir }

// Path returns the database file's path.
func (s *DB) Path() string { return filepath.Join(s.dir, FileName) }

// KV returns the plugins' key-value storage (interp.KV, seed 004 "Steps":
// 256 KB per plugin) kept in this database.
func (s *DB) KV() *KV { return s.kv }

// Close closes the database.
func (s *DB) Close() error { return s.SQL.Close() }

// Applied returns the versions of the migrations this database has applied,
// in order.
func (s *DB) Applied(ctx context.Context) ([]int, error) {
	rows, err := s.SQL.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("store: read schema_migrations: %w", err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, rows.Err()
}

// migrate applies the registered migrations the database lacks, each in its
// own transaction together with its schema_migrations row, so that two
// processes opening a fresh database at once apply each migration once.
func (s *DB) migrate(ctx context.Context) error {
	if _, err := s.SQL.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL -- Unix ms
	)`); err != nil {
		return fmt.Errorf("store: %s: create schema_migrations: %w", s.Path(), err)
	}
	for _, m := range Registered() {
		if err := s.apply(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *DB) apply(ctx context.Context, m Migration) error {
	tx, err := s.SQL.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.Version, m.Name, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.Version, m.Name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.Version, m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.Version, m.Name, err)
	}
	return nil
}

// Tx runs fn in one write transaction (BEGIN IMMEDIATE) and commits when fn
// returns nil; any error rolls everything back.
func (s *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.SQL.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// Check runs SQLite's integrity check and returns an error describing the
// first problems it reports, or nil when the database is consistent.
func (s *DB) Check(ctx context.Context) error {
	rows, err := s.SQL.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return err
		}
		if m != "ok" {
			msgs = append(msgs, m)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(msgs) > 0 {
		return fmt.Errorf("store: %s is damaged: %v", s.Path(), msgs)
	}
	return nil
}
