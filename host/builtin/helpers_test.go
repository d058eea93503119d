package builtin

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// bj is a Beijing wall time on 2026-10-21 (the seed's test day), a Wednesday.
func bj(h, m int) time.Time {
	return time.Date(2026, 10, 21, h, m, 0, 0, time.FixedZone("CST", 8*3600))
}

type env struct {
	h   *host.Host
	db  *store.DB
	clk *clock
	set *abilities.Set
}

// newEnv is a host on a fresh store with the app's built-ins installed,
// the abilities bound and the clock at bj(9, 0).
func newEnv(t testing.TB) *env {
	t.Helper()
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := &clock{t: bj(9, 0)}
	set := abilities.New(db, abilities.WithClock(clk.now))
	h, err := host.New(db, host.WithAbilities(set), host.WithClock(clk.now), Option(All()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &env{h: h, db: db, clk: clk, set: set}
}

// call runs plugin.tool as actor with a JSON input ("" for none).
func (e *env) call(t testing.TB, actor host.Actor, id, tool, input string) (*host.CallResult, error) {
	t.Helper()
	var in any
	if input != "" {
		v, err := expr.FromJSON([]byte(input))
		if err != nil {
			t.Fatalf("bad test input %s: %v", input, err)
		}
		in = v
	}
	return e.h.Call(context.Background(), host.CallRequest{Actor: actor, Plugin: id, Tool: tool, Input: in})
}

// ok runs a call that must succeed and returns its result as JSON.
func (e *env) ok(t testing.TB, actor host.Actor, id, tool, input string) string {
	t.Helper()
	res, err := e.call(t, actor, id, tool, input)
	if err != nil {
		t.Fatalf("%s.%s %s as %s: %v", id, tool, input, actor, err)
	}
	if res.Confirmation != nil {
		t.Fatalf("%s.%s as %s: wants confirmation: %s", id, tool, actor, res.Confirmation.Reason)
	}
	b, err := expr.ToJSON(res.Value, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outcome classifies a call: "ok", "confirm", "refused", "input", "tool",
// "ability" or the error text.
func outcome(res *host.CallResult, err error) string {
	var ref *host.Refusal
	var ie *interp.Error
	switch {
	case err == nil && res.Confirmation != nil:
		return "confirm"
	case err == nil:
		return "ok"
	case errors.As(err, &ref):
		return "refused"
	case errors.As(err, &ie):
		return ie.Kind
	}
	return err.Error()
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := expr.ToJSON(v, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
