package abilities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

func TestSchedulerOps(t *testing.T) {
	s, _ := newTestSet(t)
	w, r := plugin.EffectWrite, plugin.EffectRead
	runSteps(t, s, []step{
		{op: "scheduler.create", effect: w, args: `{"tool":"a","input":{"day":"today"},"title":"每天早上","daily":"07:30"}`,
			want: `{"id":1,"tool":"a","title":"每天早上","input":{"day":"today"},"at":null,"every":null,"daily":"07:30","everyDays":null,"remaining":null,"enabled":true,"nextRun":1898897400000,"lastRun":null}`},
		{op: "scheduler.create", effect: w, args: `{"tool":"b","every":"30m"}`,
			want: `{"id":2,"tool":"b","title":"","input":{},"at":null,"every":1800,"daily":null,"everyDays":null,"remaining":null,"enabled":true,"nextRun":1898848800000,"lastRun":null}`},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","at":1898850000000}`,
			want: `{"id":3,"tool":"a","title":"","input":{},"at":1898850000000,"every":null,"daily":null,"everyDays":null,"remaining":null,"enabled":true,"nextRun":1898850000000,"lastRun":null}`},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","every":"5m"}`, isErr: true, want: "ability scheduler.create: every: 5m0s is shorter than 15m0s"},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","at":1,"daily":"07:00"}`, isErr: true,
			want: "ability scheduler.create: give exactly one of at (Unix ms), every (a duration of at least 15m) and daily (HH:mm, Beijing time)"},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","at":1}`, isErr: true, want: "ability scheduler.create: at 1 is not in the future"},
		{op: "scheduler.create", effect: w, args: `{"tool":"zz","daily":"07:00"}`, isErr: true, want: `ability scheduler.create: plugin p has no tool "zz"`},
		{op: "scheduler.create", effect: w, args: `{"tool":"pay","daily":"07:00"}`, isErr: true, want: "ability scheduler.create: tool pay is userOnly: only a person's tap runs it, never the scheduler"},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","daily":"7:00"}`, isErr: true, want: `ability scheduler.create: daily must be HH:mm (got "7:00")`},
		{plugin: "q", op: "scheduler.list", effect: r, want: `{"items":[]}`},
		{plugin: "q", op: "scheduler.remove", effect: w, args: `{"id":1}`, isErr: true, want: "ability scheduler.remove: plugin q has no schedule 1"},
		{op: "scheduler.update", effect: w, args: `{"id":2,"enabled":false}`,
			want: `{"id":2,"tool":"b","title":"","input":{},"at":null,"every":1800,"daily":null,"everyDays":null,"remaining":null,"enabled":false,"nextRun":null,"lastRun":null}`},
		{op: "scheduler.update", effect: w, args: `{"id":2,"enabled":true,"every":"1h"}`,
			want: `{"id":2,"tool":"b","title":"","input":{},"at":null,"every":3600,"daily":null,"everyDays":null,"remaining":null,"enabled":true,"nextRun":1898850600000,"lastRun":null}`},
		{op: "scheduler.remove", effect: w, args: `{"id":2}`, want: `{"removed":true,"id":2}`},
		{op: "scheduler.list", effect: r,
			want: `{"items":[{"id":1,"tool":"a","title":"每天早上","input":{"day":"today"},"at":null,"every":null,"daily":"07:30","everyDays":null,"remaining":null,"enabled":true,"nextRun":1898897400000,"lastRun":null},{"id":3,"tool":"a","title":"","input":{},"at":1898850000000,"every":null,"daily":null,"everyDays":null,"remaining":null,"enabled":true,"nextRun":1898850000000,"lastRun":null}]}`},
	})
}

func TestRunDue(t *testing.T) {
	s, clk := newTestSet(t)
	var mu sync.Mutex
	var ran []string
	s.Scheduler().SetRunner(RunnerFunc(func(_ context.Context, p, tool string, input any) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := expr.ToJSON(input, "")
		ran = append(ran, p+"."+tool+" "+string(b))
		if tool == "b" {
			return nil, errors.New("p.b needs the user's confirmation (ask)")
		}
		return obj("rooms", []any{"101"}), nil
	}))
	runSteps(t, s, []step{
		{op: "scheduler.create", args: `{"tool":"a","input":{"n":1},"daily":"18:00"}`,
			want: `{"id":1,"tool":"a","title":"","input":{"n":1},"at":null,"every":null,"daily":"18:00","everyDays":null,"remaining":null,"enabled":true,"nextRun":1898848800000,"lastRun":null}`},
		{op: "scheduler.create", args: `{"tool":"b","at":1898848000000}`,
			want: `{"id":2,"tool":"b","title":"","input":{},"at":1898848000000,"every":null,"daily":null,"everyDays":null,"remaining":null,"enabled":true,"nextRun":1898848000000,"lastRun":null}`},
	})
	tick := func(at time.Time) string {
		clk.t = at
		runs, err := s.Scheduler().RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, fmt.Sprintf("%d %s.%s ok=%v err=%q", r.Schedule, r.Plugin, r.Tool, r.OK, r.Error))
		}
		return strings.Join(out, "; ")
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{t0.Add(10 * time.Minute), ""},
		{t0.Add(20 * time.Minute), `2 p.b ok=false err="p.b needs the user's confirmation (ask)"`},
		{t0.Add(40 * time.Minute), `1 p.a ok=true err=""`},
		{t0.Add(50 * time.Minute), ""},
		{t0.Add(24*time.Hour + 31*time.Minute), `1 p.a ok=true err=""`},
	} {
		if got := tick(tc.at); got != tc.want {
			t.Errorf("at %s: ran %q, want %q", tc.at, got, tc.want)
		}
	}
	if len(ran) != 3 || ran[0] != "p.b {}" || ran[1] != `p.a {"n":1}` {
		t.Errorf("runner calls %q", ran)
	}
	runSteps(t, s, []step{
		{op: "scheduler.list", effect: plugin.EffectRead,
			want: `{"items":[{"id":1,"tool":"a","title":"","input":{"n":1},"at":null,"every":null,"daily":"18:00","everyDays":null,"remaining":null,"enabled":true,"nextRun":1899021600000,"lastRun":{"at":1898935260000,"ok":true,"result":{"rooms":["101"]},"error":null,"durationMs":0}},{"id":2,"tool":"b","title":"","input":{},"at":1898848000000,"every":null,"daily":null,"everyDays":null,"remaining":null,"enabled":false,"nextRun":null,"lastRun":{"at":1898848200000,"ok":false,"result":null,"error":"p.b needs the user's confirmation (ask)","durationMs":0}}]}`},
	})
	runs, err := s.Scheduler().Runs(context.Background(), 1, 10)
	if err != nil || len(runs) != 2 {
		t.Fatalf("kept runs of 1: %d, %v", len(runs), err)
	}
}

// Two callers racing over the same due schedule run it once.
func TestRunDueClaimsOnce(t *testing.T) {
	s, clk := newTestSet(t)
	var mu sync.Mutex
	n := 0
	s.Scheduler().SetRunner(RunnerFunc(func(context.Context, string, string, any) (any, error) {
		mu.Lock()
		n++
		mu.Unlock()
		return nil, nil
	}))
	runSteps(t, s, []step{{op: "scheduler.create", args: `{"tool":"a","every":"1h"}`,
		want: `{"id":1,"tool":"a","title":"","input":{},"at":null,"every":3600,"daily":null,"everyDays":null,"remaining":null,"enabled":true,"nextRun":1898850600000,"lastRun":null}`}})
	clk.t = t0.Add(2 * time.Hour)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Scheduler().RunDue(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n != 1 {
		t.Fatalf("ran %d times, want 1", n)
	}
	if _, err := New(s.db).Scheduler().RunDue(context.Background()); err == nil || err.Error() != "scheduler: no runner (bind the abilities to a host)" {
		t.Fatalf("no runner: %v", err)
	}
}

// TestEveryNDaysTimes is the seed's mock route "every 3 days at 09:00, 16
// times": the first run at the next 09:00, then every third day at 09:00
// (also when the host was off for a slot), and nothing after the 16th.
func TestEveryNDaysTimes(t *testing.T) {
	s, clk := newTestSet(t)
	var runs []time.Time
	s.Scheduler().SetRunner(RunnerFunc(func(context.Context, string, string, any) (any, error) {
		runs = append(runs, clk.t)
		return nil, nil
	}))
	w := plugin.EffectWrite
	runSteps(t, s, []step{
		{op: "scheduler.create", effect: w, args: `{"tool":"a","title":"背单词","daily":"09:00","everyDays":3,"times":16}`,
			want: `{"id":1,"tool":"a","title":"背单词","input":{},"at":null,"every":null,"daily":"09:00","everyDays":3,"remaining":16,"enabled":true,"nextRun":1898902800000,"lastRun":null}`},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","every":"1h","everyDays":2}`, isErr: true,
			want: "ability scheduler.create: everyDays goes with daily (HH:mm): every N days at that time"},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","at":1998902800000,"times":2}`, isErr: true,
			want: "ability scheduler.create: times goes with every or daily; a one-off (at) runs once"},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","daily":"09:00","everyDays":0}`, isErr: true,
			want: "ability scheduler.create: everyDays: 0 is out of range 1–365"},
		{op: "scheduler.create", effect: w, args: `{"tool":"a","daily":"09:00","times":1001}`, isErr: true,
			want: "ability scheduler.create: times: 1001 is out of range 1–1000"},
	})
	// Tick on every hour for 60 days; the host is off from 03-14 00:00 to 03-15 12:00.
	offFrom, offTo := time.Date(2030, 3, 14, 0, 0, 0, 0, beijing), time.Date(2030, 3, 15, 12, 0, 0, 0, beijing)
	for at := t0.Add(30 * time.Minute); at.Before(t0.Add(60 * 24 * time.Hour)); at = at.Add(time.Hour) {
		if !at.Before(offFrom) && at.Before(offTo) {
			continue
		}
		clk.t = at
		if _, err := s.Scheduler().RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var want []time.Time
	for i := range 16 {
		slot := time.Date(2030, 3, 5+3*i, 9, 0, 0, 0, beijing)
		if slot.Equal(time.Date(2030, 3, 14, 9, 0, 0, 0, beijing)) {
			slot = offTo // the missed slot runs once when the host is back, then the grid goes on
		}
		want = append(want, slot)
	}
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d: %v", len(runs), len(want), runs)
	}
	for i := range runs {
		if !runs[i].Equal(want[i]) {
			t.Errorf("run %d at %s, want %s", i, runs[i].In(beijing), want[i])
		}
	}
	sc, _, err := s.Scheduler().Get(context.Background(), 1)
	if err != nil || sc.Enabled || sc.Remaining != 0 || sc.NextRun != 0 {
		t.Errorf("after 16 runs: %+v %v", sc, err)
	}
}
