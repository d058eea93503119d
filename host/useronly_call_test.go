package host

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/plugin"
)

// helloCallsUnlock makes demo's hello (a read tool anyone may run) call the
// userOnly unlock tool.
var helloCallsUnlock = [3]string{"tools/hello.yaml", `return: "'你好,' + input.name"`,
	"steps:\n  - let: u\n    call: unlock\n    input: \"{}\"\nreturn: \"'你好,' + input.name + u\"\n"}

// TestUserOnlyThroughCall checks that a call step runs as the caller's
// actor: the user's run of hello reaches unlock, while the agent's (after
// confirming the ask mode) and the scheduler's are refused at the call.
func TestUserOnlyThroughCall(t *testing.T) {
	e := newEnv(t, demo("1.0.0", helloCallsUnlock))
	ctx := context.Background()
	e.install(t, link)
	res, err := e.h.Call(ctx, CallRequest{Actor: ActorUser, Plugin: "demo", Tool: "hello"})
	if err != nil || res.Value != "你好,世界unlocked" {
		t.Fatalf("user: %v, %v", res, err)
	}
	res, err = e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "hello"})
	if err != nil || res.Confirmation == nil {
		t.Fatalf("agent: %+v, %v (want a confirmation for the ask mode)", res, err)
	}
	_, err = e.h.Confirm(ctx, res.Confirmation.ID, true)
	var ie *interp.Error
	if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "unlock is userOnly") || !strings.Contains(ie.Msg, "agent") {
		t.Fatalf("agent after confirming: err = %v, want the call to unlock refused", err)
	}
	if err := e.h.SetMode(ctx, "demo", plugin.EffectRead, ModeAuto); err != nil {
		t.Fatal(err)
	}
	_, err = e.h.RunTool(ctx, ActorScheduler, "demo", "hello", nil)
	if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "unlock is userOnly") {
		t.Fatalf("scheduler: err = %v, want the call to unlock refused", err)
	}
}

// TestUpdateAddsUserOnlyCall checks that an update in which a tool that is
// not userOnly starts calling a userOnly one is held for review.
func TestUpdateAddsUserOnlyCall(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	e.site.set(demo("1.1.0", helloCallsUnlock))
	got, err := e.h.Update(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tool hello now calls userOnly tool unlock"}
	if got.Status != StatusHeld || !reflect.DeepEqual(got.Widened, want) {
		t.Fatalf("Update = %+v, want held with %q", *got, want)
	}
}

// TestWidenedUserOnlyCalls covers the rule on declarations: a new path is
// wider, a path kept or dropped is not, and a new read tool with a path is.
func TestWidenedUserOnlyCalls(t *testing.T) {
	tool := func(name string, calls ...string) ToolDecl {
		return ToolDecl{Name: name, Effect: plugin.EffectRead, CallsUserOnly: calls}
	}
	locked := ToolDecl{Name: "lock", Effect: plugin.EffectRead, UserOnly: true}
	tests := []struct {
		name      string
		old, next []ToolDecl
		want      []string
	}{
		{"kept", []ToolDecl{tool("a", "lock"), locked}, []ToolDecl{tool("a", "lock"), locked}, nil},
		{"dropped", []ToolDecl{tool("a", "lock"), locked}, []ToolDecl{tool("a"), locked}, nil},
		{"added", []ToolDecl{tool("a"), locked}, []ToolDecl{tool("a", "lock"), locked}, []string{"tool a now calls userOnly tool lock"}},
		{"new tool", []ToolDecl{locked}, []ToolDecl{tool("b", "lock"), locked}, []string{"tool b now calls userOnly tool lock"}},
		{"no longer userOnly", []ToolDecl{{Name: "a", Effect: plugin.EffectRead, UserOnly: true}, locked}, []ToolDecl{tool("a", "lock"), locked}, []string{"tool a is no longer userOnly"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Widened(Declarations{Tools: tc.old}, Declarations{Tools: tc.next})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Widened = %q, want %q", got, tc.want)
			}
		})
	}
}
