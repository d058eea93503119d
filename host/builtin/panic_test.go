package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/i18n"
)

// panicky is a built-in whose tool, context function and command panic.
func panicky() *Compiled {
	p := minimal()
	p.ID = "panicky"
	p.Tools[0].Run = Func(func(_ *Context, in echoIn) (echoOut, error) {
		var m map[string]int
		m["boom"] = 1 // a nil-map write: a bug in a built-in
		return echoOut(in), nil
	})
	p.Context = func(*Context, string) (string, error) { panic("context bug") }
	p.Commands = []Command{{Name: "panicky", Description: "崩溃", Run: func(*Context, string) (string, error) { panic("command bug") }}}
	p.I18n.En.Commands = map[string]CommandText{"panicky": {Description: "Crash"}}
	return MustCompile(p)
}

// A panic in a built-in's Go code is a bug of that built-in: the call
// fails with an error naming it, and the host (harness serve, the
// scheduler, MCP) keeps running.
func TestPanicIsAnError(t *testing.T) {
	c := panicky()
	e := newEnvWith(t, c)
	_, err := e.call(t, host.ActorUser, "panicky", "get", `{"text":"x"}`)
	if err == nil || !strings.Contains(err.Error(), "panicky.get") {
		t.Fatalf("tool panic: err = %v, want an error naming panicky.get", err)
	}
	if _, err := RunContext(context.Background(), e.h, c, "q"); err == nil || !strings.Contains(err.Error(), "panicky") {
		t.Fatalf("context panic: err = %v", err)
	}
	if _, _, err := RunCommand(context.Background(), e.h, "panicky", "panicky", "", i18n.Zh); err == nil || !strings.Contains(err.Error(), "panicky") {
		t.Fatalf("command panic: err = %v", err)
	}
}
