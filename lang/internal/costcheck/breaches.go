// Package costcheck holds the sandbox's known attacks on the cost model (shared sub-values, uncharged output, parse amplification, table slots, selector
// backtracking, regex program size) as plugin-language expressions, shared by the regression
// tests of lang/stdlib, the cost-honesty fuzzer (FuzzCost) and this package's test, which runs
// each in a fresh test binary and bounds the bytes it allocates (docs/DECISIONS.md §2 "Costs").
package costcheck

import (
	"strconv"
	"strings"
)

// shared builds a value of 2^d nodes in d steps: both halves of every list are the same list.
const shared = "range(%d).reduce((acc, i) => [acc, acc], 'x')"

// Breach is one attack from the sandbox's threat model: Src must fail with a limit error
// whose message contains Want (or, when Result is set, give exactly that result).
type Breach struct {
	Name   string
	Src    string
	Want   string // a part of the limit message
	Result string // the expected result instead of an error
}

// Breaches are the reported ways a plugin could do far more work than it paid for. Each runs
// against the default budget; before the fixes each took seconds to minutes or gigabytes (the
// cases with a Result gave it, after many seconds). Tests run them under a deadline of 10 s,
// a liveness guard far above the milliseconds each takes now.
var Breaches = []Breach{
	{Name: "toJson of shared", Src: "toJson(" + sharedD(40) + ")", Want: "budget exceeded"},
	{Name: "str of shared", Src: "str(" + sharedD(40) + ")", Want: "budget exceeded"},
	{Name: "concat shared", Src: "'' + " + sharedD(40), Want: "budget exceeded"},
	{Name: "template shared", Src: "`${" + sharedD(40) + "}`", Want: "budget exceeded"},
	{Name: "join of references", Src: "[" + sharedD(18) + "].map(a => range(1000).map(i => a).join(','))", Want: "budget exceeded"},
	{Name: "equal shared", Src: "[" + sharedD(40) + "].map(a => a == " + sharedD(40) + ")", Want: "budget exceeded"},
	{Name: "includes shared", Src: "[" + sharedD(40) + "].includes(" + sharedD(40) + ")", Want: "budget exceeded"},
	{Name: "uniq shared", Src: "[" + sharedD(40) + ", 1].uniq()", Want: "budget exceeded"},
	{Name: "groupBy shared key", Src: "[1, 2].groupBy(x => " + sharedD(40) + ")", Want: "budget exceeded"},
	{Name: "toJson shared in budget", Src: "len(toJson(" + sharedD(10) + "))", Result: "6141"},
	{Name: "replace empty with 1 MB", Src: "replace(repeat(repeat('ab', 500), 1000), '', repeat(repeat('w', 1000), 1000))", Want: "budget exceeded"},
	{Name: "replace fn with 1 MB", Src: "[repeat(repeat('w', 1000), 1000)].map(w => replace(repeat(repeat('ab', 500), 1000), '', m => w))", Want: "budget exceeded"},
	{Name: "replace few matches, huge output", Src: "replace(repeat(repeat('ab', 500), 100), 'b', repeat(repeat('w', 1000), 1000))", Want: "limit is"},
	{Name: "replace group refs", Src: "replace(repeat(repeat('a', 1000), 100), 'a*', repeat('$&', 400))", Want: "limit is"},
	{Name: "regex big program", Src: "test(repeat(repeat('a', 1000), 1000), '[a-z]{1000}x')", Want: "budget exceeded"},
	{Name: "regex alternation repeat", Src: "replace(repeat(repeat('ab', 500), 1000), '(a|b|c|d){200}x', 'y')", Want: "budget exceeded"},
	{Name: "regex searches reading to the end", Src: "replace(repeat(repeat('ab', 1000), 100), '(a|b)*c|[a-z]{1,100}', 'x')", Want: "budget exceeded"},
	{Name: "regex empty matches reading to the end", Src: "matchAll(repeat(repeat('ab', 1000), 100), '(a|b)*c|x{0,50}')", Want: "budget exceeded"},
	{Name: "regex fn searches reading to the end", Src: "replace(repeat(repeat('ab', 1000), 100), '\\b(a|b)*c|b', m => m)", Want: "budget exceeded"},
	{Name: "regex many groups", Src: "matchAll(repeat(repeat('a', 1000), 1000), '" + strings.Repeat("()", 300) + "')", Want: "budget exceeded"},
	{Name: "html of 1 MB of br", Src: "[repeat(repeat('<br>', 1000), 250)].map(s => range(60).map(i => typeOf(html(s))))", Want: "budget exceeded"},
	{Name: "tableRows wide then empty rows", Src: "tableRows('<table><tr><td colspan=1000>x</td></tr>' + repeat(repeat('<tr></tr>', 1000), 5) + '</table>')", Want: "budget exceeded"},
	{Name: "tableRows wide labels", Src: "len(keys(tableRows('<table><tr>' + repeat('<th colspan=1000>a</th>', 30) + '</tr><tr><td>1</td></tr></table>', { header: true })[0]))", Result: "30000"},
	{Name: "select backtracking", Src: "len(select(repeat('<div>', 200) + 'x', 'p div div div div'))", Result: "0"},
	{Name: "select many steps", Src: "len(select(repeat('<div>', 200) + 'x', repeat('div ', 100) + 'div'))", Result: "100"},
	{Name: "select siblings", Src: "len(select(repeat('<p>a</p>', 60), repeat('p ~ ', 40) + 'p'))", Result: "20"},
	{Name: "tableRows finding no table", Src: "[html(repeat(repeat('<p>x</p>', 1000), 100))].map(d => range(10000).map(i => tableRows(d)))", Want: "budget exceeded"},
	{Name: "attr after many comments", Src: "[html(repeat(repeat('<!---->', 1000), 100))].map(d => range(10000).map(i => attr(d, 'x')))", Want: "budget exceeded"},
	{Name: "compare long texts", Src: "[repeat(repeat('a', 1000), 1000)].map(s => [s + 'a', s + 'b']).map(p => range(10000).map(i => p[0] < p[1]))", Want: "budget exceeded"},
	{Name: "sort long texts", Src: "[repeat(repeat('a', 1000), 1000)].map(s => [s + 'a', s + 'b']).map(p => range(3000).map(i => p[i % 2]).sort())", Want: "budget exceeded"},
	{Name: "json of many objects", Src: "['[' + repeat(repeat('{},', 1000), 333) + '{}]'].map(s => range(60).map(i => len(json(s))))", Want: "budget exceeded"},
}

func sharedD(d int) string { return strings.Replace(shared, "%d", itoa(d), 1) }

func itoa(i int) string { return strconv.Itoa(i) }
