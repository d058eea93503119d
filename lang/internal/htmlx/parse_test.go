package htmlx

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestParseChargeCoversNodes checks that the parse is charged, before it runs, for the nodes it
// creates: a page of <br>, of empty paragraphs, and formatting elements the parser clones again
// and again (an open <b> re-opened after each closed block).
func TestParseChargeCoversNodes(t *testing.T) {
	var bs strings.Builder
	for i := range 250 {
		bs.WriteString("<b id=" + strconv.Itoa(i) + ">")
	}
	pages := map[string]string{
		"br":         strings.Repeat("<br>", 100_000),
		"p":          strings.Repeat("<p>x", 50_000),
		"links":      strings.Repeat("<a href=x>y</a> ", 10_000),
		"reopened":   strings.Repeat("<div>", 200) + bs.String() + strings.Repeat("</div>x", 200),
		"misnested":  strings.Repeat("<b><i>x</b>y</i>", 5_000),
		"table text": "<table>" + strings.Repeat("<b>x", 300) + strings.Repeat("<tr><td>y", 300),
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			m := &countingMeter{limit: 1 << 40}
			before, err := chargeParse(m, page)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(strings.NewReader(page))
			if err != nil {
				t.Skip(err) // nesting limit
			}
			n := 0
			_ = walk(doc, func(*html.Node) (bool, error) { n++; return true, nil }, nil)
			if n > before+8+n/10 {
				t.Errorf("%d nodes created, %d paid for before the parse", n, before)
			}
		})
	}
}
