package stdlib

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
)

// shared builds a value of 2^d nodes in d steps: both halves of every list are the same list.
const shared = "range(%d).reduce((acc, i) => [acc, acc], 'x')"

// breachCase is one attack from the sandbox's threat model: src must fail with a limit error
// whose message contains want (or, when result is set, give exactly that result).
type breachCase struct {
	name   string
	src    string
	want   string // a part of the limit message
	result string // the expected result instead of an error
}

// breachCases are the reported ways a plugin could do far more work than it paid for. Each runs
// against the default budget; before the fixes each took seconds to minutes or gigabytes.
var breachCases = []breachCase{
	{name: "toJson of shared", src: "toJson(" + sharedD(40) + ")", want: "budget exceeded"},
	{name: "str of shared", src: "str(" + sharedD(40) + ")", want: "budget exceeded"},
	{name: "concat shared", src: "'' + " + sharedD(40), want: "budget exceeded"},
	{name: "template shared", src: "`${" + sharedD(40) + "}`", want: "budget exceeded"},
	{name: "join of references", src: "[" + sharedD(18) + "].map(a => range(1000).map(i => a).join(','))", want: "budget exceeded"},
	{name: "equal shared", src: "[" + sharedD(40) + "].map(a => a == " + sharedD(40) + ")", want: "budget exceeded"},
	{name: "includes shared", src: "[" + sharedD(40) + "].includes(" + sharedD(40) + ")", want: "budget exceeded"},
	{name: "uniq shared", src: "[" + sharedD(40) + ", 1].uniq()", want: "budget exceeded"},
	{name: "groupBy shared key", src: "[1, 2].groupBy(x => " + sharedD(40) + ")", want: "budget exceeded"},
	{name: "toJson shared in budget", src: "len(toJson(" + sharedD(10) + "))", result: "6141"},
	{name: "replace empty with 1 MB", src: "replace(repeat('ab', 500000), '', repeat('w', 1000000))", want: "limit is"},
	{name: "replace fn with 1 MB", src: "[repeat('w', 1000000)].map(w => replace(repeat('ab', 500000), '', m => w))", want: "limit is"},
	{name: "replace group refs", src: "replace(repeat('a', 100000), 'a*', repeat('$&', 400))", want: "limit is"},
	{name: "regex big program", src: "test(repeat(repeat('a', 1000), 1000), '[a-z]{1000}x')", want: "budget exceeded"},
	{name: "regex alternation repeat", src: "replace(repeat(repeat('ab', 500), 1000), '(a|b|c|d){200}x', 'y')", want: "budget exceeded"},
	{name: "regex many groups", src: "matchAll(repeat(repeat('a', 1000), 1000), '" + strings.Repeat("()", 300) + "')", want: "budget exceeded"},
	{name: "html of 1 MB of br", src: "[repeat(repeat('<br>', 1000), 250)].map(s => range(60).map(i => len(select(html(s), 'br'))))", want: "budget exceeded"},
	{name: "tableRows wide then empty rows", src: "tableRows('<table><tr><td colspan=1000>x</td></tr>' + repeat(repeat('<tr></tr>', 1000), 5) + '</table>')", want: "budget exceeded"},
	{name: "tableRows wide labels", src: "len(keys(tableRows('<table><tr>' + repeat('<th colspan=1000>a</th>', 30) + '</tr><tr><td>1</td></tr></table>', { header: true })[0]))", result: "30000"},
	{name: "select backtracking", src: "len(select(repeat('<div>', 200) + 'x', 'p div div div div'))", result: "0"},
	{name: "select many steps", src: "len(select(repeat('<div>', 200) + 'x', repeat('div ', 100) + 'div'))", result: "100"},
	{name: "select siblings", src: "len(select(repeat('<p>a</p>', 60), repeat('p ~ ', 40) + 'p'))", result: "20"},
	{name: "tableRows finding no table", src: "[html(repeat(repeat('<p>x</p>', 1000), 100))].map(d => range(10000).map(i => tableRows(d)))", want: "budget exceeded"},
	{name: "attr after many comments", src: "[html(repeat(repeat('<!---->', 1000), 100))].map(d => range(10000).map(i => attr(d, 'x')))", want: "budget exceeded"},
	{name: "json of many objects", src: "['[' + repeat(repeat('{},', 1000), 333) + '{}]'].map(s => range(60).map(i => len(json(s))))", want: "budget exceeded"},
}

func sharedD(d int) string { return strings.Replace(shared, "%d", itoa(d), 1) }

func itoa(i int) string { return expr.FormatNumber(float64(i)) }

func TestBreaches(t *testing.T) {
	vars := libVars(t)
	for _, tc := range breachCases {
		t.Run(tc.name, func(t *testing.T) {
			got := evalLib(t, tc.src, vars, expr.DefaultBudget)
			if tc.result != "" {
				if got != tc.result {
					t.Fatalf("got %.300s, want %s", got, tc.result)
				}
				return
			}
			if !strings.HasPrefix(got, "limit: ") || !strings.Contains(got, tc.want) {
				t.Fatalf("got %.300s, want a limit error with %q", got, tc.want)
			}
		})
	}
}
