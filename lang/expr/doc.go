// Package expr is the plugin language's expression engine: the JSON value model
// (SPEC-DECISIONS §1), the lexer and parser of the JavaScript subset (§2), a static checker, a
// tree-walking evaluator metered by an operation Budget, and templates (§3).
//
// The stages are named and separate:
//
//	env := stdlib.NewEnv()              // one Env per plugin: caches, builtins, user functions
//	x, err := env.Parse(src)            // ErrorList with line:column positions
//	errs := x.Check(inScope)            // forbidden constructs, unbound names, unknown functions
//	v, err := x.Eval(ctx, vars, budget) // *RuntimeError on failure
//
// Values are nil, bool, float64, string, []any (a list), *Object (insertion-ordered) and *Node
// (an opaque HTML node). Arrow functions evaluate to *Func, which builtins receive and call
// through Call.CallFunc. Values are never mutated once built: every builtin returns new lists and
// objects, so values may be shared freely between goroutines.
package expr
