package stdlib

import (
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
)

// TestFindAllAsRegexp checks that findAll, which runs each search itself from where the last
// match ended, finds what regexp.FindAllStringSubmatchIndex finds: patterns with and without a
// literal prefix, empty matches, anchors and word boundaries (which look at the text before a
// search's start), over texts with multi-byte and invalid UTF-8.
func TestFindAllAsRegexp(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	patterns := []string{"", "a*", "a", "(a)(b)?", "(?P<x>a+)|b", "^", "$", `\b`, `\B`, "(a|)", "x*?",
		"(?m)^a", "(?m)^", "(?m)$", "^a|b", `\bab\b`, `\Ba`, "ab|a", "ba*", "中+", "(a|b)*c|[a-z]{1,3}",
		"(?i)A", `\Aa`, `a\z`, "(?s).", ".", "[^a]", `\w+`, "x|", "(?m)^b|a$", "b(a|b)*x|b"}
	for i := 0; i < 5000; i++ {
		p := patterns[r.Intn(len(patterns))]
		var b strings.Builder
		for j := r.Intn(12); j > 0; j-- {
			b.WriteString([]string{"a", "b", "x", "\n", " ", "中", "\xff", "\xe4\xb8"}[r.Intn(8)])
		}
		s := b.String()
		re := regexp.MustCompile(p)
		want := fmt.Sprint(re.FindAllStringSubmatchIndex(s, -1))
		if got := findAllVia(t, p, s); got != want {
			t.Fatalf("pattern %q text %q: got %s, want %s", p, s, got, want)
		}
	}
}

// findAllVia runs findAll inside a builtin call and prints its matches as fmt prints
// FindAllStringSubmatchIndex's.
func findAllVia(t *testing.T, pattern, s string) string {
	t.Helper()
	env := NewEnv()
	var out [][]int
	env.Register("probe", func(c *expr.Call, _ []any) (any, error) {
		re, prog, err := c.RegexpProg(pattern)
		if err != nil {
			return nil, err
		}
		out, err = findAll(c, re, prog, s)
		return nil, err
	})
	x, err := env.Parse("probe()")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Eval(nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(out)
}
