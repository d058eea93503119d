// Package enginetest gives tests of the scaled-out Cloud server the external engines they need: a
// fresh PostgreSQL schema and a NATS server. Without an engine a test is skipped with a message
// saying how to provide it, unless HARNESS_REQUIRE_ENGINES=1 (set by .ci/run), which turns the
// skip into a failure, so CI never passes by skipping.
//
//   - HARNESS_TEST_POSTGRES: a connection string (postgres://user@host:port/db); each test gets
//     its own schema in that database, dropped when it ends.
//   - HARNESS_TEST_NATS: a NATS URL (nats://host:port). Unset, a `nats-server` on PATH is started
//     on a free loopback port for the test.
package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Required reports whether HARNESS_REQUIRE_ENGINES=1: a missing engine fails the test.
func Required() bool { return os.Getenv("HARNESS_REQUIRE_ENGINES") == "1" }

func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (HARNESS_REQUIRE_ENGINES=1)", msg)
	}
	t.Skipf("%s; skipped (HARNESS_REQUIRE_ENGINES=1 makes this a failure)", msg)
}

// Postgres returns a connection string to a fresh, empty schema of the database named by
// HARNESS_TEST_POSTGRES (its search_path set to the schema), dropped when t ends.
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv("HARNESS_TEST_POSTGRES")
	if base == "" {
		missing(t, "PostgreSQL: HARNESS_TEST_POSTGRES is not set (postgres://user@host:port/db)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		missing(t, "PostgreSQL at HARNESS_TEST_POSTGRES: %v", err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, base); err == nil {
			c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	return withParam(base, "search_path", schema)
}

// withParam adds a parameter to a URL or key=value connection string.
func withParam(dsn, k, v string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set(k, v)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(dsn) + " " + k + "=" + v
}

// NATS returns the URL of a NATS server: HARNESS_TEST_NATS, or a `nats-server` started for t on
// a free loopback port and stopped when t ends.
func NATS(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("HARNESS_TEST_NATS"); u != "" {
		return u
	}
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		missing(t, "NATS: HARNESS_TEST_NATS is not set and no nats-server on PATH (apt-get install nats-server)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		missing(t, "NATS: starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "nats://" + addr
		}
	}
	t.Fatalf("nats-server did not listen on %s", addr)
	return ""
}
