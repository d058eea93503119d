package htmlx

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "hello", "hello"},
		{"collapse", "  a \n\t b   c  ", "a b c"},
		{"entities", "&lt;a&gt; &amp; &quot;x&quot; &#x4e2d;&#25991; &copy;", `<a> & "x" 中文 ©`},
		{"nbsp becomes space", "a&nbsp;&nbsp;b&nbsp;", "a b"},
		{"nbsp only", "&nbsp;", ""},
		{"nbsp raw", "a\u00a0\u00a0b", "a b"},
		{"br", "a<br>b<br/>c", "a\nb\nc"},
		{"double br", "a<br><br>b", "a\n\nb"},
		{"br at ends", "<br>a<br>", "a"},
		{"space around br", "a <br> b", "a\nb"},
		{"blocks", "<p>one</p><p>two</p><div>three</div>", "one\ntwo\nthree"},
		{"nested blocks", "<div><div><p>a</p></div></div><div>b</div>", "a\nb"},
		{"inline stays", "<span>a</span><b>b</b> <i>c</i>", "ab c"},
		{"block in inline", "x<div>y</div>z", "x\ny\nz"},
		{"block end then br", "<p>a</p><br>b", "a\n\nb"},
		{"list", "<ul><li>a</li><li> b </li></ul>", "a\nb"},
		{"headings", "<h1>T</h1>text", "T\ntext"},
		{"script style dropped", "a<script>var x = '<b>';</script><style>p{}</style>b", "ab"},
		{"noscript dropped", "a<noscript><img src=x></noscript>b", "ab"},
		{"comment dropped", "a<!-- hidden -->b", "ab"},
		{"head dropped", "<html><head><title>T</title></head><body>B</body></html>", "B"},
		{"table cells", "<table><tr><td>a</td><td>b</td></tr><tr><th>c</th><td>d</td></tr></table>", "a b\nc d"},
		{"pre keeps", "<pre>a  b\n  c\n</pre>d", "a  b\n  c\nd"},
		{"pre crlf", "<pre>x\r\ny</pre>", "x\ny"},
		{"chinese", "<p>课程：　高等数学</p>", "课程：　高等数学"},
		{"empty", "", ""},
		{"only blocks", "<div></div><p> </p>", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ParseNode(tc.in, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Text(n, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTextOfHiddenRoot(t *testing.T) {
	doc, _ := ParseDocument("<html><head><title> The  title </title></head></html>", nil)
	title, err := mustCompile(t, "title").First(doc, nil)
	if err != nil || title == nil {
		t.Fatalf("no title: %v", err)
	}
	if got, _ := Text(title, nil); got != "The title" {
		t.Errorf("Text(title) = %q, want %q", got, "The title")
	}
}

// countingMeter is a budget: Charge fails once more than limit operations are asked for.
type countingMeter struct{ used, limit int }

var errBudget = errors.New("budget exceeded")

func (c *countingMeter) Charge(n int) error {
	c.used += n
	if c.used > c.limit {
		return errBudget
	}
	return nil
}

func TestCosts(t *testing.T) {
	page := "<div>" + strings.Repeat("<p>"+strings.Repeat("x", 1000)+"</p>", 100) + "</div>"
	m := &countingMeter{limit: 1 << 30}
	doc, err := ParseDocument(page, m)
	if err != nil {
		t.Fatal(err)
	}
	if want := ParseKBWeight*(len(page)/KB) + 1 + (2*101+101)/NodesPerOp; m.used != want { // and 101 start and end tags
		t.Errorf("parse cost %d, want %d", m.used, want)
	}
	m.used = 0
	if _, err := Text(doc, m); err != nil {
		t.Fatal(err)
	}
	// 100 KB of text and about 105 elements of 32 bytes: 100 operations.
	if m.used != 100 {
		t.Errorf("text cost %d, want 100", m.used)
	}
	m.used = 0
	ps, err := mustCompile(t, "p").Select(doc, m)
	if err != nil || len(ps) != 100 {
		t.Fatalf("select: %d nodes, %v", len(ps), err)
	}
	if m.used != 100 {
		t.Errorf("select cost %d, want 100", m.used)
	}
	small := &countingMeter{limit: 10}
	if _, err := Text(doc, small); !errors.Is(err, errBudget) {
		t.Errorf("Text over budget: err = %v, want the meter's error", err)
	}
	if small.used > 11 {
		t.Errorf("Text over budget went on to %d operations", small.used)
	}
	if _, err := ParseDocument(page, &countingMeter{limit: 5}); !errors.Is(err, errBudget) {
		t.Errorf("parse over budget: err = %v", err)
	}
	if _, err := OuterHTML(doc, &countingMeter{limit: 5}); !errors.Is(err, errBudget) {
		t.Errorf("OuterHTML over budget: err = %v", err)
	}
	// A selector that reads each candidate's subtree costs in proportion to it.
	deep := &countingMeter{limit: 1 << 30}
	if _, err := mustCompile(t, "div:has(p)").Select(doc, deep); err != nil {
		t.Fatal(err)
	}
	if deep.used <= 100 {
		t.Errorf(":has cost %d, want more than a plain walk (100)", deep.used)
	}
}

func TestDeepNesting(t *testing.T) {
	page := strings.Repeat("<div>", 500) + "x" + strings.Repeat("</div>", 500)
	doc, err := ParseDocument(page, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Text(doc, nil); got != "x" {
		t.Errorf("Text = %q", got)
	}
	page = strings.Repeat("<div>", 600)
	for _, parse := range []func(string, Meter) (*html.Node, error){ParseDocument, ParseNode} {
		_, err = parse(page, nil)
		if want := "cannot parse HTML: elements nest more than 512 deep"; err == nil || err.Error() != want {
			t.Errorf("600 nested divs: err = %v, want %q", err, want)
		}
	}
}
