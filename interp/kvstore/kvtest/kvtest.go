// Package kvtest is the one conformance suite of interp.KV stores: every
// implementation (kvstore.Memory, the host's SQLite store) runs Run, so that
// they agree on JSON round trips, the per-plugin quota, refused values,
// concurrent writers and housekeeping.
package kvtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
)

// Run runs the suite against stores made by open (a fresh, empty store per
// subtest; open registers its own cleanup).
func Run(t *testing.T, open func(*testing.T) Store) {
	t.Run("round trip", func(t *testing.T) { roundTrip(t, open) })
	t.Run("quota", func(t *testing.T) { quota(t, open) })
	t.Run("node refused", func(t *testing.T) { nodeRefused(t, open) })
	t.Run("concurrent quota", func(t *testing.T) { concurrentQuota(t, open) })
	t.Run("housekeeping", func(t *testing.T) { housekeeping(t, open) })
}

// each runs f on one fresh store.
func each(t *testing.T, open func(*testing.T) Store, f func(t *testing.T, kv Store)) {
	t.Helper()
	f(t, open(t))
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

// Store is what the suite needs of a KV: interp.KV and the host's housekeeping.
type Store = interface {
	interp.KV
	Usage(context.Context, string) (int, error)
	DeletePlugin(context.Context, string) error
	PurgeExpired(context.Context, time.Time) (int, error)
}

func roundTrip(t *testing.T, open func(*testing.T) Store) {
	ctx := context.Background()
	exp := time.UnixMilli(1_700_000_000_123)
	each(t, open, func(t *testing.T, kv Store) {
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

func quota(t *testing.T, open func(*testing.T) Store) {
	ctx := context.Background()
	each(t, open, func(t *testing.T, kv Store) {
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

func nodeRefused(t *testing.T, open func(*testing.T) Store) {
	each(t, open, func(t *testing.T, kv Store) {
		err := kv.Set(context.Background(), "p", "n", interp.Entry{Value: &expr.Node{}})
		if err == nil || !strings.Contains(err.Error(), "htmlText") {
			t.Errorf("storing a node: err = %v, want one mentioning htmlText", err)
		}
	})
}

func concurrentQuota(t *testing.T, open func(*testing.T) Store) {
	ctx := context.Background()
	each(t, open, func(t *testing.T, kv Store) {
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

func housekeeping(t *testing.T, open func(*testing.T) Store) {
	ctx := context.Background()
	base := time.UnixMilli(1_700_000_000_000)
	each(t, open, func(t *testing.T, kv Store) {
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
