package stdlib

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/expr"
)

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
