package expr_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// testVars are the variables every evaluation test sees.
func testVars(t testing.TB) expr.MapVars {
	t.Helper()
	page, err := expr.FromJSON([]byte(`{"success": true, "rows": [{"room": "101", "cap": "60"}, {"room": "102", "cap": "30人"}], "empty": null, "n": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	return expr.MapVars{
		"page":  page,
		"input": mustJSON(t, `{"building": "二教", "day": "today", "n": 2, "tags": ["a", "b"]}`),
		"none":  nil,
		"now":   1.7e12,
		"s":     "héllo",
	}
}

func mustJSON(t testing.TB, s string) any {
	t.Helper()
	v, err := expr.FromJSON([]byte(s))
	if err != nil {
		t.Fatalf("FromJSON(%s): %v", s, err)
	}
	return v
}

// evalJSON parses, checks and evaluates src and returns its JSON or the error text.
func evalJSON(t testing.TB, env *expr.Env, src string, vars expr.MapVars) string {
	t.Helper()
	x, err := env.Parse(src)
	if err != nil {
		return "parse: " + err.Error()
	}
	v, err := x.Eval(context.Background(), vars, expr.NewBudget(expr.DefaultBudget))
	if err != nil {
		var re *expr.RuntimeError
		if !errors.As(err, &re) {
			t.Fatalf("%s: error is %T, not *RuntimeError: %v", src, err, err)
		}
		return re.Kind + ": " + err.Error()
	}
	b, err := expr.ToJSON(v, "")
	if err != nil {
		return "json: " + err.Error()
	}
	return string(b)
}

func TestEval(t *testing.T) {
	env := stdlib.NewEnv()
	vars := testVars(t)
	tests := []struct{ src, want string }{
		// literals
		{"1", "1"}, {"1.5", "1.5"}, {".5", "0.5"}, {"1e3", "1000"}, {"0x1f", "31"}, {"-0", "0"},
		{"'a'", `"a"`}, {`"b"`, `"b"`}, {"true", "true"}, {"false", "false"}, {"null", "null"},
		{"[]", "[]"}, {"[1, 'a', null,]", `[1,"a",null]`}, {"{}", "{}"},
		{"({ a: 1, 'b c': 2, 3: 3, [`k${1}`]: 4, })", `{"a":1,"b c":2,"3":3,"k1":4}`},
		{"({ z: 1, a: 2 })", `{"z":1,"a":2}`},
		{"[...[1, 2], 3, ...null]", "[1,2,3]"},
		{"({ ...{ a: 1, b: 2 }, b: 3, ...null })", `{"a":1,"b":3}`},
		{"({ n: 1 }).n", "1"},
		{"({ now })", `{"now":1700000000000}`},
		// string escapes (seed: \\ \' \" \n \t \r; others keep the backslash)
		{`'a\nb\tc\rd'`, `"a\nb\tc\rd"`},
		{`'\d+\.\w'`, `"\\d+\\.\\w"`},
		{`'it\'s' + "\"q\""`, `"it's\"q\""`},
		{`'back\\slash'`, `"back\\slash"`},
		{`'\u4e2d\u{1F600}'`, `"中😀"`},
		// template literals
		{"`a${1 + 1}b${'c'}`", `"a2bc"`},
		{"`${null}|${[1]}|${{a: 1}}|${true}`", `"|[1]|{\"a\":1}|true"`},
		{"`x\\`y\\${z}`", "\"x`y${z}\""},
		{"`multi\nline`", `"multi\nline"`},
		{"`${`nested ${1}`}`", `"nested 1"`},
		// comments
		{"1 + /* two */ 2 // three", "3"},
		{"/* a */ [1, // b\n 2]", "[1,2]"},
		// arithmetic
		{"1 + 2 * 3", "7"}, {"(1 + 2) * 3", "9"}, {"10 - 4 - 3", "3"}, {"2 * 3 % 4", "2"},
		{"7 / 2", "3.5"}, {"-7 % 3", "-1"}, {"1 / 0", "null"}, {"0.1 + 0.2", "0.30000000000000004"},
		{"-(2 + 3)", "-5"}, {"+3", "3"}, {"- -3", "3"}, {"1e21 + ''", `"1e+21"`}, {"1e-7 + ''", `"1e-7"`},
		{"123456789012345680000 + ''", `"123456789012345680000"`}, {"0.000001 + ''", `"0.000001"`},
		// string concatenation
		{"'a' + 1", `"a1"`}, {"1 + 'a'", `"1a"`}, {"'a' + null", `"anull"`}, {"'a' + true", `"atrue"`},
		{"'a' + [1, 2]", `"a[1,2]"`}, {"1 + 2 + 'a'", `"3a"`}, {"'a' + 1 + 2", `"a12"`},
		{"'x' + 0.5", `"x0.5"`},
		// comparison
		{"1 < 2", "true"}, {"2 <= 2", "true"}, {"3 > 4", "false"}, {"4 >= 5", "false"},
		{"'a' < 'b'", "true"}, {"'b' > 'abc'", "true"}, {"'中' > 'a'", "true"},
		// equality: all four strict; lists and objects by value
		{"1 == 1", "true"}, {"1 == '1'", "false"}, {"1 === 1", "true"}, {"null == null", "true"},
		{"null != 0", "true"}, {"'' !== ''", "false"}, {"[1, {a: 2}] == [1, {a: 2}]", "true"},
		{"({a: 1, b: 2}) === ({b: 2, a: 1})", "true"}, {"[1] == [2]", "false"}, {"0 / 0 == 0 / 0", "false"},
		// logic: JavaScript truthiness, operand values returned
		{"!0", "true"}, {"!''", "true"}, {"!null", "true"}, {"![]", "false"}, {"!{}", "false"}, {"!(0/0)", "true"},
		{"1 && 2", "2"}, {"0 && 2", "0"}, {"'' || 'x'", `"x"`}, {"'a' || 'x'", `"a"`},
		{"null ?? 1", "1"}, {"0 ?? 1", "0"}, {"false ?? 1", "false"}, {"(null || 0) ?? 2", "0"},
		{"1 || 2 && 0", "1"}, {"(1 || 2) && 0", "0"},
		{"true ? 'y' : 'n'", `"y"`}, {"0 ? 'y' : 'n'", `"n"`}, {"1 ? 2 ? 3 : 4 : 5", "3"},
		{"0 ? 1 : 0 ? 2 : 3", "3"}, {"1 + 1 == 2 && 'ok'", `"ok"`}, {"!1 == false", "true"},
		{"1 < 2 == true", "true"}, {"2 * 3 + 4 * 5", "26"}, {"a?.5:1", "parse: 1:1: unknown name 'a'"},
		// names, members, indexes
		{"page.success", "true"}, {"page.rows[1].room", `"102"`}, {"page['n']", "3"},
		{"page.rows.length", "2"}, {"s.length", "5"}, {"s[1]", `"é"`}, {"s[9]", "null"},
		{"page.rows[5]", "null"}, {"page.rows[-1]", "null"}, {"page.rows[0.5]", "null"}, {"page.missing", "null"},
		{"page.constructor", "null"}, {"page.__proto__", "null"}, {"({}).prototype", "null"},
		{"({ constructor: 1 }).constructor", "1"},
		{"input.tags[0]", `"a"`}, {"[10, 20][1]", "20"}, {"({ '1': 'one' })[1]", `"one"`},
		// optional chaining short-circuits the whole chain
		{"none?.a.b.c", "null"}, {"none?.[0].x", "null"}, {"none?.trim().length", "null"},
		{"page.empty?.x", "null"}, {"page?.rows[0].room", `"101"`},
		{"page.n?.x", "null"}, {"s?.foo", "null"}, {"s?.length", "5"}, {"true?.[0]", "null"},
		// arrow functions and methods
		{"page.rows.map(r => r.room)", `["101","102"]`},
		{"page.rows.map((r, i) => i)", "[0,1]"},
		{"[1, 2].map(x => [1, 2].map(y => x * 10 + y))", "[[11,12],[21,22]]"},
		{"[1, 2, 3].filter(x => x > 1).map(x => ({ x }))", `[{"x":2},{"x":3}]`},
		{"page.rows.map(r => ({ room: r.room, seats: num(r.cap, 0) })).filter(r => r.seats > 50)", `[{"room":"101","seats":60}]`},
		{"['a', 'b'].map(upper)", `["A","B"]`},
		{"' x '.trim()", `"x"`},
		{"input.building ?? '二教'", `"二教"`},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			x, err := env.Parse(tc.src)
			if err == nil {
				if errs := x.Check(func(n string) bool { _, ok := vars[n]; return ok }); len(errs) > 0 {
					if got := "parse: " + errs.Error(); got != tc.want {
						t.Fatalf("check: got %s\nwant %s", got, tc.want)
					}
					return
				}
			}
			if got := evalJSON(t, env, tc.src, vars); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	env := stdlib.NewEnv()
	vars := testVars(t)
	tests := []struct{ src, want string }{
		{"page.empty.rows", "expression: 1:12: cannot read property 'rows' of null (use ?.)"},
		{"none[0]", "expression: 1:5: cannot read index 0 of null (use ?.[])"},
		{"none.trim()", "expression: 1:6: cannot call method 'trim' of null (use ?.)"},
		{"page.n.x", "expression: 1:8: cannot read property 'x' of a number"},
		{"s.foo", "expression: 1:3: cannot read property 'foo' of a string"},
		{"true.x", "expression: 1:6: cannot read property 'x' of a boolean"},
		{"1 - 'a'", "expression: 1:3: cannot apply '-' to a number and a string (use num(x) to read a number)"},
		{"[] * 2", "expression: 1:4: cannot apply '*' to a list and a number (use num(x) to read a number)"},
		{"null + 1", "expression: 1:6: cannot apply '+' to null and a number (use num(x) to read a number)"},
		{"-'3'", "expression: 1:1: cannot apply unary '-' to a string (use num(x) to read a number)"},
		{"1 < 'a'", "expression: 1:3: cannot compare a number with a string using '<' (both sides must be numbers or both strings)"},
		{"null >= 0", "expression: 1:6: cannot compare null with a number using '>=' (both sides must be numbers or both strings)"},
		{"page.rows.nope()", "expression: 1:11: a list has no method 'nope'"},
		{"range(1).map(1)", "expression: 1:10: map: argument 2 must be a function such as x => x.name, got a number"},
		{"page.rows.map(r => r.x.y)", "expression: 1:24: cannot read property 'y' of null (use ?.)"},
		{"({ [[1]]: 1 })", "expression: 1:5: an object key must be a string or a number, got a list"},
		{"[...1]", "expression: 1:5: cannot spread a number into a list"},
		{"s(1)", "expression: 1:1: 's' is a string, not a function"},
		{"`${html('<b>x</b>')}`", "expression: 1:4: an HTML node is not text; use htmlText(node) or attr(node, name)"},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			got := evalJSON(t, env, tc.src, vars)
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	env := expr.NewEnv()
	tests := []struct{ src, want string }{
		{"", "1:1: empty expression"},
		{"1 +", "1:4: unexpected end of the expression"},
		{"a = 1", "1:3: assignment ('=') is not allowed: expressions cannot change values; bind a new name with let instead"},
		{"a += 1", "1:3: assignment ('+=') is not allowed: expressions cannot change values; bind a new name with let instead"},
		{"a++", "1:2: '++' is not allowed: expressions cannot change values"},
		{"--a", "1:1: '--' is not allowed: expressions cannot change values"},
		{"new Date()", "1:1: 'new' is not allowed"},
		{"this.x", "1:1: 'this' is not allowed"},
		{"function f() {}", "1:1: 'function' is not allowed; write an arrow function as a call argument, e.g. rows.map(r => r.name)"},
		{"class A {}", "1:1: 'class' is not allowed; write an arrow function as a call argument, e.g. rows.map(r => r.name)"},
		{"delete a.b", "1:1: 'delete' is not allowed; use omit(obj, ['key'])"},
		{"typeof a", "1:1: 'typeof' is not allowed; use typeOf(x)"},
		{"a instanceof b", "1:3: 'instanceof' is not allowed; use typeOf(x)"},
		{"'a' in b", "1:5: 'in' is not allowed; use has(obj, key) or list.includes(x)"},
		{"void 0", "1:1: 'void' is not allowed"},
		{"/ab+c/.test(s)", "1:1: regex literals are not allowed; write the pattern as a string, e.g. '\\d+' or '(?i)abc'"},
		{"a; b", "1:2: ';' is not allowed: an expression is one expression, not statements"},
		{"a | b", "1:3: bitwise operator '|' is not allowed"},
		{"a & b", "1:3: bitwise operator '&' is not allowed"},
		{"a ^ b", "1:3: bitwise operator '^' is not allowed"},
		{"~a", "1:1: bitwise operator '~' is not allowed"},
		{"a << 1", "1:3: bitwise operator '<<' is not allowed"},
		{"a >>> 1", "1:3: bitwise operator '>>>' is not allowed"},
		{"2 ** 3", "1:3: '**' is not allowed"},
		{"x => x", ""},
		{"[x => x]", "1:2: an arrow function can only be a call argument, as in rows.map(r => r.x), or the body of a function"},
		{"f(x => y => 1)", "1:8: an arrow function can only be a call argument, as in rows.map(r => r.x), or the body of a function"},
		{"f(x => { a: 1 })", "1:8: an arrow function's body is one expression, not a block; to return an object write x => ({ … })"},
		{"a ?? b || c", "1:8: cannot mix '??' with '||' or '&&' without parentheses"},
		{"a || b ?? c", "1:8: cannot mix '??' with '||' or '&&' without parentheses"},
		{"'abc", "1:1: unterminated string: missing closing '"},
		{"`abc", "1:1: unterminated template literal: missing closing '`'"},
		{"1 /* x", "1:3: unterminated comment: '/*' without '*/'"},
		{"a.", "1:3: expected a property name after '.', found end of the expression"},
		{"f(1 2)", "1:5: expected ',' or ')' in the arguments, found the number 2"},
		{"[1 2]", "1:4: expected ',' or ']' in the list, found the number 2"},
		{"{a 1}", "1:4: expected ':' after the key 'a', found the number 1"},
		{"(1, 2)", "1:3: the comma operator is not allowed"},
		{"f(...xs)", "1:3: spread ('...') is only allowed inside list and object literals"},
		{"3px", "1:2: unexpected 'p' right after the number 3"},
		{"a\n  .b +\n  #", "3:3: unexpected character \"#\""},
		{"'中文' + @", "1:8: unexpected character \"@\""},
		{"if (a) b", "1:1: 'if' is not allowed: an expression is one expression, not JavaScript statements"},
		{"a = 1 + b++", "1:3: assignment ('=') is not allowed: expressions cannot change values; bind a new name with let instead\n1:10: '++' is not allowed: expressions cannot change values"},
		{strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), "1:65: expression nests too deeply (more than 64 levels)"},
		{strings.Repeat("!", 70) + "1", "1:65: expression nests too deeply (more than 64 levels)"},
		{strings.Repeat("x", 16*1024+1), "1:1: expression is too long (16385 bytes, the limit is 16384)"},
	}
	for _, tc := range tests {
		name := tc.src
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			_, err := env.Parse(tc.src)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	env := stdlib.NewEnv()
	inScope := func(n string) bool { return n == "input" || n == "page" || n == "now" }
	tests := []struct{ src, want string }{
		{"input.a + page.b", ""},
		{"rows.map(r => r.x)", "1:1: unknown name 'rows'"},
		{"input.rows.map(r => r.x + q)", "1:27: unknown name 'q'"},
		{"input.rows.map(r => r.x).filter(x => r)", "1:38: unknown name 'r'"},
		{"undefined", "1:1: unknown name 'undefined' (there is no undefined; use null)"},
		{"eval('1')", "1:1: 'eval' is not allowed"},
		{"nosuch(1)", "1:1: unknown function 'nosuch'"},
		{"input.x.nosuch()", "1:9: unknown method 'nosuch'"},
		{"Math.max(input.a, 1)", "1:1: unknown name 'Math' (use round, floor, ceil, abs, min, max or clamp)"},
		{"JSON.stringify(input)", "1:1: unknown name 'JSON' (use json(text) and toJson(value))"},
		{"input.n.toFixed(2)", "1:9: unknown method 'toFixed' (use fixed(x, digits))"},
		{"input.rows.push(1)", "1:12: unknown method 'push' (lists never change; use concat(list, [x]) or [...list, x])"},
		{"input.x.range()", "1:9: 'range' is not a method; call it as range(x, …)"},
		{"map(input)", "1:1: map: takes 2 arguments, got 1"},
		{"input.slice(1, 2, 3)", "1:7: slice: takes 1 to 3 arguments, got 4"},
		{"test(input, '(?<=a)b')", "1:14: test: look-behind '(?<=' at offset 0 is not supported (regexes are RE2: no look-around)"},
		{"input.s.match('(a)\\\\1')", "1:19: match: back-reference '\\1' at offset 3 is not supported (regexes are RE2: no back-references)"},
		{"replace(input, '[', '')", "1:16: replace: invalid regex: missing closing ]: `[`"},
		{"test(input, '" + strings.Repeat("a", 1001) + "')", "1:13: test: regex is too long (1001 bytes, the limit is 1000)"},
		{"[a, b]", "1:2: unknown name 'a'\n1:5: unknown name 'b'"},
		{"({ room })", "1:4: unknown name 'room'"},
		{"input.map(num)", ""},
		{"`${x}`", "1:4: unknown name 'x'"},
		// A whole expression field that is an arrow function is refused when it is checked, not
		// only when its value reaches a result (only functions: bodies are arrows).
		{"x => x", "1:1: an arrow function can only be a call argument, as in rows.map(r => r.x), or the body of a function"},
		{"(a, b) => input", "1:1: an arrow function can only be a call argument, as in rows.map(r => r.x), or the body of a function"},
		{"input => 1", "1:1: an arrow function can only be a call argument, as in rows.map(r => r.x), or the body of a function"},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			x, err := env.Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if errs := x.Check(inScope); len(errs) > 0 {
				got = errs.Error()
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestUserFunctions(t *testing.T) {
	shared := stdlib.NewEnv()
	define := func(env *expr.Env, name, src string) {
		t.Helper()
		x, err := env.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Define(name, x); err != nil {
			t.Fatal(err)
		}
	}
	define(shared, "double", "x => x * 2")
	define(shared, "quad", "x => double(double(x))")
	define(shared, "label", "(a, b) => `${a}-${b ?? '?'}`")
	tool := shared.Extend()
	define(tool, "double", "x => x + x + 0.5") // the tool's own definition wins in the tool
	define(tool, "useAll", "xs => xs.map(quad)")

	tests := []struct {
		env       *expr.Env
		src, want string
	}{
		{shared, "double(4)", "8"},
		{shared, "quad(1)", "4"},
		{tool, "double(4)", "8.5"},
		{tool, "quad(1)", "4"}, // quad was defined in shared: it calls shared's double
		{tool, "useAll([1, 2])", "[4,8]"},
		{shared, "label(1)", `"1-?"`},
		{shared, "label(1, 2, 3)", `"1-2"`},
		{shared, "[1, 2].map(double)", "[2,4]"},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			if got := evalJSON(t, tc.env, tc.src, nil); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}

	// A function may only call functions defined before it.
	early, _ := shared.Parse("x => later(x)")
	if err := shared.Define("early", early); err != nil {
		t.Fatal(err)
	}
	define(shared, "later", "x => early(x)")
	errs := shared.Function("early").Check(nil)
	if got, want := errs.Error(), "1:6: function 'later' is defined later; a function may only call functions defined before it"; got != want {
		t.Errorf("check early: got %s, want %s", got, want)
	}
	if got, want := evalJSON(t, shared, "later(1)", nil), "expression: 1:6: unknown function 'later'"; got != want {
		t.Errorf("later(1): got %s, want %s", got, want)
	}
	// Errors of Define.
	notArrow, _ := shared.Parse("1 + 1")
	if err := shared.Define("f", notArrow); err == nil || err.Error() != "1:3: function 'f' must be an arrow function, e.g. (c) => htmlText(c).trim()" {
		t.Errorf("Define(not an arrow) = %v", err)
	}
	dbl, _ := shared.Parse("x => x")
	if err := shared.Define("double", dbl); err == nil || err.Error() != "function 'double' is defined twice" {
		t.Errorf("Define(twice) = %v", err)
	}
}

// A function value passed to itself cannot recurse without limit.
func TestSelfApplicationStops(t *testing.T) {
	env := stdlib.NewEnv()
	x, _ := env.Parse("f => f(f)")
	if err := env.Define("self", x); err != nil {
		t.Fatal(err)
	}
	got := evalJSON(t, env, "self(self)", nil)
	if !strings.HasPrefix(got, "limit: ") || !strings.Contains(got, "function calls nest too deeply (more than 100)") {
		t.Errorf("got %s", got)
	}
}

func TestBudget(t *testing.T) {
	env := stdlib.NewEnv()
	// Exact costs: one per node, one per element a builtin visits.
	costs := []struct {
		src  string
		want int
	}{
		{"1", 1},
		{"1 + 2", 3},
		{"1 + 2 * 3", 5},
		{"[1, 2, 3]", 4},
		{"page.n", 2},
		{"true ? 1 : 2", 3}, // the untaken branch costs nothing
		{"range(10)", 12},   // call + literal + 10 items
		{"range(10).map(x => x)", 12 + 1 + 1 + 10 + 10}, // method, arrow, 10 visits, 10 bodies
	}
	for _, tc := range costs {
		x, err := env.Parse(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		b := expr.NewBudget(expr.DefaultBudget)
		if _, err := x.Eval(context.Background(), testVars(t), b); err != nil {
			t.Fatal(err)
		}
		if b.Used() != tc.want {
			t.Errorf("%s: used %d operations, want %d", tc.src, b.Used(), tc.want)
		}
	}

	// Exhaustion: charged before the work, so a huge request fails without doing it.
	for _, src := range []string{
		"range(10000).map(x => range(10000).map(y => x * y))",
		"range(10000).map(x => range(10000)).flat()",
		"range(10000).map(x => 'abc'.repeat(1000)).join('')",
		"range(10000).reduce((a, x) => a + x, 0) + range(10000).map(x => range(10000)).length",
	} {
		x, err := env.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		b := expr.NewBudget(expr.DefaultBudget)
		_, err = x.Eval(context.Background(), nil, b)
		var re *expr.RuntimeError
		if !errors.As(err, &re) || re.Kind != "limit" || !errors.Is(err, expr.ErrBudget) ||
			!strings.HasSuffix(err.Error(), "expression budget exceeded (100000 operations)") {
			t.Errorf("%s: err = %v", src, err)
		}
		if b.Used() > expr.DefaultBudget {
			t.Errorf("%s: used %d > budget", src, b.Used())
		}
	}
}

// One budget shared by concurrent evaluations (an each step with concurrency 4) stops them all.
func TestBudgetConcurrent(t *testing.T) {
	env := stdlib.NewEnv()
	x, err := env.Parse("range(1000).map(x => x + 1).length")
	if err != nil {
		t.Fatal(err)
	}
	b := expr.NewBudget(10_000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	fails := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := x.Eval(context.Background(), nil, b); err != nil {
				mu.Lock()
				fails++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Each run costs 3007 operations: at most three of eight fit in 10,000.
	if fails < 5 || b.Used() != 10_000 {
		t.Errorf("fails = %d, used = %d", fails, b.Used())
	}
}

func TestContextCancel(t *testing.T) {
	env := stdlib.NewEnv()
	x, _ := env.Parse("range(5000).map(x => x * 2)")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := x.Eval(ctx, nil, nil)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestFormat(t *testing.T) {
	env := stdlib.NewEnv()
	src := "page.rows\n  .map(r => r.x.y)"
	x, _ := env.Parse(src)
	_, err := x.Eval(context.Background(), testVars(t), nil)
	got := expr.Format(src, err)
	want := "2:17: cannot read property 'y' of null (use ?.)\n      .map(r => r.x.y)\n                    ^"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Wide characters before the column count twice in a terminal.
	src = "'教室' + a b"
	_, err = env.Parse(src)
	got = expr.Format(src, err)
	want = "1:10: unexpected 'b' after the end of the expression\n    '教室' + a b\n               ^"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := expr.Format("x", fmt.Errorf("plain")); got != "plain" {
		t.Errorf("plain error: %q", got)
	}
}

// TestCheckFunctionBodyArrow: a function defined with Define is an arrow by its nature, so
// checking it does not report the arrow that Check refuses in an expression field.
func TestCheckFunctionBodyArrow(t *testing.T) {
	env := stdlib.NewEnv()
	x, err := env.Parse("(c) => c + 1")
	if err != nil {
		t.Fatal(err)
	}
	if errs := x.Check(nil); len(errs) != 1 {
		t.Fatalf("as an expression field: got %v, want the arrow refused", errs)
	}
	if err := env.Define("inc", x); err != nil {
		t.Fatal(err)
	}
	if errs := env.Function("inc").Check(nil); len(errs) != 0 {
		t.Fatalf("as a function body: got %v, want no error", errs)
	}
}
