package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/plugin"
)

// TestConfirmRechecks: approving a confirmation runs the call only if the
// rules still let it be asked and the plugin is the version the user was
// asked about; a mode set to deny, or an accepted update that made the tool
// stronger, while the question was open, refuses it.
func TestConfirmRechecks(t *testing.T) {
	ctx := context.Background()
	ask := func(t *testing.T, e *env) string {
		t.Helper()
		r, err := e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "note", Input: mustJSON(t, `{"text":"x"}`)})
		if err != nil || r.Confirmation == nil {
			t.Fatalf("agent call = %+v, %v; want a confirmation", r, err)
		}
		return r.Confirmation.ID
	}
	tests := []struct {
		name   string
		change func(t *testing.T, e *env)
		want   string // "" runs
	}{
		{"nothing changed", func(t *testing.T, e *env) {}, ""},
		{"another effect's mode changed", func(t *testing.T, e *env) {
			e.h.SetMode(ctx, "demo", plugin.EffectRead, ModeAuto)
		}, ""},
		{"mode set to deny", func(t *testing.T, e *env) {
			if err := e.h.SetMode(ctx, "demo", plugin.EffectWrite, ModeDeny); err != nil {
				t.Fatal(err)
			}
		}, "write tools of this plugin are set to deny"},
		{"tool made stronger by an accepted update", func(t *testing.T, e *env) {
			e.site.set(demo("2.0.0", [3]string{"tools/note.yaml", "effect: write", "effect: money"}))
			if o, err := e.h.Update(ctx, "demo"); err != nil || o.Status != StatusHeld {
				t.Fatalf("update = %+v, %v", o, err)
			}
			if _, err := e.h.AcceptUpdate(ctx, "demo", ""); err != nil {
				t.Fatal(err)
			}
		}, "demo changed since the confirmation was asked (now 2.0.0); ask again"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, demo("1.0.0"))
			e.install(t, link)
			id := ask(t, e)
			tc.change(t, e)
			_, err := e.h.Confirm(ctx, id, true)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Confirm = %v, want the call to run", err)
				}
				return
			}
			var ref *Refusal
			if !errors.As(err, &ref) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Confirm = %v, want a refusal: %s", err, tc.want)
			}
			if _, err := e.h.Confirm(ctx, id, true); err == nil {
				t.Error("a refused confirmation could be answered again")
			}
		})
	}
}

// TestConfirmAfterInputCheck: an agent call whose input the tool would reject is refused with
// the input error at once, not turned into a question a person approves only to see it fail.
func TestConfirmAfterInputCheck(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, demo("1.0.0"))
	e.install(t, link)
	for _, tc := range []struct{ in, want string }{
		{`{"text":5}`, "input.text"},
		{`{"other":"x"}`, "input.text: is required"},
		{`{"text":"x","other":1}`, "input.other"},
	} {
		r, err := e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "note", Input: mustJSON(t, tc.in)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("agent call with %s = %+v, %v; want an input error naming %s", tc.in, r, err, tc.want)
		}
		if r != nil && r.Confirmation != nil {
			t.Errorf("agent call with %s asked for a confirmation", tc.in)
		}
	}
	// A valid input still asks.
	r, err := e.h.Call(ctx, CallRequest{Actor: ActorAgent, Plugin: "demo", Tool: "note", Input: mustJSON(t, `{"text":"x"}`)})
	if err != nil || r.Confirmation == nil {
		t.Fatalf("agent call with valid input = %+v, %v; want a confirmation", r, err)
	}
}
