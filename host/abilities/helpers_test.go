package abilities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// fakePlugins answers Plugin from a map (the Host in production).
type fakePlugins map[string]*plugin.Plugin

func (f fakePlugins) Plugin(_ context.Context, id string) (*plugin.Plugin, error) {
	p, ok := f[id]
	if !ok {
		return nil, fmt.Errorf("plugin %s is not installed", id)
	}
	return p, nil
}

func fakePlugin(id string, campus []string, abilities []string, tools ...string) *plugin.Plugin {
	p := &plugin.Plugin{Manifest: &plugin.Manifest{ID: id, Campus: campus, Abilities: abilities}}
	for _, t := range tools {
		// A name ending in "!" is a userOnly tool.
		name, userOnly := strings.CutSuffix(t, "!")
		p.Tools = append(p.Tools, &plugin.Tool{Name: name, UserOnly: userOnly})
	}
	return p
}

// allGroups is every ability group, for a plugin that declares them all.
func allGroups() []string {
	var gs []string
	for _, a := range plugin.Abilities {
		gs = append(gs, a.Group)
	}
	return gs
}

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var t0 = time.Date(2030, 3, 4, 9, 30, 0, 0, time.UTC) // a Monday, 17:30 in Beijing

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newTestSet returns a Set with plugins "p" (every group, campus treehole,
// tools a and b) and "q" (todos and timetable only), on a fresh database.
func newTestSet(t *testing.T, opts ...Option) (*Set, *clock) {
	t.Helper()
	clk := &clock{t: t0}
	ps := fakePlugins{
		"p": fakePlugin("p", []string{"treehole", "card"}, allGroups(), "a", "b", "pay!"),
		"q": fakePlugin("q", nil, []string{"todos", "timetable", "scheduler"}, "c"),
	}
	opts = append([]Option{WithPlugins(ps), WithClock(clk.now)}, opts...)
	return New(openDB(t), opts...), clk
}

// newBenchSet is newTestSet for benchmarks.
func newBenchSet(b *testing.B) (*Set, *clock) {
	clk := &clock{t: t0}
	ps := fakePlugins{"p": fakePlugin("p", []string{"treehole"}, allGroups(), "a")}
	return New(openDB(b), WithPlugins(ps), WithClock(clk.now)), clk
}

func mustJSON(tb testing.TB, s string) any {
	v, err := expr.FromJSON([]byte(s))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// do calls name ("group.op") as plugin with a tool of effect, args given
// as JSON ("" for none), and returns the result as JSON or the error text.
func do(t *testing.T, s *Set, pluginID string, effect plugin.Effect, name, argsJSON string) (string, error) {
	t.Helper()
	var args any
	if argsJSON != "" {
		v, err := expr.FromJSON([]byte(argsJSON))
		if err != nil {
			t.Fatalf("args %s: %v", argsJSON, err)
		}
		args = v
	}
	op, _ := plugin.LookupAbility(name)
	group, opName := op.Group, op.Op
	if group == "" {
		group, opName = name, ""
		for i := range name {
			if name[i] == '.' {
				group, opName = name[:i], name[i+1:]
			}
		}
	}
	v, err := s.Call(context.Background(), interp.AbilityCall{Plugin: pluginID, Tool: "t", Group: group, Op: opName, Args: args, ToolEffect: effect})
	if err != nil {
		var ie *interp.Error
		if !errors.As(err, &ie) || ie.Kind != interp.KindAbility {
			t.Fatalf("%s: error %v is not an ability *interp.Error", name, err)
		}
		return "", err
	}
	b, err := expr.ToJSON(v, "")
	if err != nil {
		t.Fatalf("%s: result: %v", name, err)
	}
	return string(b), nil
}

// step is one call in a table and what it must give.
type step struct {
	plugin string
	effect plugin.Effect
	op     string
	args   string
	want   string // the result as JSON, or the error text when wantErr
	isErr  bool
}

func runSteps(t *testing.T, s *Set, steps []step) {
	t.Helper()
	for i, st := range steps {
		p := st.plugin
		if p == "" {
			p = "p"
		}
		e := st.effect
		if e == 0 {
			e = plugin.EffectWrite
		}
		got, err := do(t, s, p, e, st.op, st.args)
		switch {
		case st.isErr && err == nil:
			t.Errorf("step %d %s %s: got %s, want error %q", i, st.op, st.args, got, st.want)
		case st.isErr && err.Error() != st.want:
			t.Errorf("step %d %s %s:\n got error %q\nwant error %q", i, st.op, st.args, err.Error(), st.want)
		case !st.isErr && err != nil:
			t.Errorf("step %d %s %s: error %v", i, st.op, st.args, err)
		case !st.isErr && got != st.want:
			t.Errorf("step %d %s %s:\n got %s\nwant %s", i, st.op, st.args, got, st.want)
		}
	}
}
