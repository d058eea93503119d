// Package bench compares the plugin language's expression engine (lang/expr with lang/stdlib)
// with github.com/expr-lang/expr and github.com/dop251/goja on the same data and expressions.
// It is a nested module so that the rivals stay out of the main go.mod (STYLE.md §6).
//
//	cd bench && go test -run '^$' -bench . -benchmem -count=3
//
// Each engine gets its data in its own native form, built once outside the timed loop: our
// values (expr.FromJSON), Go maps for expr-lang, JS objects (JSON.parse) for goja. num is the
// same Go function (stdlib.ParseNum) in all three. Programs are compiled once; expr-lang reuses
// one vm.VM and goja one Runtime, as careful users of each would.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/andybalholm/cascadia"
	"github.com/dop251/goja"
	"golang.org/x/net/html"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// rowsJSON is 1,000 classroom rows: room, building, cap (text such as "120人") and seats.
var rowsJSON = func() []byte {
	var b strings.Builder
	b.WriteString("[")
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"room":"%d教%03d","building":"%d教","cap":"%d人","seats":%d}`,
			i%4+1, i, i%4+1, (i*37)%150, (i*37)%150)
	}
	b.WriteString("]")
	return []byte(b.String())
}()

// numGo is num(x, default): the number in x (a number, or text read by stdlib.ParseNum), else
// default.
func numGo(x, def any) any {
	switch v := x.(type) {
	case float64:
		return v
	case string:
		if f, ok := stdlib.ParseNum(v); ok {
			return f
		}
	}
	return def
}

// ours evaluates src in a fresh budget of 100,000 operations per run, as a tool run would.
func ours(b *testing.B, src string, vars expr.MapVars) {
	b.Helper()
	env := stdlib.NewEnv()
	x, err := env.Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := x.Eval(ctx, vars, expr.NewBudget(100_000)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := x.Eval(ctx, vars, expr.NewBudget(100_000)); err != nil {
			b.Fatal(err)
		}
	}
}

// exprLang runs src with expr-lang, num registered as a function.
func exprLang(b *testing.B, src string, env map[string]any) {
	b.Helper()
	prog, err := exprlang.Compile(src, exprlang.Env(env),
		exprlang.Function("num", func(p ...any) (any, error) { return numGo(p[0], p[1]), nil }))
	if err != nil {
		b.Fatal(err)
	}
	var machine vm.VM
	if _, err := machine.Run(prog, env); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := machine.Run(prog, env); err != nil {
			b.Fatal(err)
		}
	}
}

// gojaRun runs the JavaScript src in one Runtime after setup (which defines the data).
func gojaRun(b *testing.B, setup, src string) {
	b.Helper()
	rt := goja.New()
	if err := rt.Set("num", func(c goja.FunctionCall) goja.Value {
		return rt.ToValue(numGo(c.Argument(0).Export(), c.Argument(1).Export()))
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := rt.RunString(setup); err != nil {
		b.Fatal(err)
	}
	prog, err := goja.Compile("bench.js", src, true)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rt.RunProgram(prog); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := rt.RunProgram(prog); err != nil {
			b.Fatal(err)
		}
	}
}

func ourRows(b *testing.B) expr.MapVars {
	rows, err := expr.FromJSON(rowsJSON)
	if err != nil {
		b.Fatal(err)
	}
	return expr.MapVars{"rows": rows}
}

func goRows(b *testing.B) map[string]any {
	var rows []any
	if err := json.Unmarshal(rowsJSON, &rows); err != nil {
		b.Fatal(err)
	}
	return map[string]any{"rows": rows}
}

var jsRows = "const rows = JSON.parse(" + fmt.Sprintf("%q", rowsJSON) + ");"

// 1. map + filter over 1,000 rows.
const mapFilter = `rows.map(r => ({ room: r.room, seats: num(r.cap, 0) })).filter(r => r.seats > 50)`

func BenchmarkMapFilter(b *testing.B) {
	b.Run("ours", func(b *testing.B) { ours(b, mapFilter, ourRows(b)) })
	b.Run("exprlang", func(b *testing.B) {
		exprLang(b, `filter(map(rows, ({ room: .room, seats: num(.cap, 0) })), .seats > 50)`, goRows(b))
	})
	b.Run("goja", func(b *testing.B) { gojaRun(b, jsRows, mapFilter) })
}

// 2. sortBy then groupBy over 1,000 rows.
func BenchmarkSortGroup(b *testing.B) {
	b.Run("ours", func(b *testing.B) { ours(b, `groupBy(sortBy(rows, 'seats'), 'building')`, ourRows(b)) })
	b.Run("exprlang", func(b *testing.B) {
		exprLang(b, `groupBy(sortBy(rows, .seats), .building)`, goRows(b))
	})
	b.Run("goja", func(b *testing.B) {
		gojaRun(b, jsRows, `rows.slice().sort((a, b) => a.seats - b.seats)
			.reduce((g, r) => { (g[r.building] = g[r.building] || []).push(r); return g; }, {})`)
	})
}

// 3. A 20-term arithmetic expression over 20 variables.
const arith = `(a + b) * c - d / e + f * 2 - g + h * 3 - i / 2 + j - k * 4 + l + m * n - o / 5 + p - q + r * s - t`

func arithVars() map[string]any {
	v := map[string]any{}
	for i, name := range strings.Fields("a b c d e f g h i j k l m n o p q r s t") {
		v[name] = float64(i + 1)
	}
	return v
}

func BenchmarkArithmetic(b *testing.B) {
	b.Run("ours", func(b *testing.B) { ours(b, arith, expr.MapVars(arithVars())) })
	b.Run("exprlang", func(b *testing.B) { exprLang(b, arith, arithVars()) })
	b.Run("goja", func(b *testing.B) {
		var setup strings.Builder
		for k, v := range arithVars() {
			fmt.Fprintf(&setup, "var %s = %v;\n", k, v)
		}
		gojaRun(b, setup.String(), arith)
	})
}

// 4. Rendering a template with four substitutions.
func BenchmarkTemplate(b *testing.B) {
	roomJSON := `{"name":"一教101","building":"第一教学楼","seats":120,"free":true}`
	b.Run("ours", func(b *testing.B) {
		room, _ := expr.FromJSON([]byte(roomJSON))
		env := stdlib.NewEnv()
		tmpl, err := env.ParseTemplate("教室 ${room.name} 在 ${room.building}，座位 ${room.seats}，状态 ${room.free ? '空闲' : '占用'}")
		if err != nil {
			b.Fatal(err)
		}
		vars := expr.MapVars{"room": room}
		ctx := context.Background()
		for b.Loop() {
			if _, err := tmpl.Render(ctx, vars, expr.NewBudget(100_000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exprlang", func(b *testing.B) {
		var room map[string]any
		_ = json.Unmarshal([]byte(roomJSON), &room)
		exprLang(b, `"教室 " + room.name + " 在 " + room.building + "，座位 " + string(room.seats) + "，状态 " + (room.free ? "空闲" : "占用")`,
			map[string]any{"room": room})
	})
	b.Run("goja", func(b *testing.B) {
		gojaRun(b, "const room = "+roomJSON+";", "`教室 ${room.name} 在 ${room.building}，座位 ${room.seats}，状态 ${room.free ? '空闲' : '占用'}`")
	})
}

// tableHTML is a 200-row, 10-column table with a header row, some merged cells and entities.
var tableHTML = func() string {
	var b strings.Builder
	b.WriteString("<table><tr>")
	for c := range 10 {
		fmt.Fprintf(&b, "<th>列%d</th>", c+1)
	}
	b.WriteString("</tr>")
	for r := range 200 {
		b.WriteString("<tr>")
		for c := range 10 {
			switch {
			case c == 0 && r%10 == 0:
				fmt.Fprintf(&b, `<td rowspan="2">第%d行&nbsp;A</td>`, r)
			case c == 0 && r%10 == 1:
				// covered by the rowspan above
			default:
				fmt.Fprintf(&b, "<td><span>%d-%d</span> &amp; 值</td>", r, c)
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}()

// 5. tableRows on a 200×10 table (parsing the text included), no rival has one.
func BenchmarkTableRows(b *testing.B) {
	b.Run("ours", func(b *testing.B) {
		ours(b, `tableRows(page, { header: true })`, expr.MapVars{"page": tableHTML})
	})
}

// pageHTML is about 1 MB of listing markup.
var pageHTML = func() string {
	var b strings.Builder
	b.WriteString("<html><body><table>")
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, `<tr class="item"><td class="name"><a href="/room/%d">教室 %d</a></td><td class="cap">%d人</td><td>%s</td></tr>`,
			i, i, i%200, strings.Repeat("说明文字 ", 10))
	}
	b.WriteString("</table></body></html>")
	return b.String()
}()

// 6. select on a 1 MB page, already parsed; against cascadia itself on the same tree.
func BenchmarkSelect1MB(b *testing.B) {
	doc, err := html.Parse(strings.NewReader(pageHTML))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ours", func(b *testing.B) {
		ours(b, `select(doc, 'td.name a')`, expr.MapVars{"doc": &expr.Node{N: doc}})
	})
	b.Run("cascadia", func(b *testing.B) {
		sel := cascadia.MustCompile("td.name a")
		for b.Loop() {
			_ = cascadia.QueryAll(doc, sel)
		}
	})
	b.Run("ours-parse", func(b *testing.B) {
		ours(b, `select(html(page), 'td.name a')`, expr.MapVars{"page": pageHTML})
	})
}

// 7. A run that spends the whole budget of 100,000 operations, up to the error.
func BenchmarkBudgetExhaustion(b *testing.B) {
	env := stdlib.NewEnv()
	x, err := env.Parse(`range(1000).map(i => range(1000).map(j => i * j + 1))`)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		_, err := x.Eval(ctx, expr.MapVars{}, expr.NewBudget(100_000))
		if err == nil || !strings.Contains(err.Error(), "expression budget exceeded (100000 operations)") {
			b.Fatalf("err = %v", err)
		}
	}
}

// regexText is the first 64 KB or so of pageHTML, cut after a row.
var regexText = func() string {
	s := pageHTML[:64<<10]
	return s[:strings.LastIndex(s, "</tr>")+len("</tr>")]
}()

// 8. Regex builtins that find every match on 64 KB of listing markup: a pattern with a literal
// prefix, one without (many matches), one with a word boundary (searched mid-text with the
// rune before it); against Go's regexp finding the same matches alone.
func BenchmarkRegex(b *testing.B) {
	for _, tc := range []struct{ name, src, pattern string }{
		{"prefix", `matchAll(text, '/room/(\d+)').length`, `/room/(\d+)`},
		{"spaces", `len(replace(text, '\s+', ' '))`, `\s+`},
		{"boundary", `matchAll(text, '\b(\d+)人').length`, `\b(\d+)人`},
	} {
		b.Run(tc.name+"/ours", func(b *testing.B) {
			ours(b, tc.src, expr.MapVars{"text": regexText})
		})
		b.Run(tc.name+"/regexp", func(b *testing.B) {
			re := regexp.MustCompile(tc.pattern)
			for b.Loop() {
				_ = re.FindAllStringSubmatchIndex(regexText, -1)
			}
		})
	}
}

// TestSameResults checks that the three engines agree on the benchmarks' results, so the
// comparison is of equal work.
func TestSameResults(t *testing.T) {
	rows, _ := expr.FromJSON(rowsJSON)
	env := stdlib.NewEnv()
	x, err := env.Parse(`len(` + mapFilter + `)`)
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Eval(context.Background(), expr.MapVars{"rows": rows}, expr.NewBudget(100_000))
	if err != nil {
		t.Fatal(err)
	}
	var goRows []any
	_ = json.Unmarshal(rowsJSON, &goRows)
	out, err := exprlang.Eval(`len(filter(map(rows, ({ room: .room, seats: num(.cap, 0) })), .seats > 50))`,
		map[string]any{"rows": goRows, "num": func(x, d any) any { return numGo(x, d) }})
	if err != nil {
		t.Fatal(err)
	}
	rt := goja.New()
	_ = rt.Set("num", func(c goja.FunctionCall) goja.Value {
		return rt.ToValue(numGo(c.Argument(0).Export(), c.Argument(1).Export()))
	})
	jv, err := rt.RunString(jsRows + mapFilter + ".length")
	if err != nil {
		t.Fatal(err)
	}
	if v != float64(out.(int)) || v != float64(jv.ToInteger()) {
		t.Errorf("map+filter lengths differ: ours %v, expr-lang %v, goja %v", v, out, jv)
	}
	y, _ := env.Parse(arith)
	a, err := y.Eval(context.Background(), expr.MapVars(arithVars()), expr.NewBudget(1000))
	if err != nil {
		t.Fatal(err)
	}
	e, _ := exprlang.Eval(arith, arithVars())
	if a != e {
		t.Errorf("arithmetic differs: ours %v, expr-lang %v", a, e)
	}
}
