package costcheck_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/internal/costcheck"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// maxAllocPerRun bounds the bytes one run may allocate in all, whatever it does within its
// budget of 100,000 operations (the sandbox's rule is 256 MB of memory per run; what is
// allocated bounds what is live).
const maxAllocPerRun = 256 << 20

// TestBreachAllocations runs each known attack in this test binary (a heap of its own, apart
// from the other packages' tests) and bounds the bytes it allocates, garbage included.
func TestBreachAllocations(t *testing.T) {
	env := stdlib.NewEnv()
	for _, b := range costcheck.Breaches {
		t.Run(b.Name, func(t *testing.T) {
			x, err := env.Parse(b.Src)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = x.Eval(ctx, nil, expr.NewBudget(expr.DefaultBudget))
			runtime.ReadMemStats(&after)
			if ctx.Err() != nil {
				t.Fatalf("still running after a minute: %v", err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d MB allocated", alloc>>20)
			if alloc > maxAllocPerRun {
				t.Errorf("allocated %d MB, the bound is %d MB (err %v)", alloc>>20, maxAllocPerRun>>20, err)
			}
		})
	}
}
