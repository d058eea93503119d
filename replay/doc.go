// Package replay runs a plugin's recorded tests (tests/*.yaml, docs/DECISIONS.md §8): it decodes
// the test files with positions, answers the tool's requests from the recorded responses
// through a fake http.RoundTripper and a fake interp.CampusClient, answers host abilities from
// the test's `abilities:` map, starts each test from its own in-memory KV and a fixed clock, runs
// the tool with interp.Run and compares the result with `expect` (strict deep equality, with a
// path-by-path diff) or the error with `expectError`, and the requests sent with
// `expectRequests`.
//
// The stages have names: Decode (bytes → []*Case, with file:line:col errors), RunCase (one case
// against a loaded plugin → Outcome) and RunDir (load, validate, run every case → Report).
// The network allowlist of the plugin still applies: the interpreter checks each request's host
// before it reaches the fake transport.
package replay
