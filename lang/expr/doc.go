// Package expr is the plugin language's expression engine: the JSON value model
// (docs/DECISIONS.md §1), the lexer and parser of the JavaScript subset (§2), a static checker, a
// tree-walking evaluator metered by an operation Budget, and templates (§3).
//
// The stages are named and separate:
//
//	env := stdlib.NewEnv()              // one Env per plugin: caches, builtins, user functions
//	tool := env.Extend()                // a layer for one tool's own functions
//	x, err := tool.Parse(src)           // ErrorList with line:column positions
//	errs := x.Check(inScope)            // unbound names, unknown functions, bad regex literals
//	v, err := x.Eval(ctx, vars, budget) // *RuntimeError on failure
//
// Values are nil, bool, float64, string, []any (a list), *Object (insertion-ordered) and *Node
// (an opaque HTML node). Arrow functions evaluate to *Func, which builtins receive and call
// through Call.CallFunc. Values are never mutated once built: every builtin returns new lists and
// objects, so values may be shared freely between goroutines.
//
// Every evaluated node costs one operation of the run's Budget and builtins charge for the
// elements they visit before visiting them, so one run is bounded by its budget (100,000
// operations by default) whatever the expression. Parsing is bounded too: 16 KB of source and 64
// levels of nesting.
//
// Speed comes from resolving what can be resolved once: arrow parameters become frame slots at
// parse time, each call site caches the function it resolved to, arithmetic runs on unboxed
// numbers, frames that no closure can capture are reused, and the budget is taken in chunks
// rather than one atomic operation per node.
package expr
