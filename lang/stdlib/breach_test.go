package stdlib

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/internal/costcheck"
)

// TestBreaches runs every known attack on the cost model against the default budget: each
// fails with a limit error (or gives its exact result) instead of running for seconds or
// taking gigabytes, as each did before it was fixed.
func TestBreaches(t *testing.T) {
	vars := libVars(t)
	for _, tc := range costcheck.Breaches {
		t.Run(tc.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := evalLibCtx(t, ctx, tc.Src, vars, expr.DefaultBudget)
			if tc.Result != "" {
				if got != tc.Result {
					t.Fatalf("got %.300s, want %s", got, tc.Result)
				}
				return
			}
			if !strings.HasPrefix(got, "limit: ") || !strings.Contains(got, tc.Want) {
				t.Fatalf("got %.300s, want a limit error with %q", got, tc.Want)
			}
		})
	}
}

// TestRegexScanStopsOnContext: RE2 cannot be interrupted, so a long scan runs aside and the
// run's context stops the call; the scan here is paid for (within the budget) and takes
// seconds, the context ends after 50 ms, and the call fails with the context's error rather
// than returning the scan's answer.
func TestRegexScanStopsOnContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got := evalLibCtx(t, ctx, "test(repeat(repeat('a', 1000), 1000), '[a-z]{100}x')", libVars(t), expr.DefaultBudget)
	if !strings.HasPrefix(got, "limit: ") || !strings.Contains(got, "deadline exceeded") {
		t.Fatalf("got %.200s, want the context's limit error", got)
	}
}

// TestRegexSearchesStopOnContext: the searches of matchAll and replace read through a reader
// that looks at the run's context every KB, so a long search (paid for, taking seconds) stops
// soon after the context ends, inside the scan paid for up front as well as past it.
func TestRegexSearchesStopOnContext(t *testing.T) {
	for _, src := range []string{
		"matchAll(repeat(repeat('a', 1000), 1000), '[a-z]{100}x')",
		"replace(repeat(repeat('a', 1000), 1000), '[a-z]{100}x', m => m)",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		got := evalLibCtx(t, ctx, src, libVars(t), expr.DefaultBudget)
		cancel()
		if !strings.HasPrefix(got, "limit: ") || !strings.Contains(got, "deadline exceeded") {
			t.Fatalf("%s: got %.200s, want the context's limit error", src, got)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: stopped after %v", src, d)
		}
	}
}
