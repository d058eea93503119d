package stdlib

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/internal/costcheck"
	"github.com/pkuinfo/harness/lang/internal/workcount"
)

// The cost model's declared honesty (docs/PLUGIN-LANGUAGE.md "What things cost"): per operation
// charged, a run allocates at most maxBytesPerOp bytes and does at most maxUnitsPerOp units of
// counted work (lang/internal/workcount: about 16 per operation when the charge is exact), plus a
// fixed allowance. The bytes' allowance covers the evaluation itself and the scratch space of
// Go's regexp engine: its backtracker keeps up to 256 K states per scan (about 6 MB), pooled
// per pattern and dropped at the next garbage collection, which the first scan of a pattern
// allocates whatever the text's length.
const (
	maxBytesPerOp = 2048
	maxUnitsPerOp = 64
	fixedBytes    = 8 << 20
	fixedUnits    = 4096
)

// costVars are the fuzzer's variables: a page, a JSON text, a list and a string.
func costVars() expr.MapVars {
	page := "<table><tr><th>a</th><th colspan=2>b</th></tr>" + strings.Repeat("<tr><td>1</td><td>2</td><td><a href=x>3</a></td></tr>", 200) + "</table>"
	return expr.MapVars{
		"page": page,
		"text": strings.Repeat("abc def ", 2000),
		"js":   "[" + strings.Repeat(`{"a":[1,2,{"b":"c"}]},`, 500) + "null]",
		"list": []any{1.0, "two", []any{3.0}, nil},
	}
}

// FuzzCost evaluates any expression with the library and compares the work it really did (bytes
// allocated, counted work units) with the operations it was charged; a ratio above the declared
// constants is a cost the model does not see. The corpus holds every known attack.
func FuzzCost(f *testing.F) {
	for _, b := range costcheck.Breaches {
		f.Add(b.Src)
	}
	for _, s := range []string{
		"select(page, 'tr td a').map(n => attr(n, 'href'))",
		"tableRows(page, { header: true }).map(r => r.a)",
		"json(js).map(x => toJson(x)).join('')",
		"replace(text, '(a)(b)', '$2$1')",
		"matchAll(text, '[a-z]+').length",
		"split(text, ' ').groupBy(w => w)",
		"range(1000).map(i => { i, s: str(i) }).sortBy('s')",
		"`${list}${page}`",
		"html(page).select('td:not(:first-child)').length",
		"range(100).reduce((a, i) => a + text, '')",
		"replace(text, '(a|b|c|d|e|f| )*x|[a-z]{1,10}', 'y')",
		"matchAll(text, '( |[a-f])*x|a*').length",
		"replace(text, '(?m)^(\\w| )*x|\\bd', m => m + m)",
	} {
		f.Add(s)
	}
	env := NewEnv()
	vars := costVars()
	f.Fuzz(func(t *testing.T, src string) {
		x, err := env.Parse(src)
		if err != nil || len(x.Check(func(n string) bool { _, ok := vars[n]; return ok })) > 0 {
			return
		}
		ops, alloc, units := measure(t, x, vars)
		t.Logf("%d operations, %d bytes, %d units", ops, alloc, units)
		if !raceEnabled && alloc > uint64(fixedBytes+maxBytesPerOp*ops) {
			t.Errorf("%.200q: allocated %d bytes for %d operations (more than %d per operation)", src, alloc, ops, maxBytesPerOp)
		}
		if units > int64(fixedUnits+maxUnitsPerOp*ops) {
			t.Errorf("%.200q: %d work units for %d operations (more than %d per operation)", src, units, ops, maxUnitsPerOp)
		}
	})
}

// fuzzBudget is the budget of one FuzzCost run: a fifth of a tool run's, so that the slowest
// honest runs (a regex scan at its full charge) take well under the fuzzer's hang limit; the
// ratios checked do not depend on the budget's size.
const fuzzBudget = expr.DefaultBudget / 5

// measure evaluates x once and returns the operations charged, the bytes allocated meanwhile and
// the work units counted. A run still going after 30 s is a failure in itself.
func measure(t *testing.T, x *expr.Expr, vars expr.MapVars) (int, uint64, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := expr.NewBudget(fuzzBudget)
	workcount.Enabled = true
	defer func() { workcount.Enabled = false }()
	workcount.Reset()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := x.Eval(ctx, vars, b)
	runtime.ReadMemStats(&after)
	if ctx.Err() != nil {
		t.Fatalf("%.200q: still running after 30 s with %d operations charged (%v)", x.Source(), b.Used(), err)
	}
	return b.Used(), after.TotalAlloc - before.TotalAlloc, workcount.Units()
}
