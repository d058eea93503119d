package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore/kvtest"
	"github.com/pkuinfo/harness/lang/expr"
)

// TestKV runs the KV conformance suite on a store of its own file and on one
// that shares the caller's database (as the host's does).
func TestKV(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		kvtest.Run(t, func(t *testing.T) kvtest.Store {
			s, err := OpenKV(filepath.Join(t.TempDir(), "kv.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("shared", func(t *testing.T) {
		kvtest.Run(t, func(t *testing.T) kvtest.Store {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "host.db")+"?_pragma=busy_timeout(5000)&_txlock=immediate")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, err := NewKV(db)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := s.Close(); err != nil || db.Ping() != nil {
					t.Errorf("Close of a shared store closed the caller's database (%v)", err)
				}
			})
			return s
		})
	})
}

func TestKVPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kv.db")
	s, err := OpenKV(path)
	if err != nil {
		t.Fatal(err)
	}
	exp := time.UnixMilli(1_800_000_000_000)
	v, _ := expr.FromJSON([]byte(`{"b":1,"a":2}`))
	if err := s.Set(ctx, "p", "k", interp.Entry{Value: v, Expires: exp}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenKV(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, ok, err := s.Get(ctx, "p", "k")
	got, _ := expr.ToJSON(e.Value, "")
	if err != nil || !ok || string(got) != `{"b":1,"a":2}` || !e.Expires.Equal(exp) {
		t.Errorf("after reopen: %s %v %v %v", got, e.Expires, ok, err)
	}
}
