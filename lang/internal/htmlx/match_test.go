package htmlx

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// TestMatchAsCascadia checks the memoized matcher against cascadia's own QueryAll over random
// documents and selectors: same elements, same order. It also checks that every selector built
// here is split (matched by our matcher, not refused or left to cascadia).
func TestMatchAsCascadia(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	tags := []string{"div", "p", "a", "span", "li", "ul"}
	classes := []string{"", " class=x", " class=y", " class='x y'", " id=z"}
	compounds := []string{"div", "p", "a", "span", "li", "ul", "*", ".x", ".y", "#z", "div.x", "p.y", "[class]", "[class~=y]",
		"a[class=\"x y\"]", "li:first-child", "li:nth-child(2n+1)", "p:not(.x)", "div:has(> p)", "span:empty", "*:not(div)",
		"div:not(p a)", "ul:has(li a)", "\\64 iv", "p /* c */"}
	combs := []string{" ", " > ", " + ", " ~ ", ">", "+", "~", "  "}
	for doc := 0; doc < 60; doc++ {
		var b strings.Builder
		var stack []string
		for i := 0; i < 80; i++ {
			switch r.Intn(3) {
			case 0, 1:
				tag := tags[r.Intn(len(tags))]
				b.WriteString("<" + tag + classes[r.Intn(len(classes))] + ">")
				stack = append(stack, tag)
			default:
				if len(stack) > 0 {
					b.WriteString("</" + stack[len(stack)-1] + ">")
					stack = stack[:len(stack)-1]
				}
				b.WriteString("t")
			}
		}
		n, err := ParseDocument(b.String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 40; k++ {
			var css strings.Builder
			for s := r.Intn(4); s >= 0; s-- {
				css.WriteString(compounds[r.Intn(len(compounds))])
				if s > 0 {
					css.WriteString(combs[r.Intn(len(combs))])
				}
			}
			if r.Intn(4) == 0 {
				css.WriteString(", " + compounds[r.Intn(len(compounds))])
			}
			src := css.String()
			g, err := cascadia.ParseGroup(src)
			if err != nil {
				continue
			}
			sel, err := Compile(src)
			if err != nil {
				t.Fatalf("Compile(%q): %v", src, err)
			}
			for i, cs := range sel.complex {
				if cs == nil && sel.steps[i] > 1 {
					t.Errorf("%q: selector %d not split", src, i)
				}
			}
			ours, err := sel.Select(n, nil)
			if err != nil {
				t.Fatal(err)
			}
			theirs := cascadia.QueryAll(n, g)
			if len(ours) != len(theirs) {
				t.Fatalf("select %q on %q: %d nodes, cascadia %d", src, b.String(), len(ours), len(theirs))
			}
			for i := range ours {
				if ours[i] != theirs[i] {
					t.Fatalf("select %q: node %d differs from cascadia's", src, i)
				}
			}
		}
	}
}

// TestSelectorBacktracking holds the reported selectors that made cascadia backtrack for
// seconds: they now cost (elements × steps) evaluations, charged, and stop at the budget.
func TestSelectorBacktracking(t *testing.T) {
	deep, err := ParseNode(strings.Repeat("<div>", 200)+"x", nil)
	if err != nil {
		t.Fatal(err)
	}
	siblings, err := ParseNode(strings.Repeat("<p>a</p>", 60), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		doc  *html.Node
		css  string
		want int
	}{
		{"descendants", deep, "p div div div div", 0},
		{"many descendants", deep, strings.Repeat("div ", 50) + "div", 150},
		{"siblings", siblings, "p ~ p ~ p ~ p ~ p ~ p ~ p ~ p ~ a", 0},
		{"mixed", siblings, strings.Repeat("p ~ ", 30) + "p", 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel := mustCompile(t, tc.css)
			m := &countingMeter{limit: 1 << 30}
			out, err := sel.Select(tc.doc, m)
			if err != nil || len(out) != tc.want {
				t.Fatalf("got %d nodes, %v; want %d", len(out), err, tc.want)
			}
			// Elements × steps, at 32 evaluations per operation, and the walk.
			elems := 0
			_ = walk(tc.doc, func(*html.Node) (bool, error) { elems++; return true, nil }, nil)
			steps := len(sel.complex[0].steps)
			if bound := elems*steps*3/32 + 20; m.used > bound {
				t.Errorf("cost %d operations, more than %d for %d elements × %d steps", m.used, bound, elems, steps)
			}
			small := &countingMeter{limit: 3}
			if _, err := sel.Select(tc.doc, small); tc.want > 0 && !errors.Is(err, errBudget) {
				t.Errorf("over a budget of 3: %v", err)
			}
		})
	}
}

// TestNestedSelectorBound refuses nested selectors that cascadia would backtrack on.
func TestNestedSelectorBound(t *testing.T) {
	for _, css := range []string{"div:not(a b c)", "p:has(a ~ b)", "p:has(~ b)", "li:is(a b, c d e)"} {
		if _, err := Compile(css); err == nil {
			t.Errorf("Compile(%q) accepted", css)
		}
	}
	for _, css := range []string{"div:not(a b)", "div:has(p)", "a:not(.x)", "ul:has(li a)"} {
		if _, err := Compile(css); err != nil {
			t.Errorf("Compile(%q): %v", css, err)
		}
	}
}

// FuzzSelector matches any selector cascadia accepts and that Compile accepts with our
// matcher and with cascadia's QueryAll: the same elements in the same order.
func FuzzSelector(f *testing.F) {
	for _, s := range []string{"p div", "a > b + c ~ d", "div.x p:not(.y), li", `[a="b c"] \31 x`, "p /*x*/ a", "ul:has(li a) > li"} {
		f.Add(s, "<ul><li><a class=x>1</a></li><li>2<p><b></b><c></c><d></d></p></li></ul><div class=x><p>q</p></div>")
	}
	f.Fuzz(func(t *testing.T, css, page string) {
		g, err := cascadia.ParseGroup(css)
		if err != nil || len(css) > MaxSelector {
			return
		}
		sel, err := Compile(css)
		if err != nil {
			return // refused as too complex to match in bounded time
		}
		n, err := ParseNode(page, nil)
		if err != nil {
			return
		}
		ours, err := sel.Select(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		theirs := cascadia.QueryAll(n, g)
		if len(ours) != len(theirs) {
			t.Fatalf("select %q: %d nodes, cascadia %d", css, len(ours), len(theirs))
		}
		for i := range ours {
			if ours[i] != theirs[i] {
				t.Fatalf("select %q: node %d differs from cascadia's", css, i)
			}
		}
	})
}
