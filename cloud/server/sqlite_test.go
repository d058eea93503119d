package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
)

func openTestSQLite(t testing.TB) *SQLite {
	st, err := OpenSQLite(context.Background(), t.TempDir()+"/cloud.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// checkUsage compares store_usage, kept by triggers, with a count of store_values.
func checkUsage(t *testing.T, st *SQLite) {
	t.Helper()
	rows, err := st.db.Query(`SELECT u.device, u.plugin, u.n, u.bytes,
		(SELECT COUNT(*) FROM store_values v WHERE v.device = u.device AND v.plugin = u.plugin),
		(SELECT COALESCE(SUM(size), 0) FROM store_values v WHERE v.device = u.device AND v.plugin = u.plugin)
		FROM store_usage u`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var d, p string
		var n, b, wn, wb int64
		if err := rows.Scan(&d, &p, &n, &b, &wn, &wb); err != nil {
			t.Fatal(err)
		}
		if n != wn || b != wb {
			t.Errorf("store_usage %s/%s: %d keys %d bytes, store_values has %d keys %d bytes", d, p, n, b, wn, wb)
		}
	}
}

// TestSQLiteStoreUsage: the quota counters follow puts, replacements, deletes, expiry, Sweep,
// DeleteDevice and a reopen; a namespace whose counter is inflated by expired rows still takes
// puts up to the live limit.
func TestSQLiteStoreUsage(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/cloud.db"
	st, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateDevice(ctx, Device{ID: "d1", SignPub: "s", BoxPub: "b"}); err != nil {
		t.Fatal(err)
	}
	ns := Namespace{"d1", "p"}
	q := StoreQuota{StoreLimits: protocol.StoreLimits{MaxKeys: 3, MaxBytes: 1000, MaxValueBytes: 100}}
	put := func(k, v string, exp int64, now int64) error {
		_, err := st.StorePut(ctx, ns, StoreItem{Key: k, Value: []byte(v), ExpiresAt: exp}, nil, q, now)
		return err
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := put(k, `"x"`, 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := put("a", `"longer"`, 0, 2); err != nil {
		t.Fatal(err)
	}
	var qe *QuotaError
	if err := put("d", `1`, 0, 3); !errors.As(err, &qe) {
		t.Fatalf("4th key: %v", err)
	}
	checkUsage(t, st)
	if err := st.StoreDelete(ctx, ns, "b", 4); err != nil {
		t.Fatal(err)
	}
	if err := put("e", `1`, 10, 5); err != nil { // expires at 10
		t.Fatal(err)
	}
	checkUsage(t, st)
	// At 20 "e" has expired but is still counted in store_usage: "f" must fit by the exact count.
	if err := put("f", `1`, 0, 20); err != nil {
		t.Fatalf("put over an expired key: %v", err)
	}
	if err := put("g", `1`, 0, 20); !errors.As(err, &qe) {
		t.Fatalf("4th live key: %v", err)
	}
	if err := st.Sweep(ctx, 20); err != nil {
		t.Fatal(err)
	}
	checkUsage(t, st)
	st.Close()
	if st, err = OpenSQLite(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkUsage(t, st)
	if _, err := st.DeleteDevice(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	var n int
	st.db.QueryRow(`SELECT COUNT(*) FROM store_usage`).Scan(&n)
	if n != 0 {
		t.Errorf("store_usage keeps %d rows after DeleteDevice", n)
	}
}

// TestSQLiteIfMatchRace: concurrent create-only puts of one key, and concurrent puts all
// matching the same version, each have exactly one winner; versions only grow.
func TestSQLiteIfMatchRace(t *testing.T) {
	ctx := context.Background()
	st := openTestSQLite(t)
	ns := Namespace{"d1", "p"}
	q := StoreQuota{StoreLimits: protocol.DefaultLimits().Store, Device: DefaultDeviceStore}
	race := func(ifMatch int64) int64 {
		var wins atomic.Int64
		var won atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := st.StorePut(ctx, ns, StoreItem{Key: "k", Value: []byte(`1`)}, &ifMatch, q, 1)
				switch {
				case err == nil:
					wins.Add(1)
					won.Store(v)
				case !errors.Is(err, ErrConflict):
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("If-Match %d: %d winners", ifMatch, wins.Load())
		}
		return won.Load()
	}
	v := race(0)
	for range 5 {
		nv := race(v)
		if nv <= v {
			t.Fatalf("version went from %d to %d", v, nv)
		}
		v = nv
	}
	if err := st.StoreDelete(ctx, ns, "k", 2); err != nil {
		t.Fatal(err)
	}
	if nv := race(0); nv <= v {
		t.Fatalf("after delete the version went from %d to %d", v, nv)
	}
}

// BenchmarkSQLiteStore is the store alone on a database file: parallel puts (8 namespaces of
// 50 keys, 100-byte values) and parallel gets of those keys.
func BenchmarkSQLiteStore(b *testing.B) {
	ctx := context.Background()
	value := []byte(`{"v":"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"}`)
	q := StoreQuota{StoreLimits: protocol.DefaultLimits().Store, Device: DefaultDeviceStore}
	var worker atomic.Int64
	b.Run("put", func(b *testing.B) {
		st := openTestSQLite(b)
		b.ReportAllocs()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			w := worker.Add(1)
			ns := Namespace{fmt.Sprintf("d%d", w%8), "bench"}
			for i := 0; pb.Next(); i++ {
				if _, err := st.StorePut(ctx, ns, StoreItem{Key: fmt.Sprintf("k%d", i%50), Value: value}, nil, q, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("get", func(b *testing.B) {
		st := openTestSQLite(b)
		for d := range 8 {
			for k := range 50 {
				if _, err := st.StorePut(ctx, Namespace{fmt.Sprintf("d%d", d), "bench"}, StoreItem{Key: fmt.Sprintf("k%d", k), Value: value}, nil, q, 1); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportAllocs()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			w := worker.Add(1)
			ns := Namespace{fmt.Sprintf("d%d", w%8), "bench"}
			for i := 0; pb.Next(); i++ {
				if _, err := st.StoreGet(ctx, ns, fmt.Sprintf("k%d", i%50), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
