package expr_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
	"golang.org/x/net/html"
)

func TestFormatNumber(t *testing.T) {
	tenth := 0.1 // a variable, so that the sum is computed in float64
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1, "-1"}, {3.5, "3.5"}, {-0.25, "-0.25"},
		{1e15, "1000000000000000"}, {1e20, "100000000000000000000"}, {1e21, "1e+21"}, {1.5e21, "1.5e+21"},
		{123456789.125, "123456789.125"}, {tenth + 2*tenth, "0.30000000000000004"},
		{1e-6, "0.000001"}, {1.5e-6, "0.0000015"}, {1e-7, "1e-7"}, {-2.5e-8, "-2.5e-8"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {5e-324, "5e-324"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
		{9007199254740993, "9007199254740992"},
	}
	for _, tc := range tests {
		if got := expr.FormatNumber(tc.f); got != tc.want {
			t.Errorf("FormatNumber(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	tests := []struct{ in, compact, indented string }{
		{`{"z": 1, "a": [true, false, null], "m": {"k": "v"}}`, `{"z":1,"a":[true,false,null],"m":{"k":"v"}}`,
			"{\n  \"z\": 1,\n  \"a\": [\n    true,\n    false,\n    null\n  ],\n  \"m\": {\n    \"k\": \"v\"\n  }\n}"},
		{`"中文 \u4e2d \ud83d\ude00 \n \"q\" \\ \/ \b\f"`, `"中文 中 😀 \n \"q\" \\ / \b\f"`, `"中文 中 😀 \n \"q\" \\ / \b\f"`},
		{`[1.0, -0.5, 1e2, 12345678901234567890]`, `[1,-0.5,100,12345678901234567000]`, "[\n  1,\n  -0.5,\n  100,\n  12345678901234567000\n]"},
		{`{"a": 1, "a": 2}`, `{"a":2}`, "{\n  \"a\": 2\n}"},
		{`{"constructor": 1, "__proto__": 2}`, `{"constructor":1,"__proto__":2}`, "{\n  \"constructor\": 1,\n  \"__proto__\": 2\n}"},
		{`[]`, `[]`, `[]`}, {`{}`, `{}`, `{}`}, {` 7 `, `7`, `7`},
		{`"\u0001<>&\u2028"`, `"\u0001<>&` + "\u2028" + `"`, `"\u0001<>&` + "\u2028" + `"`},
	}
	for _, tc := range tests {
		v, err := expr.FromJSON([]byte(tc.in))
		if err != nil {
			t.Fatalf("FromJSON(%s): %v", tc.in, err)
		}
		b, err := expr.ToJSON(v, "")
		if err != nil || string(b) != tc.compact {
			t.Errorf("ToJSON(%s) = %s, %v; want %s", tc.in, b, err, tc.compact)
		}
		b, err = expr.ToJSON(v, "  ")
		if err != nil || string(b) != tc.indented {
			t.Errorf("ToJSON(%s, indent) = %s, %v; want %s", tc.in, b, err, tc.indented)
		}
	}
}

func TestFromJSONErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "json: 1:1: unexpected end of input"},
		{`{"a" 1}`, "json: 1:6: expected ':' after key, found '1'"},
		{`[1,]`, "json: 1:4: unexpected ']'"},
		{"{\n  \"a\": tru\n}", "json: 2:8: unexpected 't'"},
		{`"abc`, "json: 1:5: unterminated string"},
		{`01`, "json: 1:2: unexpected '1' after the JSON value"},
		{`{"a":1} x`, "json: 1:9: unexpected 'x' after the JSON value"},
		{`"\x"`, "json: 1:2: invalid escape '\\x' in string"},
		{`1.`, "json: 1:3: invalid number: no digits after '.'"},
		{`{1: 2}`, "json: 1:2: expected a string key, found '1'"},
		{strings.Repeat("[", 600), "json: 1:514: nested more than 512 levels"},
	}
	for _, tc := range tests {
		_, err := expr.FromJSON([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("FromJSON(%.20q) error = %v, want %s", tc.in, err, tc.want)
		}
	}
}

func TestToJSONRefusesNodes(t *testing.T) {
	doc, _ := html.Parse(strings.NewReader("<p>x</p>"))
	o := expr.NewObject(1)
	o.Set("cell", &expr.Node{N: doc})
	_, err := expr.ToJSON([]any{1.0, []any{o}}, "")
	want := "[1][0].cell: an HTML node cannot be part of a result; use htmlText(...) or attr(...) to read text from it"
	if err == nil || err.Error() != want || !errors.Is(err, expr.ErrNodeInJSON) {
		t.Errorf("err = %v, want %s", err, want)
	}
	if _, err := expr.ToJSON(math.NaN(), ""); err != nil {
		t.Error(err)
	}
	if b, _ := expr.ToJSON([]any{math.NaN(), math.Inf(-1)}, ""); string(b) != "[null,null]" {
		t.Errorf("NaN/Inf: %s", b)
	}
}

func TestFromGo(t *testing.T) {
	type S struct{ A int }
	v, err := expr.FromGo(map[string]any{"b": []int{1, 2}, "a": int64(3), "c": map[string]string{"y": "1", "x": "2"}, "d": nil, "e": float32(0.5), "f": true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := expr.ToJSON(v, "")
	if want := `{"a":3,"b":[1,2],"c":{"x":"2","y":"1"},"d":null,"e":0.5,"f":true}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	if _, err := expr.FromGo(map[string]any{"s": S{1}}); err == nil || err.Error() != "s: unsupported Go type expr_test.S" {
		t.Errorf("struct: err = %v", err)
	}
	if _, err := expr.FromGo(map[int]int{1: 1}); err == nil || err.Error() != "map keys must be strings, not int" {
		t.Errorf("int keys: err = %v", err)
	}
}

func TestEqualAndTypeOf(t *testing.T) {
	a := mustJSON(t, `{"x": [1, {"y": null}], "z": "s"}`)
	b := mustJSON(t, `{"z": "s", "x": [1, {"y": null}]}`)
	c := mustJSON(t, `{"z": "s", "x": [1, {"y": 0}]}`)
	if !expr.Equal(a, b) || expr.Equal(a, c) || expr.Equal(1.0, "1") || expr.Equal(nil, false) || !expr.Equal(math.NaN(), math.NaN()) {
		t.Error("Equal is wrong")
	}
	for v, want := range map[any]string{nil: "null", true: "boolean", 1.0: "number", "s": "string"} {
		if got := expr.TypeOf(v); got != want {
			t.Errorf("TypeOf(%v) = %s", v, got)
		}
	}
	if expr.TypeOf([]any{}) != "list" || expr.TypeOf(expr.NewObject(0)) != "object" || expr.TypeOf(&expr.Node{}) != "node" {
		t.Error("TypeOf of containers")
	}
}

func TestObject(t *testing.T) {
	o := expr.NewObject(0)
	for i := 0; i < 20; i++ { // past the linear-scan size, into the index
		o.Set(string(rune('t'-i)), float64(i))
	}
	o.Set("t", "again") // an existing key keeps its place
	if o.Len() != 20 || o.Keys()[0] != "t" || o.Keys()[19] != string(rune('t'-19)) {
		t.Fatalf("keys = %v", o.Keys())
	}
	if v, ok := o.Get("t"); !ok || v != "again" {
		t.Errorf("Get(t) = %v, %v", v, ok)
	}
	if _, ok := o.Get("zz"); ok {
		t.Error("Get(zz) found")
	}
	o.Delete("s")
	if v, _ := o.Get("r"); o.Len() != 19 || v != 2.0 {
		t.Errorf("after Delete: len %d, r = %v", o.Len(), v)
	}
}

func TestTemplates(t *testing.T) {
	env := stdlib.NewEnv()
	vars := testVars(t)
	tests := []struct {
		src, want string
		single    bool
	}{
		{"plain text", `"plain text"`, false},
		{"", `""`, false},
		{"${input.n}", "2", true},
		{"${input.tags}", `["a","b"]`, true},
		{"${none}", "null", true},
		{"${page.rows[0]}", `{"room":"101","cap":"60"}`, true},
		{" ${input.n}", `" 2"`, false},
		{"n=${input.n}, tags=${input.tags}, none=${none}, ok=${page.success}", `"n=2, tags=[\"a\",\"b\"], none=, ok=true"`, false},
		{"$${literal} and ${1 + 1}", `"${literal} and 2"`, false},
		{"$${x}", `"${x}"`, false},
		{"cost: $5, ${'{'}braces{}", `"cost: $5, {braces{}"`, false},
		{"${ { a: '}' }.a }", `"}"`, true},
		{"${`in ${'nested'}`}", `"in nested"`, true},
		{"a ${/* c */ 1} b", `"a 1 b"`, false},
		{"${input.building ?? \"二教\"}", `"二教"`, true},
		{"${input.tags.map(t => upper(t)).join('+')}", `"A+B"`, true},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			tp, err := env.ParseTemplate(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if tp.IsSingle() != tc.single {
				t.Errorf("IsSingle = %v", tp.IsSingle())
			}
			if errs := tp.Check(func(n string) bool { _, ok := vars[n]; return ok }); len(errs) > 0 {
				t.Fatal(errs)
			}
			v, err := tp.Render(context.Background(), vars, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := expr.ToJSON(v, "")
			if string(b) != tc.want {
				t.Errorf("got %s, want %s", b, tc.want)
			}
		})
	}
}

func TestTemplateErrors(t *testing.T) {
	env := stdlib.NewEnv()
	parse := []struct{ src, want string }{
		{"a ${", "1:3: unterminated '${' in template: missing '}'"},
		{"a ${1 + }", "1:9: unexpected '}'"},
		{"x\ny ${}", "2:3: empty ${} in template"},
		{"${1 2}", "1:5: expected '}' to close '${', found the number 2"},
		{"${a = 1}", "1:5: assignment ('=') is not allowed: expressions cannot change values; bind a new name with let instead"},
		{"${x => x}", "1:3: an arrow function can only be a call argument, as in rows.map(r => r.x), or the body of a function"},
	}
	for _, tc := range parse {
		_, err := env.ParseTemplate(tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseTemplate(%q) = %v, want %s", tc.src, err, tc.want)
		}
	}
	tp, _ := env.ParseTemplate("line one\nvalue: ${q + 1} ${page.empty.x}")
	if errs := tp.Check(func(n string) bool { return n == "page" }); errs.Error() != "2:10: unknown name 'q'" {
		t.Errorf("Check = %v", errs)
	}
	_, err := tp.Render(context.Background(), expr.MapVars{"q": 1.0, "page": mustJSON(t, `{"empty": null}`)}, nil)
	if err == nil || err.Error() != "2:30: cannot read property 'x' of null (use ?.)" {
		t.Errorf("Render error = %v", err)
	}
}

func TestRegexp(t *testing.T) {
	env := expr.NewEnv()
	ok := []struct{ pattern, in string }{
		{`(?i)^yanyuan`, "YanYuan"},
		{`(?u)\d+元`, "12元"},
		{`(?iu)abc`, "ABC"},
		{`(?ms)^a.b$`, "x\na\nb"},
		{`(?u:x)y`, "xy"},
		{`(?<name>\d+)`, "7"},
		{`[]a]`, "]"},
	}
	for _, tc := range ok {
		re, err := env.Regexp(tc.pattern)
		if err != nil {
			t.Errorf("Regexp(%q): %v", tc.pattern, err)
			continue
		}
		if !re.MatchString(tc.in) {
			t.Errorf("Regexp(%q) does not match %q", tc.pattern, tc.in)
		}
	}
	bad := []struct{ pattern, want string }{
		{`a(?=b)`, "look-ahead '(?=' at offset 1 is not supported (regexes are RE2: no look-around)"},
		{`a(?!b)`, "negative look-ahead '(?!' at offset 1 is not supported (regexes are RE2: no look-around)"},
		{`(?<=a)b`, "look-behind '(?<=' at offset 0 is not supported (regexes are RE2: no look-around)"},
		{`(?<!a)b`, "negative look-behind '(?<!' at offset 0 is not supported (regexes are RE2: no look-around)"},
		{`(a)\1`, "back-reference '\\1' at offset 3 is not supported (regexes are RE2: no back-references)"},
		{`(?<x>a)\k<x>`, "named back-reference '\\k<…>' at offset 7 is not supported (regexes are RE2: no back-references)"},
		{`a{2`, ""},
		{`(`, "invalid regex: missing closing ): `(`"},
		{`a**`, "invalid regex: invalid nested repetition operator: `**`"},
		{strings.Repeat("a", 1001), "regex is too long (1001 bytes, the limit is 1000)"},
	}
	for _, tc := range bad {
		_, err := env.Regexp(tc.pattern)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Regexp(%.20q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
	// Cached: the same *Regexp comes back.
	a, _ := env.Regexp(`x+`)
	b, _ := env.Extend().Regexp(`x+`)
	if a != b {
		t.Error("regex cache not shared with a layer")
	}
}

func TestParseCache(t *testing.T) {
	env := expr.NewEnv()
	a, _ := env.Parse("1 + 1")
	b, _ := env.Parse("1 + 1")
	if a != b {
		t.Error("parse not cached")
	}
	if c, _ := env.Extend().Parse("1 + 1"); c == a {
		t.Error("a layer must parse for itself")
	}
}

func TestCanonical(t *testing.T) {
	env := expr.NewEnv()
	tests := []struct{ src, want string }{
		{"1 + 2 * 3", "1 + 2 * 3"},
		{"(1 + 2) * 3", "(1 + 2) * 3"},
		{"1 - (2 - 3)", "1 - (2 - 3)"},
		{"(1 - 2) - 3", "1 - 2 - 3"},
		{"a?.b[c].d(e, f => f.g)", "a?.b[c].d(e, (f) => f.g)"},
		{"-x + -3 - -(-y) + !!z + -!w", "-x + (-3) - - -y + !!z + -!w"},
		{"{a: 1, ...b, [c]: 'd\\n'}", `{"a": 1, ...b, [c]: "d\n"}`},
		{"`a${b}c\\``", "`a${b}c\\``"},
		{"x ? y : z ?? w", "x ? y : z ?? w"},
		{"(a ? b : c) ? d : e", "(a ? b : c) ? d : e"},
		{"(a || b) ?? c", "(a || b) ?? c"},
		{"f?.(1)", "f?.(1)"},
		{"(1).x + (-1).y", "(1).x + (-1).y"},
		{"f(x => ({ a: x }))", `f((x) => ({"a": x}))`},
		{"!(a && b)", "!(a && b)"},
	}
	for _, tc := range tests {
		x, err := env.Parse(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.Canonical(); got != tc.want {
			t.Errorf("Canonical(%s) = %s, want %s", tc.src, got, tc.want)
		}
	}
}

func TestObjectCopiesAndFuncs(t *testing.T) {
	o := expr.NewObject(0)
	for i := 0; i < 12; i++ {
		o.Set(strings.Repeat("k", i+1), float64(i))
	}
	c := o.Clone(1)
	c.Set("new", true)
	if o.Len() != 12 || c.Len() != 13 {
		t.Fatalf("Clone shares storage: %d %d", o.Len(), c.Len())
	}
	if v, _ := c.Get("kkkkkkkkkkkk"); v != 11.0 {
		t.Errorf("Clone lost a key: %v", v)
	}
	if vals := o.Values(); len(vals) != 12 || vals[3] != 3.0 {
		t.Errorf("Values = %v", vals)
	}
	var nilObj *expr.Object
	if nilObj.Len() != 0 || nilObj.Keys() != nil || nilObj.Values() != nil {
		t.Error("nil object")
	}
	if _, ok := nilObj.Get("a"); ok {
		t.Error("nil object Get")
	}

	env := stdlib.NewEnv()
	y, _ := env.Parse("f(x => x, upper)")
	env.Register("f", func(c *expr.Call, args []any) (any, error) {
		a, b := args[0].(*expr.Func), args[1].(*expr.Func)
		return []any{a.Name(), float64(a.Arity()), b.Name(), float64(b.Arity())}, nil
	})
	v, err := y.Eval(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := expr.ToJSON(v, ""); string(got) != `["",1,"upper",-1]` {
		t.Errorf("Func accessors: %s", got)
	}
	if eq, n := expr.EqualCount([]any{1.0, []any{2.0}}, []any{1.0, []any{2.0}}); !eq || n != 4 { // two lists and two numbers
		t.Errorf("EqualCount = %v, %d", eq, n)
	}
}

// TestToJSONDeepPathIsShort: a value nested past the limit is refused with a path cut short, not
// one "[0]" per level.
func TestToJSONDeepPathIsShort(t *testing.T) {
	var v any = 1.0
	for i := 0; i < 600; i++ {
		v = []any{v}
	}
	_, err := expr.ToJSON(v, "")
	want := strings.Repeat("[0]", 13) + "[…" + strings.Repeat("[0]", 13) + "[0]: nested more than 512 levels"
	if err == nil || len(err.Error()) > 200 || !strings.HasSuffix(err.Error(), "]: nested more than 512 levels") || !strings.Contains(err.Error(), "…") {
		t.Errorf("err = %v, want something like %s", err, want)
	}
	o := expr.NewObject(1)
	o.Set("a", v)
	if _, err := expr.ToJSON(o, ""); err == nil || !strings.HasPrefix(err.Error(), "a[0][0]") {
		t.Errorf("err = %v, want it to start with the path a[0][0]", err)
	}
}

// TestToJSONRootMessage: a node or function that is the whole value is refused without a path,
// so that the caller's own prefix is not doubled ("result: result: …").
func TestToJSONRootMessage(t *testing.T) {
	doc, _ := html.Parse(strings.NewReader("<p>x</p>"))
	if _, err := expr.ToJSON(&expr.Node{N: doc}, ""); err == nil || !strings.HasPrefix(err.Error(), "an HTML node cannot be part of a result") || !errors.Is(err, expr.ErrNodeInJSON) {
		t.Errorf("node: err = %v", err)
	}
	if _, err := expr.ToJSON([]any{&expr.Node{N: doc}}, ""); err == nil || !strings.HasPrefix(err.Error(), "[0]: an HTML node") {
		t.Errorf("node in a list: err = %v", err)
	}
}
