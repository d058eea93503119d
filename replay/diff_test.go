package replay

import (
	"math"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
)

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := expr.FromJSON([]byte(s))
	if err != nil {
		t.Fatalf("FromJSON(%s): %v", s, err)
	}
	return v
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name      string
		got, want string
		lines     []string
	}{
		{"equal", `{"a":[1,{"b":"x"}]}`, `{"a":[1,{"b":"x"}]}`, nil},
		{"key order ignored", `{"a":1,"b":2}`, `{"b":2,"a":1}`, nil},
		{"nested number", `{"rooms":[{"seats":1},{"seats":2},{"seats":40}]}`, `{"rooms":[{"seats":1},{"seats":2},{"seats":50}]}`,
			[]string{"$.rooms[2].seats: got 40, want 50"}},
		{"type differs", `{"n":"40"}`, `{"n":40}`, []string{`$.n: got "40" (string), want 40 (number)`}},
		{"missing and extra keys", `{"a":1,"c":3}`, `{"a":1,"b":"一教"}`,
			[]string{`$.b: missing, want "一教"`, "$.c: got 3, not expected"}},
		{"list lengths", `[1,2,3]`, `[1,2]`, []string{"$: got 3 items, want 2", "$[2]: got 3, not expected"}},
		{"list shorter", `[1]`, `[1,{"x":null}]`, []string{"$: got 1 items, want 2", `$[1]: missing, want {"x":null}`}},
		{"odd keys", `{"a b":1,"é":2}`, `{"a b":2,"é":2}`, []string{`$["a b"]: got 1, want 2`}},
		{"null vs object", `null`, `{"a":1}`, []string{`$: got null (null), want {"a":1} (object)`}},
		{"top scalar", `1.5`, `2`, []string{"$: got 1.5, want 2"}},
		{"html chars kept", `"<a>&"`, `"x"`, []string{`$: got "<a>&", want "x"`}},
		{"long strings", `{"t":"` + strings.Repeat("一", 100) + `abc` + strings.Repeat("x", 100) + `"}`, `{"t":"` + strings.Repeat("一", 100) + `abd` + strings.Repeat("x", 100) + `"}`,
			[]string{`$.t: strings differ at character 103 (lengths 203 and 203): got …"` + strings.Repeat("一", 18) + `abc` + strings.Repeat("x", 39) + `"…, want …"` + strings.Repeat("一", 18) + `abd` + strings.Repeat("x", 39) + `"…`}},
		{"long string shorter", `"` + strings.Repeat("a", 70) + `"`, `"` + strings.Repeat("a", 71) + `"`,
			[]string{`$: strings differ at character 71 (lengths 70 and 71): got …"` + strings.Repeat("a", 20) + `", want …"` + strings.Repeat("a", 21) + `"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(mustJSON(t, tc.got), mustJSON(t, tc.want))
			if strings.Join(got, "\n") != strings.Join(tc.lines, "\n") {
				t.Errorf("Diff:\ngot:  %q\nwant: %q", got, tc.lines)
			}
		})
	}
}

func TestDiffCapped(t *testing.T) {
	var got, want []any
	for i := 0; i < 30; i++ {
		got = append(got, float64(i))
		want = append(want, float64(i+1))
	}
	lines := Diff(got, want)
	if len(lines) != maxDiffLines+1 {
		t.Fatalf("got %d lines, want %d", len(lines), maxDiffLines+1)
	}
	if lines[0] != "$[0]: got 0, want 1" || lines[maxDiffLines] != "… and 10 more differences" {
		t.Errorf("unexpected lines: %q … %q", lines[0], lines[maxDiffLines])
	}
}

func TestShow(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{true, "true"},
		{3.0, "3"},
		{0.1, "0.1"},
		{1e21, "1e+21"},
		{math.NaN(), "NaN"},
		{math.Inf(-1), "-Infinity"},
		{"a\"b\n", `"a\"b\n"`},
		{[]any{1.0, "x", nil}, `[1,"x",null]`},
		{strings.Repeat("x", 200), `"` + strings.Repeat("x", 119) + "…"},
		{strings.Repeat("一", 100), `"` + strings.Repeat("一", 39) + "…"},
	}
	for _, tc := range tests {
		if got := Show(tc.v); got != tc.want {
			t.Errorf("Show(%v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

// TestDiffNaNIsNull: a result is written as JSON, where NaN and ±Infinity are null (docs/DECISIONS.md
// §1), so `expect: null` matches them, `.nan` still does, and the values compared are not changed.
func TestDiffNaNIsNull(t *testing.T) {
	obj := expr.NewObject(3)
	obj.Set("ok", 1.0)
	obj.Set("nan", math.NaN())
	obj.Set("list", []any{1.0, math.Inf(1), []any{math.Inf(-1)}})
	want := mustJSON(t, `{"ok":1,"nan":null,"list":[1,null,[null]]}`)
	if d := Diff(obj, want); d != nil {
		t.Errorf("NaN and Infinity against null: %q", d)
	}
	if d := Diff(math.NaN(), math.NaN()); d != nil {
		t.Errorf("NaN against .nan: %q", d)
	}
	if d := Diff(math.NaN(), 0.0); len(d) != 1 || d[0] != "$: got null (null), want 0 (number)" {
		t.Errorf("NaN against 0: %q", d)
	}
	if v, _ := obj.Get("nan"); !math.IsNaN(v.(float64)) {
		t.Errorf("Diff changed its argument: nan is %v", v)
	}
	if v, _ := obj.Get("list"); !math.IsInf(v.([]any)[1].(float64), 1) {
		t.Errorf("Diff changed its argument: list is %v", v)
	}
	if d := Diff(mustJSON(t, `{"a":[1,2]}`), mustJSON(t, `{"a":[1,3]}`)); len(d) != 1 || d[0] != "$.a[1]: got 2, want 3" {
		t.Errorf("plain values: %q", d)
	}
}
