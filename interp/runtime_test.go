package interp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
	"github.com/pkuinfo/harness/lang/diag"
)

// TestRuntimeChecks covers what the validator normally refuses, so the
// interpreter must refuse it too when handed such a plugin: each
// concurrency over 4, paginate max over 30, an undeclared ability group,
// an ability op stronger than the tool, and a call to a stronger tool.
func TestRuntimeChecks(t *testing.T) {
	const head = "title: Main\ndescription: main tool\neffect: read\n"
	tests := []struct {
		name  string
		tools map[string]string
		want  string
	}{
		{"each concurrency", map[string]string{"main": head + `
steps:
  - let: rs
    each: '[1, 2]'
    concurrency: 5
    value: item
return: rs
`}, `limit: tools/main.yaml:6:5: steps[0] (let rs): each: concurrency 5, the limit is 4`},
		{"paginate max", map[string]string{"main": head + `
steps:
  - let: all
    paginate:
      request: { url: 'https://a.example.com/pages?p=0' }
      next: page.link
      items: page.items
      max: 31
return: all
`}, `limit: tools/main.yaml:6:5: steps[0] (let all): paginate: max 31 pages, the limit is 30`},
		{"ability group not declared", map[string]string{"main": head + `
steps:
  - let: c
    ability: otp.code
return: c
`}, `ability: tools/main.yaml:6:5: steps[0] (let c): ability otp.code: otp is not in abilities`},
		{"ability stronger than the tool", map[string]string{"main": head + `
steps:
  - let: c
    ability: todos.add
    args: '{ title: "x" }'
return: c
`}, `ability: tools/main.yaml:6:5: steps[0] (let c): ability todos.add: the operation is write, stronger than this read tool`},
		{"unknown ability", map[string]string{"main": head + `
steps:
  - let: c
    ability: todos.fly
return: c
`}, `ability: tools/main.yaml:6:5: steps[0] (let c): ability todos.fly: unknown ability`},
		{"call a stronger tool", map[string]string{"main": head + `
steps:
  - let: c
    call: writer
    input: '{}'
return: c
`, "writer": "title: W\ndescription: writes\neffect: write\nreturn: 1\n"},
			`input: tools/main.yaml:6:5: steps[0] (let c): call: writer is a write tool, stronger than this read tool`},
	}
	rt := testServer(t, siteHandler())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, ds := loadPluginDiags(t, tc.tools)
			if !diag.HasErrors(ds) {
				t.Logf("note: the validator accepted this plugin")
			}
			_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt, Abilities: &fakeAbilities{}})
			var e *interp.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *interp.Error", err)
			}
			if got := e.Kind + ": " + e.Error(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestCancel checks that cancelling the context stops a run promptly, in
// the middle of a request and between the items of an each.
func TestCancel(t *testing.T) {
	rt := testServer(t, siteHandler())
	p := loadPlugin(t, map[string]string{"main": `
title: Main
description: main tool
effect: read
steps:
  - let: rs
    each: range(8)
    concurrency: 4
    request: { url: https://a.example.com/slow }
return: rs
`})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := interp.Run(ctx, p, "main", nil, interp.Options{Transport: rt})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run took %v after cancel", d)
	}
	var e *interp.Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "run canceled: context canceled") {
		t.Errorf("err = %v, want a cancellation", err)
	}
}

// TestCacheSQLite runs the cache step against the persistent store: a miss
// stores the value, the next run reads it without a request, and after
// the ttl a failing request falls back to the stale value.
func TestCacheSQLite(t *testing.T) {
	kv, err := store.OpenKV(filepath.Join(t.TempDir(), "kv.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	requests := 0
	fail := false
	rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if fail {
			w.WriteHeader(500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"rooms":["101","102"]}`))
	}))
	p := loadPlugin(t, map[string]string{"main": `
title: Main
description: main tool
effect: read
steps:
  - let: rooms
    cache: { key: rooms, ttl: 10m, staleOnError: true }
    steps:
      - let: r
        request: { url: https://a.example.com/rooms }
    return: r.rooms
return: rooms
`})
	now := fixedNow
	opts := interp.Options{Transport: rt, KV: kv, Now: func() time.Time { return now }}
	run := func() string {
		v, err := interp.Run(context.Background(), p, "main", nil, opts)
		if err != nil {
			return "error " + err.Error()
		}
		return toJSON(t, v)
	}
	steps := []struct {
		advance  time.Duration
		fail     bool
		want     string
		requests int
	}{
		{0, false, `["101","102"]`, 1},
		{5 * time.Minute, false, `["101","102"]`, 1}, // fresh: no request
		{6 * time.Minute, true, `["101","102"]`, 2},  // expired, request fails: stale
		{0, true, `["101","102"]`, 3},                // the error was not cached
		{0, false, `["101","102"]`, 4},               // refreshed
		{9 * time.Minute, true, `["101","102"]`, 4},  // fresh again
	}
	for i, st := range steps {
		now = now.Add(st.advance)
		fail = st.fail
		if got := run(); got != st.want || requests != st.requests {
			t.Errorf("run %d: got %s after %d requests, want %s after %d", i, got, requests, st.want, st.requests)
		}
	}
	e, ok, _ := kv.Get(context.Background(), "test-plugin", "rooms")
	if !ok || !e.Expires.Equal(fixedNow.Add(11*time.Minute+10*time.Minute)) {
		t.Errorf("stored entry expires %v, want %v", e.Expires, fixedNow.Add(21*time.Minute))
	}
}

// BenchmarkRun measures a whole tool run: input validation, a request to
// a local https server, extract over an HTML table, each, and the result.
func BenchmarkRun(b *testing.B) {
	rt := testServer(b, siteHandler())
	p := loadPlugin(b, map[string]string{"main": `
title: Main
description: main tool
effect: read
input:
  day: { enum: [today, tomorrow], default: today }
steps:
  - let: page
    request: { url: https://a.example.com/gbk }
    as: html
  - let: rooms
    extract:
      from: page
      each: tr.r
      fields:
        name: 'td a'
        href: 'td a | attr href | url'
        seats: 'td:nth-child(2) | num'
  - let: out
    each: rooms
    value: '{ room: item.name, seats: item.seats ?? 0, day: input.day }'
return: "{ rooms: out.filter(r => r.seats > 50).sortBy('seats', 'desc') }"
`})
	opts := interp.Options{Transport: rt, KV: kvstore.NewMemory(), Now: func() time.Time { return fixedNow }}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := interp.Run(context.Background(), p, "main", nil, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEachConcurrency checks that each really runs `concurrency` items at
// once (and no more), measured by the server, with results in list order.
func TestEachConcurrency(t *testing.T) {
	for _, conc := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(conc), func(t *testing.T) {
			var inflight, peak atomic.Int32
			rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := inflight.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(40 * time.Millisecond)
				inflight.Add(-1)
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(r.URL.Query().Get("i")))
			}))
			p := loadPlugin(t, map[string]string{"main": fmt.Sprintf(`
title: Main
description: main tool
effect: read
steps:
  - let: rs
    each: range(8)
    concurrency: %d
    request: { url: 'https://a.example.com/x?i=${item}' }
return: rs
`, conc)})
			v, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt})
			if err != nil {
				t.Fatal(err)
			}
			if got := toJSON(t, v); got != "[0,1,2,3,4,5,6,7]" {
				t.Errorf("results %s, want in list order", got)
			}
			if got := peak.Load(); int(got) != conc {
				t.Errorf("peak in flight %d, want %d", got, conc)
			}
		})
	}
}

// BenchmarkRunNoNetwork measures the interpreter alone: input checks, an
// each over 50 items with a few steps each, and a result of 50 objects.
func BenchmarkRunNoNetwork(b *testing.B) {
	p := loadPlugin(b, map[string]string{"main": `
title: Main
description: main tool
effect: read
input:
  n: { type: integer, default: 50, max: 50 }
steps:
  - let: rows
    each: range(input.n)
    steps:
      - let: seats
        value: (item * 37) % 150
      - if: seats > 100
        then:
          - let: size
            value: "'large'"
        else:
          - let: size
            value: "'small'"
    return: "{ room: '二教' + (100 + item), seats, size }"
return: "{ rooms: rows.filter(r => r.seats > 20).sortBy('seats', 'desc'), total: len(rows) }"
`})
	opts := interp.Options{Now: func() time.Time { return fixedNow }}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := interp.Run(context.Background(), p, "main", nil, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOperationsJustOver finds the largest list a tool can map within the
// 100,000-operation budget and checks that one more item fails with the
// budget's error, so the limit is exact rather than approximate.
func TestOperationsJustOver(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": `
title: Main
description: main tool
effect: read
input:
  n: { type: integer }
steps:
  - let: xs
    value: range(input.n).map(i => range(20).map(j => j + i))
return: len(xs)
`})
	run := func(n int) error {
		_, err := interp.Run(context.Background(), p, "main", fromJSON(t, fmt.Sprintf(`{"n":%d}`, n)), interp.Options{})
		return err
	}
	lo, hi := 1, 10000 // each item costs dozens of operations, so the edge is below 10,000
	if run(lo) != nil || run(hi) == nil {
		t.Fatal("the budget's edge is not between 1 and 10,000 items")
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if run(mid) == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	err := run(hi)
	var e *interp.Error
	if !errors.As(err, &e) || e.Kind != interp.KindLimit || e.Msg != "expression budget exceeded (100000 operations)" {
		t.Fatalf("n=%d: err = %v, want the budget error", hi, err)
	}
	if run(lo) != nil {
		t.Fatalf("n=%d should fit", lo)
	}
	t.Logf("the largest list that fits has %d items", lo)
}

// TestBudgetCoversReplies checks that reading replies is charged to the
// operation budget (one operation per KB), so a run cannot parse
// megabytes for free: 60 replies of 2 MB would cost over 120,000.
func TestBudgetCoversReplies(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MB over loopback")
	}
	rt := testServer(t, siteHandler())
	p := loadPlugin(t, map[string]string{"main": `
title: Main
description: main tool
effect: read
steps:
  - let: rs
    each: range(50)
    request: { url: 'https://a.example.com/big?n=2097152' }
    as: text
return: len(rs)
`})
	_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt})
	var e *interp.Error
	if !errors.As(err, &e) || e.Kind != interp.KindLimit || e.Msg != "expression budget exceeded (100000 operations)" {
		t.Fatalf("err = %v, want the budget error", err)
	}
}

func TestErrorFormat(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": `
title: Main
description: main tool
effect: read
steps:
  - let: rows
    value: "{ a: 1 }"
  - let: x
    value: "'空闲' + rows.b.c"
return: x
`})
	_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{})
	var e *interp.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	const want = "tools/main.yaml:9:27: steps[1] (let x): cannot read property 'c' of null (use ?.)\n" +
		"        value: \"'空闲' + rows.b.c\"\n" +
		"                                ^"
	if got := e.Format(p.Files); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestConcurrentRuns runs one plugin from several goroutines at once, as a
// host does for different users' requests: runs share the plugin's Env and
// the transport but nothing else (try with -race).
func TestConcurrentRuns(t *testing.T) {
	rt := testServer(t, siteHandler())
	p := loadPlugin(t, map[string]string{"main": `
title: Main
description: main tool
effect: read
input:
  n: { type: integer }
steps:
  - let: page
    request: { url: https://a.example.com/gbk }
    as: html
  - let: rooms
    extract: { from: page, each: tr.r, fields: { name: 'td a', seats: 'td:nth-child(2) | num' } }
  - let: counted
    kv: set
    key: 'n${input.n}'
    value: len(rooms) * input.n
return: "{ n: input.n, counted, first: rooms[0].name }"
`})
	kv := kvstore.NewMemory()
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			v, err := interp.Run(context.Background(), p, "main", fromJSON(t, fmt.Sprintf(`{"n":%d}`, i)), interp.Options{Transport: rt, KV: kv})
			if err == nil {
				if got, want := toJSON(t, v), fmt.Sprintf(`{"n":%d,"counted":%d,"first":"二教101"}`, i, 3*i); got != want {
					err = fmt.Errorf("run %d: got %s, want %s", i, got, want)
				}
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
