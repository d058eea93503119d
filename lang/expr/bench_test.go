package expr_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// benchRows builds n rows shaped like the classroom reply: { room, cap, building }.
func benchRows(n int) []any {
	rows := make([]any, n)
	for i := range rows {
		o := expr.NewObject(3)
		o.Set("room", fmt.Sprintf("%d", 100+i))
		o.Set("cap", fmt.Sprintf("%d人", (i*37)%120))
		o.Set("building", []string{"一教", "二教", "三教", "理教"}[i%4])
		rows[i] = o
	}
	return rows
}

func benchEval(b *testing.B, src string, vars expr.MapVars) {
	env := stdlib.NewEnv()
	x, err := env.Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := x.Eval(ctx, vars, expr.NewBudget(10_000_000)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMapFilter is the seed's quickstart return over 1,000 rows.
func BenchmarkMapFilter(b *testing.B) {
	benchEval(b, "rows.map(r => ({ room: r.room, seats: num(r.cap, 0) })).filter(r => r.seats > 50)",
		expr.MapVars{"rows": benchRows(1000)})
}

// BenchmarkSortByGroupBy sorts 1,000 rows by a parsed number and groups them by building.
func BenchmarkSortByGroupBy(b *testing.B) {
	benchEval(b, "groupBy(sortBy(rows, r => num(r.cap), 'desc'), 'building')",
		expr.MapVars{"rows": benchRows(1000)})
}

// BenchmarkArithmetic is a 20-term arithmetic expression over variables.
func BenchmarkArithmetic(b *testing.B) {
	benchEval(b, "a + b * c - d / e + a * 2 - b + c * d - e + 1 + a * b - c / d + e * 3 - a + b - c * 2 + d - e",
		expr.MapVars{"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "e": 5.0})
}

// BenchmarkTemplate renders a typical request URL template with three holes.
func BenchmarkTemplate(b *testing.B) {
	env := stdlib.NewEnv()
	t, err := env.ParseTemplate("https://portal.pku.edu.cn/q?b=${input.building ?? '二教'}&d=${DAY_QUERY[input.day]}&n=${input.n + 1}")
	if err != nil {
		b.Fatal(err)
	}
	vars := expr.MapVars{
		"input":     mustJSON(b, `{"building": "理教", "day": "today", "n": 2}`),
		"DAY_QUERY": mustJSON(b, `{"today": "今天", "tomorrow": "明天"}`),
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := t.Render(ctx, vars, expr.NewBudget(expr.DefaultBudget)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWholeBudget spends the full 100,000-operation budget of one run.
func BenchmarkWholeBudget(b *testing.B) {
	env := stdlib.NewEnv()
	x, err := env.Parse("range(10000).map(x => x * 2 + 1).filter(x => x % 3 == 0).map(x => x + 1).length")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bud := expr.NewBudget(expr.DefaultBudget)
		_, err := x.Eval(ctx, nil, bud)
		if err == nil {
			// fine too: the expression costs just under the budget
		}
	}
}

// BenchmarkParse parses a medium expression without the cache.
func BenchmarkParse(b *testing.B) {
	src := "page.rows.map(r => ({ room: r.room, seats: num(r.cap, 0), free: r.free?.split(',') ?? [] })).filter(r => r.seats > 50 && !r.room.startsWith('B'))"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := expr.NewEnv().Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromJSON decodes a 1,000-row reply (about 70 KB) into ordered values.
func BenchmarkFromJSON(b *testing.B) {
	rows := benchRows(1000)
	data, err := expr.ToJSON(map[string]any{"rows": rows, "success": true}, "")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := expr.FromJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToJSON encodes the same reply.
func BenchmarkToJSON(b *testing.B) {
	v := expr.MapVars{"rows": benchRows(1000)}["rows"]
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := expr.ToJSON(v, ""); err != nil {
			b.Fatal(err)
		}
	}
}
