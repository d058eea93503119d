package htmlx

import (
	"strconv"

	"github.com/pkuinfo/harness/lang/internal/workcount"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Limits on spans, as in the HTML table model: a larger colspan counts as 1000, a larger rowspan
// as 65534, and a rowspan never reaches past its row group. Every slot a span fills, and every
// slot that pads a short row to the table's width, is charged one operation before it is made,
// so the grid's size is bounded by the budget whatever the spans say.
const (
	maxColspan = 1000
	maxRowspan = 65534
)

// Cell is one source cell (<td> or <th>) of a table, placed in the grid. Row and Col are the
// 0-based slot of its top-left corner; RowSpan and ColSpan the slots it covers after expansion
// (a rowspan is cut at the end of its row group, rowspan="0" reaches it); ID is the 0-based index
// of the cell among the table's cells in document order; Text is its visible text (see Text).
type Cell struct {
	Text             string
	Row, Col         int
	RowSpan, ColSpan int
	ID               int
	Node             *html.Node
}

// Grid is a table with rowspan and colspan expanded (docs/DECISIONS.md §10 "tableRows"): Slots[r][c]
// is the cell covering row r, column c, or nil where the table has no cell (ragged rows). Every
// row has Width slots. A slot that two cells claim (a malformed table) keeps the first.
type Grid struct {
	Slots [][]*Cell
	Width int
	Cells []*Cell // in document order; Cells[i].ID == i
}

// FindTable returns n when it is a <table>, else the first <table> inside n in document order,
// or nil when there is none.
func FindTable(n *html.Node) *html.Node {
	t, _ := FindTableCharged(n, nil)
	return t
}

// FindTableCharged is FindTable charged to m as a walk is (each node its weight, one operation
// per KB), so looking for a table in a large page is paid for on every call.
func FindTableCharged(n *html.Node, m Meter) (*html.Node, error) {
	var found *html.Node
	mt := meter{m: m}
	err := walk(n, func(c *html.Node) (bool, error) {
		if found != nil {
			return false, nil
		}
		if err := mt.add(weight(c)); err != nil {
			return false, err
		}
		if c.Type == html.ElementNode && c.DataAtom == atom.Table {
			found = c
			return false, nil
		}
		return true, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return found, nil
}

// rowGroups returns the table's rows grouped as the table model groups them: the rows of each
// <thead>, <tbody> and <tfoot> in document order, and each run of <tr> directly in the table.
// Rows of nested tables are not included.
func rowGroups(table *html.Node) [][]*html.Node {
	var groups [][]*html.Node
	var direct []*html.Node
	for c := table.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.Tr:
			direct = append(direct, c)
			continue
		case atom.Thead, atom.Tbody, atom.Tfoot:
			if direct != nil {
				groups, direct = append(groups, direct), nil
			}
			var rows []*html.Node
			for r := c.FirstChild; r != nil; r = r.NextSibling {
				if r.Type == html.ElementNode && r.DataAtom == atom.Tr {
					rows = append(rows, r)
				}
			}
			if rows != nil {
				groups = append(groups, rows)
			}
		}
	}
	if direct != nil {
		groups = append(groups, direct)
	}
	return groups
}

// span reads a colspan or rowspan attribute with the HTML rules for non-negative integers
// (leading spaces, digits, anything after ignored); missing or unreadable gives def.
func span(n *html.Node, name string, def int) int {
	v, ok := Attr(n, name)
	if !ok {
		return def
	}
	i := 0
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r' || v[i] == '\f') {
		i++
	}
	j := i
	for j < len(v) && v[j] >= '0' && v[j] <= '9' && j-i < 9 {
		j++
	}
	if j == i {
		return def
	}
	x, _ := strconv.Atoi(v[i:j])
	return x
}

// TableGrid lays out the cells of table (a <table> element) on a grid, expanding rowspan and
// colspan as the HTML table model does. <th> counts as a cell wherever it is. Cells of nested
// tables belong to their own table, though their text is part of the enclosing cell's text.
// Each slot costs one operation, charged before the cell is placed, and the cells' text costs as
// Text does; the meter's error is returned when the budget runs out.
func TableGrid(table *html.Node, m Meter) (*Grid, error) {
	g := &Grid{}
	for _, rows := range rowGroups(table) {
		base := len(g.Slots)
		for range rows {
			g.Slots = append(g.Slots, nil)
		}
		end := len(g.Slots)
		for i, tr := range rows {
			y := base + i
			x := 0
			for td := tr.FirstChild; td != nil; td = td.NextSibling {
				if td.Type != html.ElementNode || (td.DataAtom != atom.Td && td.DataAtom != atom.Th) {
					continue
				}
				for x < len(g.Slots[y]) && g.Slots[y][x] != nil {
					x++
				}
				cs := min(max(span(td, "colspan", 1), 1), maxColspan)
				rs := span(td, "rowspan", 1)
				if rs == 0 || rs > end-y {
					rs = end - y
				}
				rs = min(max(rs, 1), maxRowspan)
				if m != nil {
					if err := m.Charge(cs * rs); err != nil {
						return nil, err
					}
				}
				text, err := Text(td, m)
				if err != nil {
					return nil, err
				}
				cell := &Cell{Text: text, Row: y, Col: x, RowSpan: rs, ColSpan: cs, ID: len(g.Cells), Node: td}
				g.Cells = append(g.Cells, cell)
				workcount.Add(16 * rs * cs)
				for dy := range rs {
					row := g.Slots[y+dy]
					for len(row) < x+cs {
						row = append(row, nil)
					}
					for dx := range cs {
						if row[x+dx] == nil {
							row[x+dx] = cell
						}
					}
					g.Slots[y+dy] = row
				}
				x += cs
			}
		}
	}
	pad := 0
	for _, row := range g.Slots {
		g.Width = max(g.Width, len(row))
	}
	for _, row := range g.Slots {
		pad += g.Width - len(row)
	}
	if m != nil && pad > 0 { // the padding slots, before they are made
		if err := m.Charge(pad); err != nil {
			return nil, err
		}
	}
	workcount.Add(16 * pad)
	for i, row := range g.Slots {
		for len(row) < g.Width {
			row = append(row, nil)
		}
		g.Slots[i] = row
	}
	return g, nil
}

// Labels returns the header labels of a grid (tableRows(node, { header: true }), docs/DECISIONS.md
// §10): the text of each slot of the first row, so a colspan repeats its label; a repeated label
// gets _2, _3, … in order; an empty or missing one is colN with N the 1-based column number.
//
// It takes time linear in the width: for each label it remembers the last suffix tried, and since
// labels are only ever added, the next free suffix is never below it.
func (g *Grid) Labels() []string {
	labels, _ := g.LabelsCharged(nil)
	return labels
}

// LabelsCharged is Labels charged to m: one operation per KB of label text made (a cell's text
// repeated over its colspan, with suffixes), before it is made.
func (g *Grid) LabelsCharged(m Meter) ([]string, error) {
	if m != nil && len(g.Slots) > 0 {
		size := 0
		for _, c := range g.Slots[0] {
			size += 12 // "colN" or a suffix "_N"
			if c != nil {
				size += len(c.Text)
			}
		}
		if err := m.Charge(size / KB); err != nil {
			return nil, err
		}
	}
	labels := make([]string, g.Width)
	used := make(map[string]bool, g.Width)
	next := make(map[string]int) // label → the suffix to try next
	for x := range g.Width {
		label := ""
		if len(g.Slots) > 0 && g.Slots[0][x] != nil {
			label = g.Slots[0][x].Text
		}
		if label == "" {
			label = "col" + strconv.Itoa(x+1)
		}
		if used[label] {
			k := max(next[label], 2)
			for used[label+"_"+strconv.Itoa(k)] {
				k++
			}
			next[label] = k + 1
			label = label + "_" + strconv.Itoa(k)
		}
		used[label] = true
		labels[x] = label
	}
	return labels, nil
}
