package plugin

// Run limits the validator checks statically (seed "Steps": "each runs over a list of at most 50
// items, with 1 to 4 running at the same time … for at most 30 pages"; docs/DECISIONS.md §6).
// Package interp enforces the same numbers at run time.
const (
	// MaxConcurrency is the most items an each step runs at the same time.
	MaxConcurrency = 4
	// MaxEachItems is the longest list an each step runs over.
	MaxEachItems = 50
	// MaxPages is the most pages a paginate step reads, and its default max.
	MaxPages = 30
	// MaxTimeout is the longest a run (and so any request timeout) may last.
	MaxTimeoutSeconds = 60
)
