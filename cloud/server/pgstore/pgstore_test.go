package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pkuinfo/harness/cloud/server/enginetest"
	"github.com/pkuinfo/harness/cloud/server/pgstore"
	"github.com/pkuinfo/harness/cloud/server/storagetest"
)

func open(t testing.TB, dsn string) *pgstore.Store {
	st, err := pgstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestConformance runs the storage conformance script on PostgreSQL and compares it with the
// golden transcript the SQLite and memory stores produce.
func TestConformance(t *testing.T) {
	dsn := enginetest.Postgres(t)
	st := open(t, dsn)
	got := storagetest.Transcript(t, st)
	want, err := os.ReadFile(filepath.Join("..", "testdata", "storage-conformance.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("postgres differs from the golden transcript:\n%s\nwant\n%s", got, want)
	}
	// A second node opening the same schema finds it in place and shares the state.
	st2 := open(t, dsn)
	if _, err := st2.Device(context.Background(), "d9"); err != nil {
		t.Errorf("second node reads the first node's device: %v", err)
	}
}

// TestDeviceQuota holds PostgreSQL to the device-wide store bounds every Storage keeps.
func TestDeviceQuota(t *testing.T) {
	storagetest.DeviceQuota(t, open(t, enginetest.Postgres(t)))
}

// TestOpenBadDSN: a malformed connection string is an error naming PostgreSQL, not a panic.
func TestOpenBadDSN(t *testing.T) {
	for _, dsn := range []string{"postgres://%zz", "postgres://127.0.0.1:1/x?connect_timeout=1"} {
		if st, err := pgstore.Open(context.Background(), dsn); err == nil {
			st.Close()
			t.Errorf("%q: no error", dsn)
		}
	}
}

// TestCountRate: one counter per (name, key) and window, shared by every Store on the database,
// starting again in the next window.
func TestCountRate(t *testing.T) {
	dsn := enginetest.Postgres(t)
	a, b := open(t, dsn), open(t, dsn)
	ctx := context.Background()
	var got []int64
	for i, st := range []*pgstore.Store{a, b, a, b} {
		n, err := st.CountRate(ctx, "register", "1.2.3.4", 60_000, 120_000+int64(i))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	other, _ := a.CountRate(ctx, "register", "5.6.7.8", 60_000, 120_000)
	next, _ := b.CountRate(ctx, "register", "1.2.3.4", 60_000, 180_000)
	if fmt.Sprint(got, other, next) != "[1 2 3 4] 1 1" {
		t.Errorf("counts %v, other key %d, next window %d", got, other, next)
	}
	if _, err := a.CountRate(ctx, "x", "k", 0, 1); err == nil {
		t.Error("a zero window was accepted")
	}
}
