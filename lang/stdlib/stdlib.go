// Package stdlib is the plugin language's standard library (docs/DECISIONS.md §5 and §10),
// registered into an expr.Env: lists, objects, strings, numbers, types, URLs and JSON/text here;
// Beijing-time dates and HTML in dates*.go and html*.go, which add themselves to extra.
//
// Every function charges the run's operation budget before it works, in proportion to the work
// (one operation per element visited, per callback call, per comparison of a sort, per 1 KB of
// text), so no single call can loop or allocate far past the budget.
package stdlib

import "github.com/pkuinfo/harness/lang/expr"

// extra holds registration functions from other files of this package (dates, HTML); each adds
// itself in an init function.
var extra []func(*expr.Env)

// NewEnv returns an Env with the whole standard library registered: one per plugin.
func NewEnv() *expr.Env {
	env := expr.NewEnv()
	Register(env)
	return env
}

// Register adds the whole standard library to env.
func Register(env *expr.Env) {
	registerLists(env)
	registerObjects(env)
	registerStrings(env)
	registerNumbers(env)
	registerTypes(env)
	registerURLs(env)
	registerJSON(env)
	for _, f := range extra {
		f(env)
	}
}
