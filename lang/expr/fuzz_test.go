package expr_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// fuzzSeeds are shared by FuzzParse and FuzzEval besides the corpus in testdata/fuzz.
var fuzzSeeds = []string{
	"1 + 2 * 3",
	"page.rows.map(r => ({ room: r.room, seats: num(r.cap, 0) })).filter(r => r.seats > 50)",
	"a?.b[c]?.(d) ?? `x${y}z`",
	"{ a: 1, ...b, [c]: [1, ...d,], }",
	"x ? y : z ? w : v",
	"'\\d+\\.' + \"\\n\" + `\\``",
	"range(100).reduce((a, x) => a + x, 0)",
	"/* c */ input.tags.join(', ') // d",
	"-(-1) - -2",
	"sortBy(groupBy(input.tags, t => t).keys(), k => k, 'desc')",
	"(a || b) ?? c",
}

// FuzzParse checks the parser on arbitrary text: it never panics, a successful parse prints
// (Canonical) to text that parses to the same tree, and deep or long input is refused with the
// documented limits rather than exhausting the stack.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	env := expr.NewEnv()
	f.Fuzz(func(t *testing.T, src string) {
		x, err := env.Parse(src)
		if err != nil {
			var list expr.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse(%q): error %T %v is not an ErrorList", src, err, err)
			}
			for _, e := range list {
				if !e.Pos.IsValid() || e.Pos.Offset > len(src) {
					t.Fatalf("Parse(%q): bad position %+v in %v", src, e.Pos, e)
				}
			}
			_ = expr.Format(src, err)
			return
		}
		if len(src) > expr.MaxSourceLen {
			t.Fatalf("accepted %d bytes", len(src))
		}
		c1 := x.Canonical()
		y, err := expr.NewEnv().Parse(c1)
		if err != nil {
			if len(c1) > expr.MaxSourceLen {
				return // quoting and spacing made it longer than the limit
			}
			t.Fatalf("canonical form of %q does not parse: %q: %v", src, c1, err)
		}
		if c2 := y.Canonical(); c2 != c1 {
			t.Fatalf("print → reparse changed the tree:\n src %q\n  c1 %q\n  c2 %q", src, c1, c2)
		}
	})
}

// FuzzEval evaluates arbitrary expressions with the standard library and a small budget: never
// a panic, never more operations than the budget, every failure a positioned *RuntimeError of a
// known kind, and no name that Check accepted is unknown at run time.
func FuzzEval(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	env := stdlib.NewEnv()
	vars := testVars(f)
	f.Fuzz(func(t *testing.T, src string) {
		x, err := env.Parse(src)
		if err != nil {
			return
		}
		checked := len(x.Check(func(n string) bool { _, ok := vars[n]; return ok })) == 0
		const limit = 20_000
		b := expr.NewBudget(limit)
		v, err := x.Eval(context.Background(), vars, b)
		if b.Used() > limit {
			t.Fatalf("%q used %d operations, budget %d", src, b.Used(), limit)
		}
		if err != nil {
			var re *expr.RuntimeError
			if !errors.As(err, &re) {
				t.Fatalf("%q: error %T %v is not a *RuntimeError", src, err, err)
			}
			if re.Kind != "expression" && re.Kind != "limit" {
				t.Fatalf("%q: kind %q", src, re.Kind)
			}
			if !strings.Contains(err.Error(), ":") {
				t.Fatalf("%q: error without position: %v", src, err)
			}
			// What Check accepts, Eval can resolve: the static and dynamic views agree.
			if checked && (strings.Contains(re.Msg, "unknown name") || strings.Contains(re.Msg, "unknown function")) {
				t.Fatalf("%q passed Check but failed with %v", src, err)
			}
			return
		}
		_, _ = expr.ToJSON(v, "")
	})
}
