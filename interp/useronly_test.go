package interp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/pkuinfo/harness/interp"
)

// TestUserOnlyThroughCall checks that a call step inherits the run's
// actor: a userOnly callee, one call deep or two, runs for the user (or a
// run without an actor, as recorded tests and `harness plugin run` are) and
// refuses the agent and the scheduler; a userOnly tool started directly
// refuses them too, and an unknown actor is an input error.
func TestUserOnlyThroughCall(t *testing.T) {
	const head = "title: T\ndescription: d\neffect: read\n"
	p := loadPlugin(t, map[string]string{
		"main":   head + "steps:\n  - let: r\n    call: mid\n    input: '{}'\nreturn: r\n",
		"mid":    head + "steps:\n  - let: r\n    call: secret\n    input: '{}'\nreturn: r\n",
		"secret": head + "userOnly: true\nreturn: \"'opened'\"\n",
	})
	tests := []struct {
		tool, actor string
		want        string // the error, or "" for the result 'opened'
	}{
		{"main", "", ""},
		{"main", interp.ActorUser, ""},
		{"main", interp.ActorAgent, "input: tools/mid.yaml:5:5: steps[0] (let r): call: secret is userOnly: only a person's own tap can run it, and this run is the agent's (through mid)"},
		{"main", interp.ActorScheduler, "input: tools/mid.yaml:5:5: steps[0] (let r): call: secret is userOnly: only a person's own tap can run it, and this run is the scheduler's (through mid)"},
		{"mid", interp.ActorAgent, "input: tools/mid.yaml:5:5: steps[0] (let r): call: secret is userOnly: only a person's own tap can run it, and this run is the agent's (through mid)"},
		{"secret", interp.ActorAgent, "input: secret is userOnly: only a person's own tap can run it, not the agent"},
		{"secret", interp.ActorUser, ""},
		{"main", "root", `input: unknown actor "root" (want user, agent or scheduler)`},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" as "+tc.actor, func(t *testing.T) {
			v, err := interp.Run(interp.WithActor(context.Background(), tc.actor), p, tc.tool, nil, interp.Options{})
			if tc.want == "" {
				if err != nil || v != "opened" {
					t.Fatalf("Run = %v, %v; want opened", v, err)
				}
				return
			}
			var e *interp.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
			if got := e.Kind + ": " + e.Error(); got != tc.want {
				t.Errorf("err = %s\nwant  %s", got, tc.want)
			}
		})
	}
}
