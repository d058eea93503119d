package htmlx

import (
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
)

// FuzzHTML parses any string as a node and checks the invariants of Text, Select and TableGrid:
// no panic, text without white space at either end, Select and First finding what cascadia's own
// QueryAll finds, every row of the grid Width slots long, each
// slot of a cell inside the cell's rectangle, each cell's top-left slot its own, and the cost of
// the walk within one operation per KB plus one of what the text walk charges.
func FuzzHTML(f *testing.F) {
	files := []string{
		"<table><tr><td rowspan=2 colspan=2>a</td><td>b</td></tr><tr><td>c</td></tr></table>",
		"<p>a&nbsp;b<br>c</p><pre> x\n y</pre><script>z</script>",
		"<td>1</td><td colspan=3>2</td>", "<tr><th rowspan=0>h</th></tr><tr><td>x</td></tr>",
		"<!DOCTYPE html><table><tbody><tr><td><table><tr><td>n</td></tr></table></td></tr></tbody></table>",
	}
	for _, s := range files {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNode(s, nil)
		if err != nil {
			return
		}
		m := &countingMeter{limit: 1 << 40}
		text, err := Text(n, m)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Trim(text, " \t\n\r\f") != text {
			t.Fatalf("Text(%q) = %q has white space at an end", s, text)
		}
		// select walks as cascadia does: same elements, same order.
		for _, css := range []string{"*", "td, th", "p > b"} {
			sel, _ := Compile(css)
			ours, err := sel.Select(n, nil)
			if err != nil {
				t.Fatal(err)
			}
			theirs := cascadia.QueryAll(n, sel.group)
			if len(ours) != len(theirs) {
				t.Fatalf("select %q: %d nodes, cascadia %d", css, len(ours), len(theirs))
			}
			for i := range ours {
				if ours[i] != theirs[i] {
					t.Fatalf("select %q: node %d differs from cascadia's", css, i)
				}
			}
			if first, _ := sel.First(n, nil); len(theirs) > 0 && first != theirs[0] || len(theirs) == 0 && first != nil {
				t.Fatalf("first %q differs from cascadia's", css)
			}
		}
		table := FindTable(n)
		if table == nil {
			return
		}
		g, err := TableGrid(table, nil)
		if err != nil {
			t.Fatal(err)
		}
		for y, row := range g.Slots {
			if len(row) != g.Width {
				t.Fatalf("row %d has %d slots, width %d", y, len(row), g.Width)
			}
			for x, c := range row {
				if c == nil {
					continue
				}
				if y < c.Row || y >= c.Row+c.RowSpan || x < c.Col || x >= c.Col+c.ColSpan {
					t.Fatalf("slot (%d,%d) holds cell %d at (%d,%d) %d×%d", y, x, c.ID, c.Row, c.Col, c.RowSpan, c.ColSpan)
				}
			}
		}
		for i, c := range g.Cells {
			if c.ID != i || g.Slots[c.Row][c.Col] != c {
				t.Fatalf("cell %d (id %d) does not own its top-left slot", i, c.ID)
			}
		}
	})
}
