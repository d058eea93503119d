// Package interp runs the tools of a loaded plugin: the step interpreter of
// the plugin language (seed 004 "Tools" and "Steps"; docs/DECISIONS.md §4, §6,
// §10), its run limits, and the sandboxed HTTP client every request goes
// through.
//
// Run is the entry point: decode → validate (package plugin) → Run. A run
// checks the input, executes the steps in order with one scope, shares its
// limits (limits.go) with every tool it calls, and returns a plain JSON
// value or an *Error whose Kind is what a `catch` sees as error.kind.
//
// The interpreter knows nothing of the host. What it needs from outside
// comes through small interfaces (seams.go): an http.RoundTripper for
// public requests (the default one dials public addresses only), a
// CampusClient that signs campus requests, Abilities for host abilities,
// and a KV store (package interp/kvstore has an in-memory and a SQLite
// implementation).
package interp
