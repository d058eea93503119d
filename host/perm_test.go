package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/plugin"
)

// TestPermissionMatrix writes Decide's answer for every actor × mode × effect
// × what the turn holds × where the call reaches, with and without userOnly, to
// a golden file.
func TestPermissionMatrix(t *testing.T) {
	var b strings.Builder
	names := map[Decision]string{Allow: "allow", Confirm: "confirm", Refuse: "refuse"}
	turns := []struct {
		name string
		s    TurnState
	}{{"none", TurnState{}}, {"untrusted", TurnState{Untrusted: true}}, {"private", TurnState{Private: true}},
		{"untrusted+private", TurnState{Untrusted: true, Private: true}}}
	reaches := []struct {
		name string
		r    Reach
	}{{"device", Reach{}}, {"third-empty", Reach{ThirdParty: true}}, {"third-party", Reach{ThirdParty: true, Carries: true}}}
	for _, actor := range []Actor{ActorUser, ActorAgent, ActorScheduler} {
		for _, mode := range []Mode{ModeAuto, ModeAsk, ModeDeny} {
			for _, eff := range plugin.Effects {
				for _, turn := range turns {
					for _, reach := range reaches {
						for _, userOnly := range []bool{false, true} {
							v := Decide(actor, &plugin.Tool{Name: "t", Effect: eff, UserOnly: userOnly}, mode, turn.s, reach.r)
							line := fmt.Sprintf("%-9s %-4s %-6s turn=%-17s reach=%-11s userOnly=%-5v → %-7s %-11s %s",
								actor, mode, eff, turn.name, reach.name, userOnly, names[v.Decision], v.Why, v.Reason)
							b.WriteString(strings.TrimRight(line, " ") + "\n")
						}
					}
				}
			}
		}
	}
	golden(t, "permissions.golden", b.String())
}

func TestModes(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	m, err := e.h.Modes(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	// Community: defaultModes write: auto is ignored, read: ask is kept.
	want := map[plugin.Effect]Mode{plugin.EffectRead: ModeAsk, plugin.EffectWrite: ModeAsk, plugin.EffectMoney: ModeAsk, plugin.EffectPublic: ModeAsk}
	if fmt.Sprint(m) != fmt.Sprint(want) {
		t.Fatalf("modes %v, want %v", m, want)
	}
	if err := e.h.SetMode(ctx, "demo", plugin.EffectRead, ModeDeny); err != nil {
		t.Fatal(err)
	}
	_, err = e.h.RunTool(ctx, ActorUser, "demo", "hello", nil)
	var r *Refusal
	if !errors.As(err, &r) || err.Error() != "host: user may not run demo.hello: read tools of this plugin are set to deny" {
		t.Fatalf("deny as user: %v", err)
	}
	for _, tc := range []struct {
		e    plugin.Effect
		m    Mode
		want string
	}{
		{plugin.EffectRead, "sometimes", `host: set mode of demo: unknown mode "sometimes" (use auto, ask or deny)`},
		{plugin.EffectRead, "off", `host: set mode of demo: unknown mode "off" (use auto, ask or deny)`},
		{plugin.Effect(9), ModeAuto, `host: set mode of demo: invalid effect effect(9)`},
	} {
		if err := e.h.SetMode(ctx, "demo", tc.e, tc.m); err == nil || err.Error() != tc.want {
			t.Errorf("SetMode(%v, %q) = %v, want %s", tc.e, tc.m, err, tc.want)
		}
	}
	var nf *NotFound
	if err := e.h.SetMode(ctx, "nope", plugin.EffectRead, ModeAuto); !errors.As(err, &nf) {
		t.Errorf("SetMode of an unknown plugin: %v", err)
	}
}

func TestAskAndConfirm(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	in := mustJSON(t, `{"text":"明天交作业"}`)
	// The user's own tap does not prompt.
	if v, err := e.h.RunTool(ctx, ActorUser, "demo", "note", in); err != nil || jsonOf(t, v) != `{"saved":"明天交作业"}` {
		t.Fatalf("user: %v, %v", v, err)
	}
	// The scheduler cannot ask.
	_, err := e.h.RunTool(ctx, ActorScheduler, "demo", "note", in)
	if err == nil || err.Error() != "host: scheduler may not run demo.note: write tools of this plugin are set to ask, and a scheduled run cannot ask" {
		t.Fatalf("scheduler: %v", err)
	}
	// The agent gets a confirmation request; nothing runs until it is answered.
	res, err := e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "note", Input: in, Turn: "t1"})
	if err != nil || res.Confirmation == nil || res.Value != nil {
		t.Fatalf("agent: %+v, %v", res, err)
	}
	c := res.Confirmation
	if c.Reason != "write tools of this plugin are set to ask" || c.Why != WhyAsk || c.Effect != plugin.EffectWrite || c.Title != "记一笔" {
		t.Fatalf("confirmation %+v", c)
	}
	if len(e.h.Pending()) != 1 {
		t.Fatal("the confirmation is not pending")
	}
	_, err = e.h.RunTool(ctx, ActorAgent, "demo", "note", in)
	if err == nil || !strings.Contains(err.Error(), "needs the user's confirmation") {
		t.Fatalf("RunTool as agent in ask mode: %v", err)
	}
	got, err := e.h.Confirm(ctx, c.ID, true)
	if err != nil || jsonOf(t, got.Value) != `{"saved":"明天交作业"}` {
		t.Fatalf("approved: %+v, %v", got, err)
	}
	_, err = e.h.Confirm(ctx, c.ID, true)
	var nf *NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("answering twice: %v", err)
	}
	res, _ = e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "note", Input: in})
	_, err = e.h.Confirm(ctx, res.Confirmation.ID, false)
	var r *Refusal
	if !errors.As(err, &r) || err.Error() != "host: agent may not run demo.note: the user declined" {
		t.Fatalf("declined: %v", err)
	}
	// Expired confirmations cannot be answered.
	res, _ = e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "note", Input: in})
	e.clock.add(ConfirmationTTL)
	if _, err := e.h.Confirm(ctx, res.Confirmation.ID, true); !errors.As(err, &nf) {
		t.Fatalf("expired: %v", err)
	}
	outcomes := auditOutcomes(t, e)
	want := "user note ok|scheduler note refused|agent note confirm|agent note confirm|agent note approved|agent note ok|agent note confirm|agent note refused|agent note confirm"
	if outcomes != want {
		t.Fatalf("audit\n got %s\nwant %s", outcomes, want)
	}
}

func auditOutcomes(t *testing.T, e *env) string {
	t.Helper()
	entries, err := e.h.Audit(context.Background(), "demo", 100)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for i := len(entries) - 1; i >= 0; i-- {
		a := entries[i]
		s = append(s, fmt.Sprintf("%s %s %s", a.Actor, a.Tool, a.Outcome))
	}
	return strings.Join(s, "|")
}

func TestTaint(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	e.h.SetMode(ctx, "demo", plugin.EffectRead, ModeAuto)
	e.h.SetMode(ctx, "demo", plugin.EffectWrite, ModeAuto)
	note := mustJSON(t, `{"text":"x"}`)
	call := func(actor Actor, tool, turn string) *CallResult {
		t.Helper()
		var in any
		if tool == "note" {
			in = note
		}
		res, err := e.h.Call(ctx, CallRequest{Actor: actor, Plugin: "demo", Tool: tool, Input: in, Turn: turn})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(ActorAgent, "note", "turn-1"); res.Confirmation != nil || !res.Untrusted {
		t.Fatalf("an untainted auto write asked, or a Community result was not untrusted: %+v", res)
	}
	// demo is a Community plugin: after its untrusted result, any call of a
	// third party's tool asks, reads included.
	for _, tool := range []string{"posts", "hello", "note"} {
		res := call(ActorAgent, tool, "turn-1")
		if res.Confirmation == nil || res.Confirmation.Why != WhyThirdParty ||
			res.Confirmation.Reason != "this turn holds untrusted third-party text, and this call can send its input to a party you have not vouched for" {
			t.Fatalf("%s after taint: %+v", tool, res)
		}
	}
	if got := e.h.Turn("turn-1"); got != (TurnState{Untrusted: true}) {
		t.Fatalf("Turn(turn-1) = %+v", got)
	}
	if res := call(ActorAgent, "note", "turn-2"); res.Confirmation != nil {
		t.Fatal("taint leaked into another turn")
	}
	if res := call(ActorUser, "note", "turn-1"); res.Confirmation != nil {
		t.Fatal("the user's own tap asked")
	}
	e.h.EndTurn("turn-1")
	if res := call(ActorAgent, "note", "turn-1"); res.Confirmation != nil {
		t.Fatal("taint outlived EndTurn")
	}
	// Calls without a turn share one.
	call(ActorAgent, "posts", "")
	if res := call(ActorAgent, "note", ""); res.Confirmation == nil {
		t.Fatal("a turnless write after a turnless untrusted result ran")
	}
	e.clock.add(TaintTTL + time.Second)
	if res := call(ActorAgent, "note", ""); res.Confirmation != nil {
		t.Fatal("taint outlived TaintTTL")
	}
}

func TestUserOnly(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	e.h.SetMode(ctx, "demo", plugin.EffectRead, ModeAuto)
	for _, actor := range []Actor{ActorAgent, ActorScheduler} {
		_, err := e.h.RunTool(ctx, actor, "demo", "unlock", nil)
		want := fmt.Sprintf("host: %s may not run demo.unlock: unlock is userOnly: only a person's own tap can run it", actor)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v", actor, err)
		}
	}
	if v, err := e.h.RunTool(ctx, ActorUser, "demo", "unlock", nil); v != "unlocked" {
		t.Fatalf("user: %v, %v", v, err)
	}
	tools, err := e.h.AgentTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, at := range tools {
		names = append(names, at.Name)
	}
	if got := strings.Join(names, " "); got != "demo__hello demo__weather demo__posts demo__note" {
		t.Fatalf("agent tools: %s", got)
	}
	golden(t, "agent_tools.golden", fmt.Sprintf("%s\n", mustMarshal(t, tools)))
}

func TestHousekeeping(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	e.h.RunTool(ctx, ActorUser, "demo", "note", mustJSON(t, `{"text":"old"}`))
	e.db.KV().Set(ctx, "demo", "stale", interp.Entry{Value: "x", Expires: e.clock.now().Add(time.Hour)})
	e.clock.add(8 * 24 * time.Hour)
	e.h.RunTool(ctx, ActorUser, "demo", "hello", nil)
	if a, kv, err := e.h.Housekeeping(ctx); a != 0 || kv != 1 || err != nil {
		t.Fatalf("after 8 days: %d audit, %d kv, %v; want 0, 1", a, kv, err)
	}
	e.clock.add(85 * 24 * time.Hour)
	if a, kv, err := e.h.Housekeeping(ctx); a != 1 || kv != 0 || err != nil {
		t.Fatalf("after 93 days: %d audit, %d kv, %v; want 1, 0", a, kv, err)
	}
	if got := auditOutcomes(t, e); got != "user hello ok" {
		t.Fatalf("audit kept %q", got)
	}
	if _, ok, _ := e.db.KV().Get(ctx, "demo", "note"); !ok {
		t.Fatal("housekeeping dropped a KV entry that never expires")
	}
}

// TestPermissionMatrixThroughCall runs a tool of every effect as every
// actor under every mode through Host.Call (modes stored in the database,
// the audit log written) and compares the outcomes with the golden file.
func TestPermissionMatrixThroughCall(t *testing.T) {
	files := demo("1.0.0", [3]string{"PLUGIN.md", "  hello: tools/hello.yaml", `  hello: tools/hello.yaml
  pay: tools/pay.yaml
  post: tools/post.yaml`},
		[3]string{"tools/pay.yaml", "", "title: 付款\ndescription: Pays.\neffect: money\nreturn: \"'paid'\"\n"},
		[3]string{"tools/post.yaml", "", "title: 发帖\ndescription: Posts.\neffect: public\nreturn: \"'posted'\"\n"})
	e := newEnv(t, files)
	ctx := context.Background()
	e.install(t, link)
	tools := map[plugin.Effect]string{plugin.EffectRead: "hello", plugin.EffectWrite: "note", plugin.EffectMoney: "pay", plugin.EffectPublic: "post"}
	var b strings.Builder
	for _, mode := range []Mode{ModeAuto, ModeAsk, ModeDeny} {
		for _, eff := range plugin.Effects {
			if err := e.h.SetMode(ctx, "demo", eff, mode); err != nil {
				t.Fatal(err)
			}
		}
		for _, actor := range []Actor{ActorUser, ActorAgent, ActorScheduler} {
			for _, eff := range plugin.Effects {
				var in any
				if eff == plugin.EffectWrite {
					in = mustJSON(t, `{"text":"x"}`)
				}
				// Each call its own turn: the community read's untrusted result would taint the next.
				turn := fmt.Sprintf("%s-%s-%s", mode, actor, eff)
				res, err := e.h.Call(ctx, CallRequest{Actor: actor, Plugin: "demo", Tool: tools[eff], Input: in, Turn: turn})
				outcome := ""
				var ref *Refusal
				switch {
				case errors.As(err, &ref):
					outcome = "refused"
				case err != nil:
					t.Fatalf("%s %s %s: %v", mode, actor, eff, err)
				case res.Confirmation != nil:
					outcome = "confirm"
				default:
					outcome = "ran " + jsonOf(t, res.Value)
				}
				fmt.Fprintf(&b, "%-4s %-9s %-6s → %s\n", mode, actor, eff, outcome)
			}
		}
	}
	golden(t, "permissions_call.golden", b.String())
}

// TestCommunityResultsUntrusted: every result of a Community plugin is
// untrusted (seed 004 "Install links"), declared or not, on CallResult and
// in AgentTools, and it taints the agent's turn; an Official plugin's
// result is untrusted only when its tool declares it. (A remote plugin's
// results, untrusted too, are checked by TestRemotePlugins.)
func TestCommunityResultsUntrusted(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	tests := []struct {
		official bool
		tool     string
		want     bool
	}{
		{false, "hello", true}, // Community, not declared
		{false, "posts", true}, // Community, declared
		{true, "hello", false}, // Official, not declared
		{true, "posts", true},  // Official, declared
	}
	for _, tc := range tests {
		if _, err := e.db.SQL.Exec(`UPDATE plugins SET official = ? WHERE id = 'demo'`, tc.official); err != nil {
			t.Fatal(err)
		}
		for _, eff := range []plugin.Effect{plugin.EffectRead, plugin.EffectWrite} {
			if err := e.h.SetMode(ctx, "demo", eff, ModeAuto); err != nil {
				t.Fatal(err)
			}
		}
		turn := fmt.Sprintf("t-%v-%s", tc.official, tc.tool)
		res, err := e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: tc.tool, Turn: turn})
		if err != nil {
			t.Fatal(err)
		}
		if res.Untrusted != tc.want {
			t.Errorf("official %v %s: Untrusted %v, want %v", tc.official, tc.tool, res.Untrusted, tc.want)
		}
		// The next write in the turn needs confirmation exactly when the result was untrusted.
		w, err := e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "note", Input: mustJSON(t, `{"text":"x"}`), Turn: turn})
		if err != nil {
			t.Fatal(err)
		}
		if (w.Confirmation != nil) != tc.want {
			t.Errorf("official %v %s: write after it asked %v, want %v", tc.official, tc.tool, w.Confirmation != nil, tc.want)
		}
		tools, err := e.h.AgentTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range tools {
			if at.Tool == tc.tool && at.Untrusted != tc.want {
				t.Errorf("official %v %s: AgentTool untrusted %v, want %v", tc.official, tc.tool, at.Untrusted, tc.want)
			}
		}
	}
}
