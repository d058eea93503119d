package expr_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// TestBuiltinAPI exercises what a builtin sees: Call.Lookup, Context, Charge, CallFunc, Limitf,
// and how its errors are reported.
func TestBuiltinAPI(t *testing.T) {
	env := expr.NewEnv()
	env.Register("nowPlus", func(c *expr.Call, args []any) (any, error) {
		now, ok := c.Lookup("now")
		if !ok || c.Context() == nil || c.Name != "nowPlus" {
			return nil, errors.New("no now")
		}
		return now.(float64) + args[0].(float64), nil
	}, expr.Args(1, 1))
	env.Register("twice", func(c *expr.Call, args []any) (any, error) {
		if err := c.Charge(2); err != nil {
			return nil, err
		}
		a, err := c.CallFunc(args[0], 1.0)
		if err != nil {
			return nil, err
		}
		return c.CallFunc(args[0], a)
	}, expr.Method(), expr.Args(1, 1))
	env.Register("big", func(c *expr.Call, args []any) (any, error) {
		return nil, expr.Limitf("%d items, the limit is %d", 20, 10)
	})
	env.Register("fails", func(c *expr.Call, args []any) (any, error) {
		return nil, errors.New("argument 1 must be a string")
	})
	tests := []struct{ src, want string }{
		{"nowPlus(5)", "105"},
		{"twice(x => x * 3)", "9"},
		{"(x => x + 1).twice()", "parse: 1:2: an arrow function can only be a call argument, as in rows.map(r => r.x), or the body of a function"},
		{"twice(1)", "expression: 1:1: twice: expected a function such as x => x.name, got a number"},
		{"big()", "limit: 1:1: big: 20 items, the limit is 10"},
		{"fails()", "expression: 1:1: fails: argument 1 must be a string"},
		{"nowPlus()", "expression: 1:1: nowPlus: takes 1 argument, got 0"},
		{"nowPlus(1, 2)", "expression: 1:1: nowPlus: takes 1 argument, got 2"},
	}
	for _, tc := range tests {
		if got := evalJSON(t, env, tc.src, expr.MapVars{"now": 100.0}); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.src, got, tc.want)
		}
	}
	if got := env.Builtins(); !reflect.DeepEqual(got, []string{"big", "fails", "nowPlus", "twice"}) {
		t.Errorf("Builtins() = %v", got)
	}
	if !env.IsMethod("twice") || env.IsMethod("big") {
		t.Error("IsMethod")
	}
}

func TestExprAccessors(t *testing.T) {
	env := expr.NewEnv()
	x, _ := env.Parse("(a, b) => a + c + f(b) + d.e")
	if !x.IsArrow() || !reflect.DeepEqual(x.Params(), []string{"a", "b"}) {
		t.Errorf("IsArrow/Params: %v %v", x.IsArrow(), x.Params())
	}
	if got := x.FreeNames(); !reflect.DeepEqual(got, []string{"c", "d"}) { // f is called, not read
		t.Errorf("FreeNames = %v", got)
	}
	if x.Source() != "(a, b) => a + c + f(b) + d.e" || x.String() != x.Source() {
		t.Error("Source")
	}
	if err := env.Define("g", x); err != nil {
		t.Fatal(err)
	}
	y, _ := env.Parse("x => g(x, 1)")
	if err := env.Define("h", y); err != nil {
		t.Fatal(err)
	}
	layer := env.Extend()
	z, _ := layer.Parse("x => h(x)")
	if err := layer.Define("k", z); err != nil {
		t.Fatal(err)
	}
	if got := layer.Functions(); !reflect.DeepEqual(got, []string{"g", "h", "k"}) {
		t.Errorf("Functions = %v", got)
	}
	if env.Function("k") != nil || layer.Function("g") == nil {
		t.Error("Function lookup through layers")
	}
	if err := env.Define("bad name", y); err == nil || err.Error() != `function name "bad name" is not a valid name` {
		t.Errorf("Define(bad name) = %v", err)
	}

	tp, _ := env.ParseTemplate("a ${b} c ${d}")
	if tp.IsSingle() || tp.IsConstant() || len(tp.Exprs()) != 2 || tp.Exprs()[1].Source() != "d" || tp.Source() != "a ${b} c ${d}" {
		t.Error("Template accessors")
	}
	if c, _ := env.ParseTemplate("plain"); !c.IsConstant() {
		t.Error("IsConstant")
	}
	b := expr.NewBudget(7)
	if b.Limit() != 7 || b.Charge(7) != nil || b.Used() != 7 {
		t.Error("budget")
	}
	if err := b.Charge(1); err == nil || err.Error() != "expression budget exceeded (7 operations)" || !errors.Is(err, expr.ErrBudget) {
		t.Errorf("Charge past the limit = %v", err)
	}
	if err := b.Charge(0); err != nil {
		t.Error("Charge(0) after exhaustion must be free")
	}
	// A nil budget means a fresh default one; a nil context is allowed.
	one, _ := env.Parse("1")
	//lint:ignore SA1012 testing the nil-context path on purpose
	if v, err := one.Eval(nilContext(), nil, nil); err != nil || v != 1.0 {
		t.Errorf("Eval(nil, nil, nil) = %v, %v", v, err)
	}
}

func nilContext() context.Context { return nil }

func TestErrorList(t *testing.T) {
	var l expr.ErrorList
	if l.Err() != nil || l.Error() != "no errors" {
		t.Error("empty list")
	}
	_, err := expr.NewEnv().Parse("a = 1; b")
	var list expr.ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("err = %v", err)
	}
	if list[0].Pos.Col > list[1].Pos.Col {
		t.Error("not sorted")
	}
	if got := expr.Format("a = 1; b", err); strings.Count(got, "^") != 2 {
		t.Errorf("Format of a list:\n%s", got)
	}
}

// One Env and one parsed Expr serve every goroutine of an each step at once.
func TestConcurrentEval(t *testing.T) {
	env := stdlib.NewEnv()
	f, _ := env.Parse("(r) => ({ room: r.room, seats: num(r.cap, 0) })")
	if err := env.Define("row", f); err != nil {
		t.Fatal(err)
	}
	x, err := env.Parse("page.rows.map(row).filter(r => r.seats > 10).map(r => `${r.room}:${r.seats}`).join(',')")
	if err != nil {
		t.Fatal(err)
	}
	vars := testVars(t)
	want := `101:60,102:30`
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				v, err := x.Eval(context.Background(), vars, nil)
				if err != nil || v != want {
					errs <- fmt.Errorf("got %v, %v", v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A panicking builtin becomes an error, not a crash of the host.
func TestPanicIsAnError(t *testing.T) {
	env := expr.NewEnv()
	env.Register("boom", func(c *expr.Call, args []any) (any, error) { panic("index out of range") })
	x, _ := env.Parse("[1, boom()]")
	_, err := x.Eval(context.Background(), nil, nil)
	if err == nil || err.Error() != "internal error: index out of range (please report this)" {
		t.Errorf("err = %v", err)
	}
	tp, _ := env.ParseTemplate("a ${boom()}")
	if _, err := tp.Render(context.Background(), nil, nil); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("Render err = %v", err)
	}
}
