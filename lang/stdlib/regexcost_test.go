//go:build unix

package stdlib

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
)

// The CPU time one charged operation may take, as docs/PLUGIN-LANGUAGE.md "What things cost"
// declares it (100,000 operations do at most about 10 s of work on one core), plus a fixed
// allowance per run for the first use of a pattern and the garbage collector. The runs below
// take about 1–5 µs per operation on a loaded 2-core machine, so the bound holds with a wide
// margin; before each search was charged, the worst took tens of milliseconds per operation.
const (
	maxCPUPerOp = 100 * time.Microsecond
	fixedCPU    = 200 * time.Millisecond
)

// TestRegexCPUPerOp holds the regex builtins that search a text again and again (replace,
// replaceAll, matchAll, the function form of replace) and the single searches (match, test) to
// the CPU time per charged operation that the cost model declares, with patterns whose every
// search may read to the end of the text ((a|b)*c keeps a thread alive over any run of a and
// b), empty matches and anchors. CPU time of the process, not wall time, so that a loaded
// machine does not fail it.
func TestRegexCPUPerOp(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200 KB texts many times")
	}
	if raceEnabled {
		// The race detector instruments every memory access: CPU per operation then says
		// nothing about the cost model (the counted bytes are checked by FuzzCost either way).
		t.Skip("CPU time under the race detector is not the cost model's")
	}
	vars := expr.MapVars{
		"ab":  strings.Repeat("ab", 100_000),                       // 200 KB
		"cjk": strings.Repeat("中b", 50_000),                        // 200 KB, multi-byte runes
		"nl":  strings.Repeat(strings.Repeat("ab", 40)+"\n", 2500), // lines for (?m)
	}
	for _, src := range []string{
		"replace(ab, '(a|b)*c|[a-z]{1,100}', 'x')",
		"replaceAll(ab, '(a|b)*c|[a-z]{1,100}', 'x')",
		"matchAll(ab, '(a|b)*c|[a-z]{1,100}').length",
		"replace(ab, '(a|b)*c|[a-z]{1,100}', m => 'x')",
		"replace(ab, '(a|b)*c|b', '')",
		"matchAll(ab, '(a|b)*c|a*').length",
		"replace(ab, 'a*', '-')",
		"matchAll(ab, 'b(a|b)*c|b').length",
		"matchAll(ab, '(a|b)*c$|b').length",
		"matchAll(ab, '\\b(a|b)*c|\\Bb').length",
		"matchAll(nl, '(?m)^(a|b)*c|^a|b').length",
		"matchAll(ab, '^(a|b)*c|b').length",
		"matchAll(cjk, '(中|b)*c|中').length",
		"replace(cjk, '(?i)(中|B)*C|b', m => m + m)",
		"match(ab, '(a|b)*c|b$')",
		"test(ab, '(a|b)*c')",
		"split(ab, 'ba').length",
	} {
		t.Run(src, func(t *testing.T) {
			ops, cpu := cpuOfRun(t, src, vars)
			t.Logf("%d operations, %v CPU, %.2f µs per operation", ops, cpu, float64(cpu.Microseconds())/float64(max(ops, 1)))
			if limit := fixedCPU + time.Duration(ops)*maxCPUPerOp; cpu > limit {
				t.Errorf("%s: %v of CPU for %d operations (more than %v per operation)", src, cpu, ops, maxCPUPerOp)
			}
		})
	}
}

// cpuOfRun evaluates src once with FuzzCost's budget (a limit error is an answer too) and
// returns the operations charged and the CPU time the process used meanwhile.
func cpuOfRun(t *testing.T, src string, vars expr.MapVars) (int, time.Duration) {
	t.Helper()
	x, err := NewEnv().Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := expr.NewBudget(fuzzBudget)
	before := processCPU(t)
	_, err = x.Eval(ctx, vars, b)
	cpu := processCPU(t) - before
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after 60 s with %d operations charged (%v)", src, b.Used(), err)
	}
	return b.Used(), cpu
}

// processCPU is the user and system CPU time the process has used.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
