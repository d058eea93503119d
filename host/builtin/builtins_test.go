package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/plugin"
)

// step is one call of a built-in's table test: at a fixed time, as an
// actor, with a JSON input; want is the outcome ("ok", "confirm",
// "refused", "input", "tool", "ability") and contain a part of the result's
// JSON or of the error.
type step struct {
	at            time.Time
	actor         host.Actor
	tool, input   string
	want, contain string
}

func runSteps(t *testing.T, e *env, id string, steps []step) {
	t.Helper()
	for i, s := range steps {
		if !s.at.IsZero() {
			e.clk.set(s.at)
		}
		if s.actor == "" {
			s.actor = host.ActorUser
		}
		res, err := e.call(t, s.actor, id, s.tool, s.input)
		got := outcome(res, err)
		if got != s.want {
			t.Fatalf("%s step %d %s %s as %s: outcome %q (%v), want %q", id, i, s.tool, s.input, s.actor, got, err, s.want)
		}
		text := ""
		switch {
		case err != nil:
			text = err.Error()
		case res.Confirmation != nil:
			text = res.Confirmation.Reason
		default:
			text = jsonOf(t, res.Value)
		}
		if !strings.Contains(text, s.contain) {
			t.Errorf("%s step %d %s: %s\ndoes not contain %s", id, i, s.tool, text, s.contain)
		}
	}
}

// installDoc installs a community PLUGIN.md document from files.
func installDoc(t *testing.T, e *env, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	if err := writeFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rv, err := e.h.Review(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.h.Install(ctx, dir, rv.Hash); err != nil {
		t.Fatal(err)
	}
}

// homework is a community document that adds a to-do through the todos
// ability, as the assistant's document plugins do.
var homework = map[string]string{
	"PLUGIN.md": `---
spec: 1
id: homework
name: 作业
description: 把作业加进待办。
version: 1.0.0
author: someone
abilities: [todos]
tools:
  add: tools/add.yaml
i18n:
  en: { name: Homework, description: Adds homework to the to-dos., tools: { add: { title: Add homework } } }
---
`,
	"tools/add.yaml": `title: 加作业
description: Adds homework.
effect: write
input:
  title: { type: string }
steps:
  - let: t
    ability: todos.add
    args: "{ title: input.title }"
return: t
`,
}

func TestTodosTools(t *testing.T) {
	e := newEnv(t)
	installDoc(t, e, homework)
	// The document's to-do is in the same list.
	if _, err := e.call(t, host.ActorUser, "homework", "add", `{"title":"物理作业"}`); err != nil {
		t.Fatal(err)
	}
	runSteps(t, e, "todos", []step{
		{at: bj(9, 0), tool: "list", want: "ok", contain: `"title":"物理作业","notes":"","due":null,"done":false,"source":"homework"`},
		{tool: "add", input: `{"title":" 交高数作业 ","due":"2026-10-22 18:00"}`, want: "ok", contain: `"id":2,"title":"交高数作业","notes":"","due":1792663200000`},
		{tool: "add", input: `{"title":"还书","due":"2026-10-23"}`, want: "ok", contain: `"due":1792771140000`},
		{tool: "list", input: `{"done":false}`, want: "ok", contain: `"title":"交高数作业"`},
		// The app's list ticks off another plugin's to-do.
		{tool: "done", input: `{"id":1}`, want: "ok", contain: `"done":true,"source":"homework"`},
		{tool: "list", input: `{"done":true}`, want: "ok", contain: `"物理作业"`},
		{tool: "done", input: `{"id":1,"done":false}`, want: "ok", contain: `"done":false`},
		{tool: "update", input: `{"id":2,"due":""}`, want: "ok", contain: `"due":null`},
		{tool: "update", input: `{"id":2,"title":"交高数作业(第三章)"}`, want: "ok", contain: `"title":"交高数作业(第三章)"`},
		{tool: "remove", input: `{"id":3}`, want: "ok", contain: `"removed":true`},
		{tool: "remove", input: `{"id":99}`, want: "ability", contain: "no to-do 99"},
		// Refusals: write tools ask the agent and are refused to the scheduler; reads run for both.
		{actor: host.ActorAgent, tool: "add", input: `{"title":"x"}`, want: "confirm", contain: "write tools of this plugin are set to ask"},
		{actor: host.ActorScheduler, tool: "done", input: `{"id":1}`, want: "refused", contain: "cannot ask"},
		{actor: host.ActorAgent, tool: "list", want: "ok", contain: `"items"`},
		{actor: host.ActorScheduler, tool: "list", want: "ok", contain: `"items"`},
		// Input checked before the function.
		{tool: "add", input: `{"title":""}`, want: "input", contain: "input.title"},
		{tool: "add", input: `{"title":"x","due":"明天"}`, want: "tool", contain: "is not a time"},
		{tool: "done", input: `{"id":0}`, want: "input", contain: "input.id"},
		{tool: "list", input: `{"limit":500}`, want: "input", contain: "input.limit"},
	})
	// The document sees the app's to-dos too, but changes only its own.
	set := e.set
	v, err := set.Call(context.Background(), abilityCall("homework", "todos", "list", nil))
	if err != nil || !strings.Contains(jsonOf(t, v), "交高数作业") {
		t.Errorf("homework lists %s %v", jsonOf(t, v), err)
	}
	if _, err := set.Call(context.Background(), abilityCall("homework", "todos", "setDone", map[string]any{"id": 2})); err == nil ||
		!strings.Contains(err.Error(), "a plugin changes only its own to-dos") {
		t.Errorf("a document changed the app's to-do: %v", err)
	}
}

func TestTimetableTools(t *testing.T) {
	e := newEnv(t)
	// 2026-10-21 is a Wednesday (weekday 3); term starts Monday 2026-09-07, so it is week 7.
	runSteps(t, e, "timetable", []step{
		{at: bj(10, 30), tool: "today", want: "ok", contain: `"date":"2026-10-21","weekday":3,"week":null,"courses":[]`},
		{tool: "setTerm", input: `{"start":"2026-09-08"}`, want: "tool", contain: "week 1 starts on a Monday"},
		{tool: "setTerm", input: `{"start":"2026-09-07"}`, want: "ok", contain: `"start":"2026-09-07"`},
		{tool: "add", input: `{"title":"高等数学","weekday":3,"periods":"3-4","location":"理教 107"}`, want: "ok",
			contain: `"title":"高等数学","weekday":3,"start":"10:10","end":"12:00","location":"理教 107"`},
		{tool: "add", input: `{"title":"英语","weekday":3,"start":"13:00","end":"14:50","weeks":[1,3,5,7]}`, want: "ok", contain: `"periods":"5-6"`},
		{tool: "add", input: `{"title":"体育","weekday":3,"periods":"7-8","weeks":[2,4]}`, want: "ok", contain: `"weeks":[2,4]`},
		{tool: "add", input: `{"title":"物理","weekday":1,"start":"08:00","end":"09:40"}`, want: "ok", contain: `"weeks":[],"source":"timetable"}`},
		{tool: "today", want: "ok", contain: `"week":7`},
		// Week 7: 高数 runs now, 英语 is next, 体育 (weeks 2 and 4) is not on.
		{tool: "today", want: "ok", contain: `"current":"`},
		{tool: "week", want: "ok", contain: `"week":7,"days":[{"weekday":1,"date":1792339200000,"courses":[{"id":"`},
		{tool: "week", input: `{"week":2}`, want: "ok", contain: `"title":"体育"`},
		{tool: "today", input: `{"date":"2026-10-19"}`, want: "ok", contain: `"title":"物理"`},
		{tool: "add", input: `{"title":"x","weekday":8,"periods":"1"}`, want: "input", contain: "input.weekday"},
		{tool: "add", input: `{"title":"x","weekday":1,"periods":"11-13"}`, want: "tool", contain: "periods run 1–12"},
		{tool: "add", input: `{"title":"x","weekday":1,"periods":"1","start":"08:00"}`, want: "tool", contain: "not both"},
		{tool: "add", input: `{"title":"x","weekday":1}`, want: "tool", contain: "give periods"},
		{tool: "add", input: `{"title":"x","weekday":1,"periods":"1","weeks":[31]}`, want: "tool", contain: "weeks[0]"},
		{tool: "remove", input: `{"id":"nope"}`, want: "tool", contain: "no course"},
		{actor: host.ActorAgent, tool: "add", input: `{"title":"x","weekday":1,"periods":"1"}`, want: "confirm", contain: "ask"},
		{actor: host.ActorScheduler, tool: "setTerm", input: `{"start":"2026-09-07"}`, want: "refused", contain: "cannot ask"},
		{actor: host.ActorAgent, tool: "week", want: "ok", contain: `"week":7`},
	})
	day := e.ok(t, host.ActorUser, "timetable", "today", "")
	if strings.Contains(day, "体育") || !strings.Contains(day, "英语") {
		t.Errorf("week 7 of Wednesday: %s", day)
	}
	var got TimetableDay
	if err := jsonInto(day, &got); err != nil {
		t.Fatal(err)
	}
	if got.Current == nil || got.Next == nil || got.Courses[0].Title != "高等数学" || *got.Current != got.Courses[0].ID || *got.Next != got.Courses[1].ID {
		t.Errorf("current and next: %s", day)
	}
}

func TestPeriodsAndWeeks(t *testing.T) {
	for _, tc := range []struct{ start, end, want string }{
		{"08:00", "08:50", "1"}, {"10:10", "12:00", "3-4"}, {"18:40", "21:30", "10-12"}, {"08:00", "09:40", ""}, {"13:00", "08:50", ""},
	} {
		if got := PeriodsOf(tc.start, tc.end); got != tc.want {
			t.Errorf("PeriodsOf(%s, %s) = %q, want %q", tc.start, tc.end, got, tc.want)
		}
	}
	for _, bad := range []string{"0", "13", "4-3", "a", "1-2-3", ""} {
		if _, _, err := ParsePeriods(bad); err == nil {
			t.Errorf("ParsePeriods(%q) took it", bad)
		}
	}
	start := time.Date(2026, 9, 7, 0, 0, 0, 0, bj(0, 0).Location())
	for _, tc := range []struct {
		at   time.Time
		want int
	}{
		{start.Add(-time.Minute), 0}, {start, 1}, {start.AddDate(0, 0, 6).Add(23 * time.Hour), 1}, {start.AddDate(0, 0, 7), 2},
		{bj(10, 0), 7}, {start.AddDate(0, 0, 7*30), 0},
	} {
		if got := WeekOf(start, tc.at); got != tc.want {
			t.Errorf("WeekOf(%s) = %d, want %d", tc.at, got, tc.want)
		}
	}
}

func TestScheduleTools(t *testing.T) {
	e := newEnv(t)
	runSteps(t, e, "schedule", []step{
		{at: bj(8, 0), tool: "list", want: "ok", contain: `{"items":[]}`},
		// The seed's mock route: every 3 days at 09:00, 16 times.
		{actor: host.ActorAgent, tool: "remind", input: `{"text":"背单词","daily":"09:00","everyDays":3,"times":16}`, want: "ok",
			contain: `"text":"背单词","at":null,"daily":"09:00","everyDays":3,"remaining":16,"enabled":true,"nextRun":1792544400000`},
		{tool: "remind", input: `{"text":"交作业","at":"2026-10-21 20:00"}`, want: "ok", contain: `"at":1792584000000`},
		{tool: "remind", input: `{"text":"早起","daily":"07:00"}`, want: "ok", contain: `"nextRun":1792623600000`},
		{tool: "list", want: "ok", contain: `{"items":[{"id":1,"text":"背单词"`},
		{tool: "remind", input: `{"text":"x"}`, want: "tool", contain: "give at"},
		{tool: "remind", input: `{"text":"x","at":"2026-10-21 20:00","daily":"07:00"}`, want: "tool", contain: "not both"},
		{tool: "remind", input: `{"text":"x","at":"2026-10-21 07:00"}`, want: "tool", contain: "not in the future"},
		{tool: "remind", input: `{"text":"x","at":"2026-10-22 07:00","times":3}`, want: "tool", contain: "goes off once"},
		{tool: "remind", input: `{"text":"x","daily":"7:00"}`, want: "input", contain: "input.daily"},
		{tool: "remind", input: `{"text":"x","daily":"07:00","times":0}`, want: "input", contain: "input.times"},
		{tool: "cancel", input: `{"id":3}`, want: "ok", contain: `"cancelled":true`},
		{tool: "cancel", input: `{"id":3}`, want: "ability", contain: "no schedule 3"},
		{tool: "recent", want: "ok", contain: `{"items":[]}`},
		{actor: host.ActorAgent, tool: "fire", input: `{"text":"假提醒"}`, want: "tool", contain: "by the scheduler"},
	})
	// The scheduler runs fire at the reminder's time, as the scheduler actor.
	sched := e.set.Scheduler()
	sched.SetRunner(abilities.RunnerFunc(func(ctx context.Context, p, tool string, input any) (any, error) {
		return e.h.RunTool(ctx, host.ActorScheduler, p, tool, input)
	}))
	e.clk.set(bj(9, 0))
	runs, err := sched.RunDue(context.Background())
	if err != nil || len(runs) != 1 || !runs[0].OK {
		t.Fatalf("runs at 09:00: %+v %v", runs, err)
	}
	recent := e.ok(t, host.ActorUser, "schedule", "recent", "")
	if !strings.Contains(recent, `"text":"背单词","at":1792544400000`) {
		t.Errorf("recent after 09:00: %s", recent)
	}
	list := e.ok(t, host.ActorUser, "schedule", "list", "")
	if !strings.Contains(list, `"remaining":15,"enabled":true,"nextRun":1792803600000`) {
		t.Errorf("after the first run: %s", list)
	}
	// Deny refuses every actor: the user's remind, and the scheduler's fire.
	if err := e.h.SetMode(context.Background(), "schedule", plugin.EffectWrite, host.ModeDeny); err != nil {
		t.Fatal(err)
	}
	if got := outcome(e.call(t, host.ActorUser, "schedule", "remind", `{"text":"x","daily":"07:00"}`)); got != "refused" {
		t.Errorf("remind with write denied: %s", got)
	}
	e.clk.set(bj(9, 0).AddDate(0, 0, 3))
	if runs, err := sched.RunDue(context.Background()); err != nil || len(runs) == 0 || runs[0].OK || !strings.Contains(runs[0].Error, "set to deny") {
		t.Errorf("a due reminder with write denied: %+v %v", runs, err)
	}
	// fire is offered to the agent only on demand.
	tools, err := e.h.AgentTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range tools {
		if at.Name == "schedule__fire" && !at.OnDemand {
			t.Error("schedule__fire is offered to the agent up front")
		}
	}
}

func TestAuthenticatorTools(t *testing.T) {
	e := newEnv(t)
	uri := "otpauth://totp/iaaa.pku.edu.cn:2100012345?secret=JBSWY3DPEHPK3PXPJBSWY3DP&issuer=iaaa.pku.edu.cn"
	runSteps(t, e, "authenticator", []step{
		{at: time.Unix(1_800_000_010, 0), tool: "code", want: "ok", contain: `{"set":false,"code":null,"secondsLeft":0,"validUntil":null}`},
		{tool: "status", want: "ok", contain: `{"set":false}`},
		// Binding a credential is a person's own act: refused to the agent and the scheduler.
		{actor: host.ActorAgent, tool: "set", input: `{"uri":"` + uri + `"}`, want: "refused", contain: "userOnly"},
		{actor: host.ActorScheduler, tool: "set", input: `{"uri":"` + uri + `"}`, want: "refused", contain: "userOnly"},
		{tool: "set", input: `{"uri":"otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1"}`, want: "tool", contain: "not totp"},
		{tool: "set", input: `{"uri":"otpauth://totp/x?issuer=y&foo=bar"}`, want: "tool", contain: "otp secret"},
		{tool: "set", input: `{"uri":"short"}`, want: "input", contain: "input.uri"},
		{tool: "set", input: `{"uri":"` + uri + `"}`, want: "ok", contain: `{"set":true,"account":"iaaa.pku.edu.cn:2100012345"}`},
		{tool: "code", want: "ok", contain: `"secondsLeft":20,"validUntil":1800000030000`},
		{actor: host.ActorAgent, tool: "status", want: "ok", contain: `{"set":true}`},
		{actor: host.ActorAgent, tool: "clear", want: "refused", contain: "userOnly"},
		{tool: "clear", want: "ok", contain: `{"cleared":true}`},
		{tool: "status", want: "ok", contain: `{"set":false}`},
	})
	// The code is the otp ability's, from the same secret.
	if err := abilities.SetOTPSecret(context.Background(), e.db, "JBSWY3DPEHPK3PXPJBSWY3DP", e.clk.now()); err != nil {
		t.Fatal(err)
	}
	want, err := abilities.Code("JBSWY3DPEHPK3PXPJBSWY3DP", e.clk.now())
	if err != nil {
		t.Fatal(err)
	}
	if got := e.ok(t, host.ActorUser, "authenticator", "code", ""); !strings.Contains(got, `"code":"`+want+`"`) {
		t.Errorf("code %s, want %s", got, want)
	}
	// userOnly tools are never offered to the model.
	tools, err := e.h.AgentTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range tools {
		if at.Name == "authenticator__set" || at.Name == "authenticator__clear" {
			t.Errorf("%s is offered to the agent", at.Name)
		}
	}
}

func writeFiles(dir string, files map[string]string) error {
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
