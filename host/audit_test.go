package host

import (
	"context"
	"errors"
	"testing"

	"github.com/pkuinfo/harness/plugin"
)

// TestAuditFailureFailsTheCall: an audit entry the database refuses (a
// trigger stands in for a full disk or a locked file) fails the call instead
// of losing the record. When the "running" entry cannot be written the tool
// never runs; when only its end cannot be written the tool ran, the error
// says so, the result is withheld and the log keeps the call as running; a
// refusal or a confirmation that cannot be recorded fails too, and leaves no
// confirmation waiting.
func TestAuditFailureFailsTheCall(t *testing.T) {
	ctx := context.Background()
	insertFails := `CREATE TRIGGER audit_full BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk full'); END`
	updateFails := `CREATE TRIGGER audit_full BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'disk full'); END`
	tests := []struct {
		name    string
		setup   func(t *testing.T, e *env)
		trigger string
		actor   Actor
		ran     bool   // the tool ran: the note is saved
		outcome string // the AuditFailure's Outcome
		log     string // the outcome the log keeps, "" for no entry
	}{
		{"start cannot be written", nil, insertFails, ActorUser, false, "running", ""},
		{"end cannot be written", nil, updateFails, ActorUser, true, "ok", "running"},
		{"refusal cannot be written", func(t *testing.T, e *env) {
			if err := e.h.SetMode(ctx, "demo", plugin.EffectWrite, ModeDeny); err != nil {
				t.Fatal(err)
			}
		}, insertFails, ActorUser, false, "refused", ""},
		{"confirmation cannot be written", func(t *testing.T, e *env) {
			if err := e.h.SetMode(ctx, "demo", plugin.EffectWrite, ModeAsk); err != nil {
				t.Fatal(err)
			}
		}, insertFails, ActorAgent, false, "confirm", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, demo("1.0.0"))
			e.install(t, link)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			if _, err := e.db.SQL.ExecContext(ctx, tc.trigger); err != nil {
				t.Fatal(err)
			}
			res, err := e.h.Call(ctx, CallRequest{Actor: tc.actor, Plugin: "demo", Tool: "note", Input: mustJSON(t, `{"text":"x"}`)})
			var af *AuditFailure
			if !errors.As(err, &af) {
				t.Fatalf("Call = %+v, %v; want an *AuditFailure", res, err)
			}
			if res != nil {
				t.Errorf("Call returned %+v with its audit failure; want no result", res)
			}
			if af.Ran != tc.ran || af.Outcome != tc.outcome || af.Plugin != "demo" || af.Tool != "note" {
				t.Errorf("AuditFailure = %+v; want Ran %v, Outcome %q", af, tc.ran, tc.outcome)
			}
			t.Logf("%v", err)
			_, saved, kerr := e.db.KV().Get(ctx, "demo", "note")
			if kerr != nil || saved != tc.ran {
				t.Errorf("note saved = %v, %v; want %v (the tool ran: %v)", saved, kerr, tc.ran, tc.ran)
			}
			if n := len(e.h.Pending()); n != 0 {
				t.Errorf("%d confirmations wait for a call the log does not know; want 0", n)
			}
			if _, err := e.db.SQL.ExecContext(ctx, `DROP TRIGGER audit_full`); err != nil {
				t.Fatal(err)
			}
			log, err := e.h.Audit(ctx, "demo", 10)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.log == "" && len(log) != 0:
				t.Errorf("audit log = %+v; want no entry", log)
			case tc.log != "" && (len(log) != 1 || log[0].Outcome != tc.log):
				t.Errorf("audit log = %+v; want one entry %q", log, tc.log)
			}
		})
	}
}

// TestAuditRunningThenOutcome: a call that runs is first in the log as
// "running" and then has its outcome, in the same entry, with its duration.
func TestAuditRunningThenOutcome(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, demo("1.0.0"))
	e.install(t, link)
	if _, err := e.h.Call(ctx, CallRequest{Actor: ActorUser, Plugin: "demo", Tool: "note", Input: mustJSON(t, `{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.h.Call(ctx, CallRequest{Actor: ActorUser, Plugin: "demo", Tool: "note", Input: mustJSON(t, `{"text":"toolong toolong toolong toolong toolong toolong toolong toolong toolong toolong toolong toolong toolong"}`)}); err == nil {
		t.Fatal("a note over 100 characters ran")
	}
	log, err := e.h.Audit(ctx, "demo", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[1].Outcome != "ok" || log[0].Outcome != "error" || log[0].Error == "" {
		t.Fatalf("audit log = %+v; want ok, then error with its message", log)
	}
}
