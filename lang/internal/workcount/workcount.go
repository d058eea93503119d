// Package workcount counts the work the plugin language's engine actually does (values walked,
// bytes written, regex bytes × instructions scanned, HTML nodes made, selector steps tried) in
// common units, so that the cost-honesty fuzzer (FuzzCost in lang/stdlib) can compare it with
// the operations charged (docs/DECISIONS.md §2 "Costs"). One unit is about what 1/16 of an
// operation pays for: a value visited, 64 bytes written, 256 byte × instruction steps of a regex
// scan, half a parsed HTML node, half a selector step.
//
// Counting is off unless Enabled is set, which only tests do; it is not safe for concurrent use
// while on.
package workcount

// Enabled turns counting on (tests only).
var Enabled bool

var units int64

// Add counts n units of work when counting is on.
func Add(n int) {
	if Enabled {
		units += int64(n)
	}
}

// Reset sets the count to zero.
func Reset() { units = 0 }

// Units returns the units counted since the last Reset.
func Units() int64 { return units }
