package expr_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
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
			if strings.HasPrefix(re.Msg, "internal error") {
				t.Fatalf("%q: a builtin panicked: %v", src, err)
			}
			if !re.Pos.IsValid() {
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

// FuzzFromJSON checks the order-preserving JSON decoder against encoding/json: it accepts
// exactly the documents json.Valid accepts (up to its nesting limit), and what it decodes encodes
// to JSON that decodes to an equal value.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `[1.5e3,-0,1e400]`, `"\ud83d\ude00\u4e2d"`, `{"a":1,"a":2}`, ` 7 `, `[`, `{"x":}`, `"\x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := expr.FromJSON(data)
		if valid := json.Valid(data); valid != (err == nil) {
			if err != nil && strings.Contains(err.Error(), "nested more than") {
				return
			}
			t.Fatalf("FromJSON(%q): err = %v, json.Valid = %v", data, err, valid)
		}
		if err != nil {
			return
		}
		out, err := expr.ToJSON(v, "")
		if err != nil {
			t.Fatalf("ToJSON(FromJSON(%q)): %v", data, err)
		}
		w, err := expr.FromJSON(out)
		if err != nil {
			t.Fatalf("re-decoding %q: %v", out, err)
		}
		if !expr.Equal(v, w) && !hasInfinity(v) {
			t.Fatalf("round trip of %q changed the value: %q", data, out)
		}
	})
}

// hasInfinity reports whether v holds ±Inf (from 1e400), which JSON writes as null.
func hasInfinity(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsInf(x, 0)
	case []any:
		for _, e := range x {
			if hasInfinity(e) {
				return true
			}
		}
	case *expr.Object:
		for i := 0; i < x.Len(); i++ {
			if _, e := x.Entry(i); hasInfinity(e) {
				return true
			}
		}
	}
	return false
}

// FuzzParseTemplate checks the template parser: no panic, errors carry positions inside the
// text, and a template without "${" is the constant text itself ("$${" read as "${").
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"plain", "${a}", "x ${a + 1} y", "$${a}", "${ {a: '}'}.a }", "${", "${}", "a ${`b${c}`} d"} {
		f.Add(s)
	}
	env := stdlib.NewEnv()
	f.Fuzz(func(t *testing.T, src string) {
		tp, err := env.ParseTemplate(src)
		if err != nil {
			var list expr.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("ParseTemplate(%q): %T", src, err)
			}
			for _, e := range list {
				if !e.Pos.IsValid() || e.Pos.Offset > len(src) {
					t.Fatalf("ParseTemplate(%q): bad position %+v", src, e.Pos)
				}
			}
			return
		}
		if !strings.Contains(src, "${") {
			v, err := tp.Render(context.Background(), nil, nil)
			if err != nil || v != src {
				t.Fatalf("constant template %q rendered %q, %v", src, v, err)
			}
		}
		_, _ = tp.Render(context.Background(), testVars(t), expr.NewBudget(10_000))
	})
}

// FuzzRegexp checks the pattern filter: no panic, and every pattern it accepts compiles.
func FuzzRegexp(f *testing.F) {
	for _, s := range []string{`(?i)^yanyuan`, `(?u)\d+`, `(?iu:a)b`, `a(?=b)`, `(a)\1`, `[\]]`, `(?<n>x)\k<n>`, `((`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		env := expr.NewEnv()
		re, err := env.Regexp(pattern)
		if err == nil && re == nil {
			t.Fatalf("Regexp(%q): nil without error", pattern)
		}
		var rerr *expr.RegexError
		if err != nil && !errors.As(err, &rerr) {
			t.Fatalf("Regexp(%q): error %T", pattern, err)
		}
	})
}
