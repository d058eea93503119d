package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
)

func open(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestDefaultDir(t *testing.T) {
	tests := []struct {
		name, xdg, home, want string
	}{
		{"xdg", "/x/data", "/home/u", "/x/data/pku-harness"},
		{"relative xdg is ignored", "data", "/home/u", "/home/u/.local/share/pku-harness"},
		{"no xdg", "", "/home/u", "/home/u/.local/share/pku-harness"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", tc.xdg)
			t.Setenv("HOME", tc.home)
			got, err := DefaultDir()
			if err != nil || got != tc.want {
				t.Fatalf("DefaultDir() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestMigrationsOnceAcrossOpens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pku-harness")
	ctx := context.Background()
	// Two processes' worth of handles opening a fresh database at once.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := Open(ctx, dir)
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db := open(t, dir)
	got, err := db.Applied(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for _, m := range Registered() {
		want = append(want, m.Version)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("applied %v, want %v", got, want)
	}
	var mode string
	if err := db.SQL.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", name, err, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestRegisterLater(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db := open(t, dir)
	db.Close()
	m := Migration{Version: 9001, Name: "test table", SQL: `CREATE TABLE t9001 (x INTEGER)`}
	Register(m)
	defer func() { migMu.Lock(); delete(migrations, m.Version); migMu.Unlock() }()
	Register(m) // the same migration twice is harmless
	db = open(t, dir)
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO t9001 VALUES (1)`); err != nil {
		t.Fatalf("migration registered after the first open was not applied: %v", err)
	}
	db.Close()
	open(t, dir) // applying again would fail: the table exists
}

func TestRegisterRefuses(t *testing.T) {
	tests := []struct {
		name string
		m    Migration
		want string
	}{
		{"zero", Migration{Version: 0, Name: "z"}, `store: migration "z": version 0 is not positive`},
		{"taken", Migration{Version: 1, Name: "other"}, `store: migration 1 registered twice ("plugins, versions and files" and "other")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			Register(tc.m)
		})
	}
}

func TestBadMigrationRollsBack(t *testing.T) {
	dir := t.TempDir()
	m := Migration{Version: 9002, Name: "broken", SQL: `CREATE TABLE t9002 (x); CREATE TABLE nope (`}
	Register(m)
	defer func() { migMu.Lock(); delete(migrations, m.Version); migMu.Unlock() }()
	_, err := Open(context.Background(), dir)
	if err == nil {
		t.Fatal("Open applied a broken migration")
	}
	want := "store: migration 9002 (broken): "
	if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
		t.Fatalf("error %q, want prefix %q", got, want)
	}
	raw, _ := sql.Open("sqlite", filepath.Join(dir, FileName))
	defer raw.Close()
	var n int
	raw.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 't9002'`).Scan(&n)
	if n != 0 {
		t.Fatal("the first statement of a failed migration was kept")
	}
}

func TestKVSharesTheDatabase(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a := open(t, dir)
	b := open(t, dir) // a second process, as `harness serve` beside a CLI command
	if err := a.KV().Set(ctx, "p", "k", interp.Entry{Value: "v", Expires: time.UnixMilli(5)}); err != nil {
		t.Fatal(err)
	}
	e, ok, err := b.KV().Get(ctx, "p", "k")
	if err != nil || !ok || e.Value != "v" || !e.Expires.Equal(time.UnixMilli(5)) {
		t.Fatalf("Get from the other handle = %+v, %v, %v", e, ok, err)
	}
	var _ interp.KV = a.KV()
	if err := a.KV().Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.SQL.PingContext(ctx); err != nil {
		t.Fatalf("closing the KV closed the host's database: %v", err)
	}
}

func TestTxRollsBack(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	wantErr := sql.ErrNoRows
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('a', 'b')`); err != nil {
			return err
		}
		return wantErr
	})
	if err != wantErr {
		t.Fatalf("Tx returned %v, want %v", err, wantErr)
	}
	var n int
	db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM settings`).Scan(&n)
	if n != 0 {
		t.Fatal("a failed Tx kept its write")
	}
}
