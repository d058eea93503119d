package builtin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/plugin"
)

func ms(t time.Time) int64 { return t.UnixMilli() }

func TestMinutesOn(t *testing.T) {
	end := func(t time.Time) *int64 { v := ms(t); return &v }
	tests := []struct {
		name string
		list []FocusSession
		now  time.Time
		want int
	}{
		{"sums finished and running sessions of the day", []FocusSession{
			{ID: "a", Label: "高数", StartedAt: ms(bj(8, 0)), EndedAt: end(bj(8, 50))},
			{ID: "b", Label: "英语", StartedAt: ms(bj(10, 0))},
		}, bj(10, 30), 80},
		{"cuts a session that started yesterday at midnight", []FocusSession{
			{ID: "c", StartedAt: ms(bj(0, 0)) - 30*60_000, EndedAt: end(bj(0, 20))},
		}, bj(12, 0), 20},
		{"a running session is cut at the next midnight", []FocusSession{
			{ID: "d", StartedAt: ms(bj(23, 0))},
		}, bj(23, 45), 45},
		{"yesterday's sessions do not count", []FocusSession{
			{ID: "e", StartedAt: ms(bj(8, 0)) - 86_400_000, EndedAt: end(bj(9, 0).Add(-24 * time.Hour))},
		}, bj(12, 0), 0},
		{"the day is Beijing's, whatever zone now is in", []FocusSession{
			{ID: "f", StartedAt: ms(bj(7, 0)), EndedAt: end(bj(7, 30))},
		}, bj(7, 40).UTC(), 30},
		{"rounds to the nearest minute", []FocusSession{
			{ID: "g", StartedAt: ms(bj(9, 0)), EndedAt: end(bj(9, 0).Add(90 * time.Second))},
		}, bj(10, 0), 2},
		{"none", nil, bj(10, 0), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MinutesOn(tc.list, tc.now); got != tc.want {
				t.Errorf("MinutesOn = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestFocusTools(t *testing.T) {
	e := newEnv(t)
	steps := []struct {
		at            time.Time
		actor         host.Actor
		tool, input   string
		want, contain string // outcome, and a part of the result or error
	}{
		{bj(9, 0), host.ActorUser, "today", "", "ok", `"minutes":0,"running":null`},
		{bj(9, 0), host.ActorUser, "start", `{"label":"  高数  "}`, "ok", `"label":"高数"`},
		{bj(9, 1), host.ActorUser, "start", `{"label":"英语"}`, "tool", "已经有一个正在进行的专注"},
		{bj(9, 30), host.ActorAgent, "today", "", "ok", `"minutes":30`},
		{bj(9, 30), host.ActorUser, "today", "", "ok", `"running":{"label":"高数"`},
		// write tools of an Official built-in start at ask: the agent is asked, the scheduler refused.
		{bj(9, 40), host.ActorAgent, "stop", "", "confirm", ""},
		{bj(9, 40), host.ActorScheduler, "stop", "", "refused", "cannot ask"},
		{bj(9, 45), host.ActorUser, "stop", "", "ok", `"minutes":45`},
		{bj(9, 46), host.ActorUser, "stop", "", "ok", `"stopped":false`},
		{bj(10, 0), host.ActorUser, "today", "", "ok", `"minutes":45,"running":null`},
		// The input is checked by the host, before the function, for every actor.
		{bj(10, 0), host.ActorUser, "start", `{"label":"` + strings.Repeat("长", 41) + `"}`, "input", "input.label"},
		{bj(10, 0), host.ActorAgent, "start", `{"label":3}`, "input", "input.label"},
		{bj(10, 0), host.ActorUser, "start", `{"lable":"x"}`, "input", "unknown field"},
		{bj(10, 0), host.ActorUser, "start", `[1]`, "input", "must be an object"},
		{bj(10, 0), host.ActorUser, "nope", "", "host: plugin focus has no tool \"nope\"", ""},
	}
	for i, s := range steps {
		e.clk.set(s.at)
		res, err := e.call(t, s.actor, "focus", s.tool, s.input)
		got := outcome(res, err)
		if got != s.want {
			t.Fatalf("step %d %s %s as %s: outcome %q (%v), want %q", i, s.tool, s.input, s.actor, got, err, s.want)
		}
		text := ""
		if err != nil {
			text = err.Error()
		} else if res.Value != nil {
			text = jsonOf(t, res.Value)
		}
		if !strings.Contains(text, s.contain) {
			t.Errorf("step %d %s: %s does not contain %s", i, s.tool, text, s.contain)
		}
	}
	// Deny refuses every actor, the user too.
	if err := e.h.SetMode(context.Background(), "focus", plugin.EffectWrite, host.ModeDeny); err != nil {
		t.Fatal(err)
	}
	if got := outcome(e.call(t, host.ActorUser, "focus", "start", "")); got != "refused" {
		t.Errorf("start with write denied: %s, want refused", got)
	}
	// Every call was audited, refusals included.
	var n int
	if err := e.db.SQL.QueryRow(`SELECT COUNT(*) FROM audit WHERE plugin = 'focus'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < len(steps) {
		t.Errorf("audit has %d focus rows, want at least %d", n, len(steps))
	}
}

func TestFocusCommand(t *testing.T) {
	e := newEnv(t)
	text, shown, err := RunCommand(context.Background(), e.h, "focus", "focus", "高数", "en")
	if err != nil || !shown || text != "Focusing on 高数" {
		t.Fatalf("/focus 高数 = %q %v %v", text, shown, err)
	}
	e.clk.set(bj(10, 0))
	text, _, err = RunCommand(context.Background(), e.h, "focus", "focus", "", "zh-Hans")
	if err != nil || text != "今日专注 60 分钟\n正在专注:高数" {
		t.Fatalf("/focus = %q %v", text, err)
	}
	if _, _, err := RunCommand(context.Background(), e.h, "focus", "nope", "", "en"); err == nil {
		t.Error("an unknown command ran")
	}
}
