package expr_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// formatCases are expressions whose errors, as a person sees them (Format), are kept in
// testdata/errors.golden: one place to read every kind of message with its caret.
var formatCases = []string{
	"page.rows.map(r => r.room",
	"rows.filter(r => r.cap > 50) ; rows",
	"x = page.rows",
	"input.count++",
	"new Date(now)",
	"typeof input == 'object'",
	"/\\d+/.test(s)",
	"page.rows.map(function (r) { return r.room })",
	"page.rows.map(r => { room: r.room })",
	"[r => r]",
	"'unterminated",
	"a ?? b || c",
	"page.empty.rows.length",
	"page.rows[0].cap - 1",
	"page.rows.map(r => r.room.toFixed(2))",
	"Math.max(1, 2)",
	"test(s, '(?<=教)室')",
	"sortBy(page.rows, 'cap', 'up')",
	"range(20000)",
	"'共' + page.n + '间教室'.repeat(2000)",
	"input.building\n  .trim()\n  .nosuch()",
	"`教室 ${page.empty.name} 空闲`",
}

func TestFormatGolden(t *testing.T) {
	env := stdlib.NewEnv()
	vars := testVars(t)
	var b strings.Builder
	for _, src := range formatCases {
		b.WriteString("== " + strings.ReplaceAll(src, "\n", "\\n") + "\n")
		x, err := env.Parse(src)
		if err == nil {
			if errs := x.Check(func(n string) bool { _, ok := vars[n]; return ok }); len(errs) > 0 {
				err = errs.Err()
			}
		}
		if err == nil {
			_, err = x.Eval(context.Background(), vars, nil)
		}
		if err == nil {
			b.WriteString("(no error)\n\n")
			continue
		}
		b.WriteString(expr.Format(src, err) + "\n\n")
	}
	got := b.String()
	path := filepath.Join("testdata", "errors.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("errors differ from %s (run with -update after checking):\n%s", path, got)
	}
}
