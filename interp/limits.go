package interp

import "time"

// The fixed limits of one run (seed 004 "Steps": "Every run has fixed
// limits"; docs/DECISIONS.md §2, §6). A `call` step shares its caller's run and
// so its limits. Each limit's error names it and its number, in the form
// `each: 60 items, the limit is 50` (docs/DECISIONS.md §10).
const (
	MaxSteps      = 200              // steps executed, counting nested and called ones
	MaxRequests   = 60               // HTTP requests sent (public and campus)
	MaxConcurrent = 4                // requests in flight at once; also the top each concurrency
	MaxRunTime    = 60 * time.Second // wall time of a run
	MaxResponse   = 2 << 20          // bytes of one response body
	MaxResult     = 1 << 20          // bytes of the result's JSON encoding
	// MaxResponseHeader is the bytes of one response's header lines; the
	// default transport stops reading a longer header.
	MaxResponseHeader = 256 << 10
	MaxOperations     = 100_000 // expression operations (expr.Budget)
	MaxEachItems      = 50      // items of one each step
	MaxPages          = 30      // pages of one paginate step
	MaxRedirects      = 5       // redirects followed by one request
	MaxCallDepth      = 8       // nested call steps (cycles are refused by validation)
)
