package stdlib

import (
	"math/rand"
	"regexp"
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

// TestReplaceExpandsAsRegexp checks that replace's own expansion (sized before it writes)
// gives what regexp.ReplaceAllString gives, over random patterns, texts and templates.
func TestReplaceExpandsAsRegexp(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	patterns := []string{"", "a*", "a", "(a)(b)?", "(?P<x>a+)|b", "^", "$", `\b`, "(a|)", "x*?", "(?m)^a"}
	templates := []string{"", "-", "$1", "$2$1", "${1}x", "$x", "${x}", "$$", "$", "$0", "${0}", "$01", "$10", "${name}", "$<", "a$", "${", "${1"}
	for i := 0; i < 2000; i++ {
		p := patterns[r.Intn(len(patterns))]
		tm := templates[r.Intn(len(templates))]
		var b strings.Builder
		for j := r.Intn(8); j > 0; j-- {
			b.WriteByte("abx\n"[r.Intn(4)])
		}
		s := b.String()
		re := regexp.MustCompile(p)
		want := re.ReplaceAllString(s, tm)
		got := expandVia(t, re, s, tm)
		if got != want {
			t.Fatalf("pattern %q template %q text %q: got %q, want %q", p, tm, s, got, want)
		}
	}
}

// expandVia runs expandAll inside a builtin call, the only place a *expr.Call exists.
func expandVia(t *testing.T, re *regexp.Regexp, s, tm string) string {
	t.Helper()
	env := NewEnv()
	var out any
	env.Register("probe", func(c *expr.Call, _ []any) (any, error) {
		ms := re.FindAllStringSubmatchIndex(s, -1)
		v, err := expandAll(c, re, s, ms, parseExpand(re, tm))
		out = v
		return v, err
	})
	x, err := env.Parse("probe()")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Eval(nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	return out.(string)
}
