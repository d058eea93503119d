package htmlx

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func mustCompile(t *testing.T, css string) *Selector {
	t.Helper()
	s, err := Compile(css)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseNodeAndSerialise(t *testing.T) {
	tests := []struct{ in, outer, inner string }{
		{`<b>x</b>`, `<b>x</b>`, `<b>x</b>`},
		{`<a href="/x?a=1&amp;b=2">y</a> tail`, `<a href="/x?a=1&amp;b=2">y</a> tail`, `<a href="/x?a=1&amp;b=2">y</a> tail`},
		{`<tr><td>1</td></tr>`, `<tr><td>1</td></tr>`, `<tr><td>1</td></tr>`},
		{`<td>1</td><td>2</td>`, `<td>1</td><td>2</td>`, `<td>1</td><td>2</td>`},
		{`<tbody><tr><td>1</td></tr></tbody>`, `<tbody><tr><td>1</td></tr></tbody>`, `<tbody><tr><td>1</td></tr></tbody>`},
		{`<!DOCTYPE html><p>x`, `<!DOCTYPE html><html><head></head><body><p>x</p></body></html>`,
			`<!DOCTYPE html><html><head></head><body><p>x</p></body></html>`},
		{`  <HTML lang=zh><body>x`, `<html lang="zh"><head></head><body>x</body></html>`, `<html lang="zh"><head></head><body>x</body></html>`},
		{"\ufeff<?xml version=\"1.0\"?>\n<!-- c --><head><title>t</title></head>x", `<!--?xml version="1.0"?--><!-- c --><html><head><title>t</title></head><body>x</body></html>`,
			`<!--?xml version="1.0"?--><!-- c --><html><head><title>t</title></head><body>x</body></html>`},
		{`<body>x`, `<html><head></head><body>x</body></html>`, `<html><head></head><body>x</body></html>`},
		{`<!-- only a comment`, `<!-- only a comment-->`, `<!-- only a comment-->`},
	}
	for _, tc := range tests {
		n, err := ParseNode(tc.in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := OuterHTML(n, nil); got != tc.outer {
			t.Errorf("OuterHTML(%q) = %q, want %q", tc.in, got, tc.outer)
		}
		if got, _ := InnerHTML(n, nil); got != tc.inner {
			t.Errorf("InnerHTML(%q) = %q, want %q", tc.in, got, tc.inner)
		}
	}
	n, _ := ParseNode(`<div id=a class="x y"><span>in</span> text</div>`, nil)
	div := Element(n)
	if got, _ := OuterHTML(div, nil); got != `<div id="a" class="x y"><span>in</span> text</div>` {
		t.Errorf("OuterHTML(div) = %q", got)
	}
	if got, _ := InnerHTML(div, nil); got != `<span>in</span> text` {
		t.Errorf("InnerHTML(div) = %q", got)
	}
}

func TestAttr(t *testing.T) {
	tests := []struct {
		in, name, want string
		ok             bool
	}{
		{`<a href="/x?a=1&amp;b=2">y</a>`, "href", "/x?a=1&b=2", true},
		{`<a HREF=x>y</a>`, "Href", "x", true},
		{`<a>y</a>`, "href", "", false},
		{`<input disabled>`, "disabled", "", true},
		{`text only`, "href", "", false},
		{`<html lang="zh-CN"><body></body></html>`, "lang", "zh-CN", true},
		{`<svg viewBox="0 0 1 1"></svg>`, "viewbox", "0 0 1 1", true},
		{`<svg viewBox="0 0 1 1"></svg>`, "viewBox", "0 0 1 1", true},
	}
	for _, tc := range tests {
		n, _ := ParseNode(tc.in, nil)
		got, ok := Attr(n, tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Attr(%q, %q) = %q, %v; want %q, %v", tc.in, tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSelect(t *testing.T) {
	doc, _ := ParseDocument(`<div id=r><ul><li class=a>1</li><li>2</li><li class="a b">3</li></ul>
		<div><p>p1</p></div><p>p2</p></div>`, nil)
	tests := []struct{ css, want string }{
		{"li", "1,2,3"},
		{"li.a", "1,3"},
		{".b, li:first-child", "1,3"},
		{"ul > li:nth-child(2)", "2"},
		{"#r > p", "p2"},
		{"div p", "p1,p2"},
		{`li:contains("3")`, "3"},
		{"div:has(p) > p", "p1,p2"},
		{"table", ""},
	}
	for _, tc := range tests {
		nodes, err := mustCompile(t, tc.css).Select(doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, n := range nodes {
			s, _ := Text(n, nil)
			texts = append(texts, s)
		}
		if got := strings.Join(texts, ","); got != tc.want {
			t.Errorf("Select(%q) = %q, want %q", tc.css, got, tc.want)
		}
		first, _ := mustCompile(t, tc.css).First(doc, nil)
		if (first == nil) != (tc.want == "") {
			t.Errorf("First(%q) = %v", tc.css, first)
		}
	}
	// select looks at descendants only, as querySelectorAll does.
	ul, _ := mustCompile(t, "ul").First(doc, nil)
	if got, _ := mustCompile(t, "ul").Select(ul, nil); len(got) != 0 {
		t.Errorf("Select(ul, ul) found %d nodes, want 0", len(got))
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ css, want string }{
		{"div[", `bad CSS selector "div[": expected identifier, found EOF instead`},
		{"a >", `bad CSS selector "a >": expected selector, found EOF instead`},
		{"", "empty CSS selector"},
		{"  ", "empty CSS selector"},
		{strings.Repeat("a", 1001), "CSS selector is 1001 bytes, the limit is 1000"},
	}
	for _, tc := range tests {
		_, err := Compile(tc.css)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Compile(%q) error = %v, want %q", tc.css, err, tc.want)
		}
	}
}

func TestSelectorCache(t *testing.T) {
	c := NewSelectorCache(2)
	a1, _ := c.Compile("a")
	c.Compile("b")
	a2, _ := c.Compile("a") // a is now the most recent
	if a1 != a2 {
		t.Error("cache did not return the same selector")
	}
	c.Compile("c") // evicts b
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
	if a3, _ := c.Compile("a"); a3 != a1 {
		t.Error("a was evicted instead of b")
	}
	if _, err := c.Compile("["); err == nil || c.Len() != 2 {
		t.Errorf("bad selector: err %v, Len %d", err, c.Len())
	}
}

// formatGrid writes a grid one row per line, each slot as id:"text"(rowspan×colspan) or -.
func formatGrid(g *Grid) string {
	var b strings.Builder
	fmt.Fprintf(&b, "width %d, %d cells\n", g.Width, len(g.Cells))
	for _, row := range g.Slots {
		for x, c := range row {
			if x > 0 {
				b.WriteString(" | ")
			}
			if c == nil {
				b.WriteString("-")
				continue
			}
			fmt.Fprintf(&b, "%d:%q(%d×%d)", c.ID, c.Text, c.RowSpan, c.ColSpan)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "labels: %s\n", strings.Join(g.Labels(), ", "))
	return b.String()
}

// TestTableGrid lays out the first table of each testdata/tables/NAME.html and compares the
// result with NAME.grid. go test -run TestTableGrid -update rewrites the .grid files.
func TestTableGrid(t *testing.T) {
	files, _ := filepath.Glob("testdata/tables/*.html")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			input, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := ParseNode(string(input), nil)
			table := FindTable(n)
			if table == nil {
				t.Fatal("no table")
			}
			g, err := TableGrid(table, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := formatGrid(g)
			golden := strings.TrimSuffix(file, ".html") + ".grid"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("grid:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestTableGridBudget(t *testing.T) {
	n, _ := ParseNode(`<table><tr><td colspan=1000 rowspan=2>x</td></tr><tr></tr></table>`, nil)
	m := &countingMeter{limit: 1999}
	if _, err := TableGrid(FindTable(n), m); err == nil {
		t.Error("2000 slots fit a budget of 1999")
	}
	m = &countingMeter{limit: 2001}
	g, err := TableGrid(FindTable(n), m)
	if err != nil || g.Width != 1000 || len(g.Slots) != 2 {
		t.Errorf("2000 slots: %v", err)
	}
}

func TestFindTable(t *testing.T) {
	n, _ := ParseNode(`<div><p>x</p><table id=one><tr><td><table id=two></table></td></tr></table><table id=three></table></div>`, nil)
	if got, _ := Attr(FindTable(n), "id"); got != "one" {
		t.Errorf("FindTable = %q, want one", got)
	}
	two, _ := mustCompile(t, "#two").First(n, nil)
	if FindTable(two) != two {
		t.Error("FindTable(table) is not the table itself")
	}
	p, _ := mustCompile(t, "p").First(n, nil)
	if FindTable(p) != nil {
		t.Error("FindTable(p) found a table")
	}
}

// TestSelectorCacheConcurrent compiles from several goroutines at once, as `each` with
// concurrency does; run with -race.
func TestSelectorCacheConcurrent(t *testing.T) {
	c := NewSelectorCache(5)
	doc, _ := ParseDocument("<p class=a>1</p><p class=b>2</p>", nil)
	done := make(chan error)
	for g := range 4 {
		go func() {
			for i := range 200 {
				s, err := c.Compile(fmt.Sprintf("p.%c, #x%d", 'a'+rune(i%2), (i+g)%10))
				if err != nil {
					done <- err
					return
				}
				if got, _ := s.Select(doc, nil); len(got) != 1 {
					done <- fmt.Errorf("%s matched %d", s, len(got))
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if c.Len() != 5 {
		t.Errorf("Len = %d, want 5", c.Len())
	}
}
