package expr

import (
	"context"
	"fmt"
	"testing"
)

// TestFastPathSameAsWalk checks that the compiled numeric subtrees give the same value, the
// same error and spend the same operations as the node-by-node walk, for every budget size
// (including those that run out inside a subtree).
func TestFastPathSameAsWalk(t *testing.T) {
	vars := MapVars{"a": 1.0, "b": 2.0, "c": 3.0, "s": "x", "n": nil, "o": NewObject(0)}
	srcs := []string{
		`(a + b) * c - a / b + c * 2 - a % 2`,
		`-a + +b * 3 < c`,
		`a * b >= c - 1`,
		`a + s + b`,
		`s + a * b`,
		`a * s`,
		`a + n`,
		`a + o`,
		`a + nosuch * 2`,
		`a + len`,
		`[1, 2, 3].map(x => x * a + 1 - x / 2)`,
		`[1, 2].map(x => [3].map(y => x * y + a))`,
		`a > b ? a * b + c : c - a`,
		`(a + b) + (c * a) == 9`,
	}
	env := NewEnv()
	for _, src := range srcs {
		for _, limit := range []int{1, 2, 3, 5, 8, 13, 20, 40, 1000} {
			fast, err := env.parse(src)
			if err != nil {
				t.Fatal(err)
			}
			slow, _ := env.parse(src)
			walk(slow.root, func(n node) bool {
				if b, ok := n.(*binaryNode); ok {
					b.fast = nil
				}
				return true
			})
			run := func(x *Expr, vars Vars) string {
				b := NewBudget(limit)
				v, err := x.Eval(context.Background(), vars, b)
				return fmt.Sprintf("%#v %v used=%d", v, err, b.Used())
			}
			got, want := run(fast, vars), run(slow, vars)
			if got != want {
				t.Errorf("%s, budget %d:\nfast %s\nwalk %s", src, limit, got, want)
			}
			if got2 := run(fast, lookupOnly{vars}); got2 != want {
				t.Errorf("%s, budget %d, non-map Vars:\nfast %s\nwalk %s", src, limit, got2, want)
			}
		}
	}
}

type lookupOnly struct{ m MapVars }

func (l lookupOnly) Lookup(name string) (any, bool) { return l.m.Lookup(name) }

func TestFastPathCompiled(t *testing.T) {
	x, err := NewEnv().Parse(`(a + b) * c - 2 < d`)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := x.root.(*binaryNode)
	if !ok || b.fast == nil || b.fast.nodes != 9 || !b.fast.cmp {
		t.Fatalf("not compiled as expected: %#v", b.fast)
	}
}

// FuzzFastPath compares the compiled numeric subtrees with the tree walk on any expression:
// same value, same error, same operations spent, for a few budget sizes.
func FuzzFastPath(f *testing.F) {
	for _, s := range []string{`(a + b) * c - a / b`, `-a + +b * 3 < c`, `a + s * 2`, `[1, 2].map(x => x * a - 1)`,
		`a > 1 ? a * b : c % 2`, `a + n - 1`, `1 + 2 * 3 - 4 / 5 % 6`} {
		f.Add(s, uint16(7))
	}
	env := NewEnv()
	vars := MapVars{"a": 1.5, "b": -2.0, "c": 3.0, "s": "x", "n": nil, "t": true, "l": []any{1.0, "y"}}
	show := func(v any, err error, b *Budget) string {
		j, jerr := ToJSON(v, "")
		return fmt.Sprintf("%s %v %v used=%d", j, jerr, err, b.Used())
	}
	f.Fuzz(func(t *testing.T, src string, limit uint16) {
		fast, err := env.parse(src)
		if err != nil {
			return
		}
		slow, _ := env.parse(src)
		walk(slow.root, func(n node) bool {
			if b, ok := n.(*binaryNode); ok {
				b.fast = nil
			}
			return true
		})
		for _, lim := range []int{int(limit), 1000} {
			bf, bs := NewBudget(lim), NewBudget(lim)
			vf, ef := fast.Eval(context.Background(), vars, bf)
			vs, es := slow.Eval(context.Background(), vars, bs)
			if got, want := show(vf, ef, bf), show(vs, es, bs); got != want {
				t.Fatalf("%q, budget %d:\nfast %s\nwalk %s", src, lim, got, want)
			}
		}
	})
}

func TestRenderTextOfEachKind(t *testing.T) {
	env := NewEnv()
	vars := MapVars{"n": 120.0, "f": -0.5, "big": 1e21, "tiny": 1e-7, "nan": 0.0, "s": "字", "o": NewObject(0), "l": []any{1.0, "x"}, "z": nil, "t": true}
	src := "${n}|${f}|${big}|${tiny}|${nan / nan}|${1 / nan}|${-1 / nan}|${s}|${o}|${l}|${z}|${t}|${-nan}|${n * 1.5}"
	tm, err := env.ParseTemplate(src)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tm.Render(context.Background(), vars, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `120|-0.5|1e+21|1e-7|NaN|Infinity|-Infinity|字|{}|[1,"x"]||true|0|180`
	if v != want {
		t.Errorf("got  %q\nwant %q", v, want)
	}
}
