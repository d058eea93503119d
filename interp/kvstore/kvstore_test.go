package kvstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
)

// stores runs one suite against both implementations.
func stores(t *testing.T, run func(t *testing.T, kv store)) {
	t.Run("memory", func(t *testing.T) { run(t, NewMemory()) })
	t.Run("sqlite", func(t *testing.T) {
		s, err := OpenSQLite(filepath.Join(t.TempDir(), "kv.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		run(t, s)
	})
	t.Run("shared", func(t *testing.T) {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "host.db")+"?_pragma=busy_timeout(5000)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := NewSQLite(db)
		if err != nil {
			t.Fatal(err)
		}
		run(t, s)
		if err := s.Close(); err != nil || db.Ping() != nil {
			t.Fatalf("Close of a shared store closed the caller's database (%v)", err)
		}
	})
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := expr.FromJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := expr.ToJSON(v, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type store = interface {
	interp.KV
	Usage(context.Context, string) (int, error)
	DeletePlugin(context.Context, string) error
	PurgeExpired(context.Context, time.Time) (int, error)
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	exp := time.UnixMilli(1_700_000_000_123)
	stores(t, func(t *testing.T, kv store) {
		tests := []struct {
			key, json string
			expires   time.Time
		}{
			{"a", `{"z":1,"a":[true,null,"x"],"m":{"b":2.5}}`, time.Time{}},
			{"b", `"文字"`, exp},
			{"", `null`, time.Time{}},
			{"n", `-3`, time.UnixMilli(0)},
		}
		for _, tc := range tests {
			if err := kv.Set(ctx, "p", tc.key, interp.Entry{Value: mustJSON(t, tc.json), Expires: tc.expires}); err != nil {
				t.Fatalf("Set(%q): %v", tc.key, err)
			}
		}
		for _, tc := range tests {
			e, ok, err := kv.Get(ctx, "p", tc.key)
			if err != nil || !ok {
				t.Fatalf("Get(%q) = %v, %v", tc.key, ok, err)
			}
			if got := toJSON(t, e.Value); got != tc.json {
				t.Errorf("Get(%q) value = %s, want %s", tc.key, got, tc.json)
			}
			if e.Expires.IsZero() != tc.expires.IsZero() || (!tc.expires.IsZero() && !e.Expires.Equal(tc.expires) && tc.expires.UnixMilli() != 0) {
				t.Errorf("Get(%q) expires = %v, want %v", tc.key, e.Expires, tc.expires)
			}
		}
		if e, _, _ := kv.Get(ctx, "p", "n"); !e.Expired(time.Now()) {
			t.Errorf("entry expiring at the epoch is not expired: %v", e.Expires)
		}
		if _, ok, err := kv.Get(ctx, "other", "a"); ok || err != nil {
			t.Errorf("Get from another plugin = %v, %v; want nothing", ok, err)
		}
		if err := kv.Delete(ctx, "p", "a"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := kv.Get(ctx, "p", "a"); ok {
			t.Error("Get after Delete found the entry")
		}
		if err := kv.Delete(ctx, "p", "missing"); err != nil {
			t.Errorf("Delete(missing) = %v", err)
		}
	})
}

func TestQuota(t *testing.T) {
	ctx := context.Background()
	stores(t, func(t *testing.T, kv store) {
		// "k0".."k3" each hold a 64 KB string: key (2) + quotes (2) + 65,530 = 65,534 bytes.
		big := strings.Repeat("x", 65530)
		for i := range 4 {
			if err := kv.Set(ctx, "p", fmt.Sprint("k", i), interp.Entry{Value: big}); err != nil {
				t.Fatalf("Set k%d: %v", i, err)
			}
		}
		used, _ := kv.Usage(ctx, "p")
		if used != 4*65534 {
			t.Fatalf("Usage = %d, want %d", used, 4*65534)
		}
		// 262,136 used; 8 bytes left. "k4" + `"abc"` is 7 bytes: fits.
		if err := kv.Set(ctx, "p", "k4", interp.Entry{Value: "abc"}); err != nil {
			t.Fatalf("Set k4 (exactly fits): %v", err)
		}
		// Growing k4 by 2 bytes goes over by one.
		err := kv.Set(ctx, "p", "k4", interp.Entry{Value: "abcde"})
		if !errors.Is(err, interp.ErrQuota) {
			t.Fatalf("Set over quota = %v, want ErrQuota", err)
		}
		const wantMsg = `kv: writing "k4" would use 262145 bytes in all, the limit is 256 KB`
		if err.Error() != wantMsg {
			t.Errorf("error = %q\nwant    %q", err, wantMsg)
		}
		if e, _, _ := kv.Get(ctx, "p", "k4"); e.Value != "abc" {
			t.Errorf("after refused write k4 = %v, want the old value abc", e.Value)
		}
		// Another plugin has its own quota.
		if err := kv.Set(ctx, "q", "k0", interp.Entry{Value: big}); err != nil {
			t.Errorf("other plugin: %v", err)
		}
		// Expired entries still count; deleting frees space.
		if err := kv.Delete(ctx, "p", "k0"); err != nil {
			t.Fatal(err)
		}
		if err := kv.Set(ctx, "p", "k4", interp.Entry{Value: "abcde"}); err != nil {
			t.Errorf("after Delete: %v", err)
		}
		// Overwriting a value with one of the same size never trips the quota.
		if err := kv.Set(ctx, "p", "k1", interp.Entry{Value: strings.Repeat("y", 65530)}); err != nil {
			t.Errorf("same-size overwrite: %v", err)
		}
	})
}

func TestNodeRefused(t *testing.T) {
	stores(t, func(t *testing.T, kv store) {
		err := kv.Set(context.Background(), "p", "n", interp.Entry{Value: &expr.Node{}})
		if err == nil || !strings.Contains(err.Error(), "htmlText") {
			t.Errorf("storing a node: err = %v, want one mentioning htmlText", err)
		}
	})
}

func TestConcurrentQuota(t *testing.T) {
	ctx := context.Background()
	stores(t, func(t *testing.T, kv store) {
		// 8 writers race to store 40 KB each; at most 6 fit in 256 KB.
		val := strings.Repeat("z", 40*1024)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if kv.Set(ctx, "p", fmt.Sprint("key", i), interp.Entry{Value: val}) == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		used, _ := kv.Usage(ctx, "p")
		if ok != 6 || used > interp.KVQuota {
			t.Errorf("%d writes succeeded using %d bytes; want 6 within %d", ok, used, interp.KVQuota)
		}
	})
}

func TestSQLitePersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kv.db")
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	exp := time.UnixMilli(1_800_000_000_000)
	if err := s.Set(ctx, "p", "k", interp.Entry{Value: mustJSON(t, `{"b":1,"a":2}`), Expires: exp}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, ok, err := s.Get(ctx, "p", "k")
	if err != nil || !ok || toJSON(t, e.Value) != `{"b":1,"a":2}` || !e.Expires.Equal(exp) {
		t.Errorf("after reopen: %v %v %v %v", toJSON(t, e.Value), e.Expires, ok, err)
	}
}

func TestHousekeeping(t *testing.T) {
	ctx := context.Background()
	base := time.UnixMilli(1_700_000_000_000)
	stores(t, func(t *testing.T, kv store) {
		set := func(plugin, key string, exp time.Time) {
			if err := kv.Set(ctx, plugin, key, interp.Entry{Value: "v", Expires: exp}); err != nil {
				t.Fatal(err)
			}
		}
		set("p", "never", time.Time{})
		set("p", "old", base.Add(-48*time.Hour))
		set("p", "recent", base.Add(-time.Hour))
		set("q", "old", base.Add(-72*time.Hour))
		set("q", "fresh", base.Add(time.Hour))
		n, err := kv.PurgeExpired(ctx, base.Add(-24*time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("PurgeExpired = %d, %v; want 2", n, err)
		}
		for _, k := range []struct {
			plugin, key string
			want        bool
		}{{"p", "never", true}, {"p", "old", false}, {"p", "recent", true}, {"q", "old", false}, {"q", "fresh", true}} {
			if _, ok, _ := kv.Get(ctx, k.plugin, k.key); ok != k.want {
				t.Errorf("%s/%s present = %v, want %v", k.plugin, k.key, ok, k.want)
			}
		}
		if used, _ := kv.Usage(ctx, "p"); used != len("never")+3+len("recent")+3 {
			t.Errorf("usage after purge = %d", used)
		}
		if err := kv.DeletePlugin(ctx, "p"); err != nil {
			t.Fatal(err)
		}
		if used, _ := kv.Usage(ctx, "p"); used != 0 {
			t.Errorf("usage after DeletePlugin = %d", used)
		}
		if _, ok, _ := kv.Get(ctx, "q", "fresh"); !ok {
			t.Error("DeletePlugin removed another plugin's entry")
		}
	})
}
