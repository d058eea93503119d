package pgstore_test

import (
	"context"
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

// TestOpenBadDSN: a malformed connection string is an error naming PostgreSQL, not a panic.
func TestOpenBadDSN(t *testing.T) {
	for _, dsn := range []string{"postgres://%zz", "postgres://127.0.0.1:1/x?connect_timeout=1"} {
		if st, err := pgstore.Open(context.Background(), dsn); err == nil {
			st.Close()
			t.Errorf("%q: no error", dsn)
		}
	}
}
