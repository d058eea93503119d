package htmlx

import (
	"fmt"
	"strings"
	"testing"
)

// benchTable is a 200×10 table with a header row and a rowspan every tenth row.
func benchTable() string {
	var b strings.Builder
	b.WriteString("<table><tr>")
	for c := range 10 {
		fmt.Fprintf(&b, "<th>列%d</th>", c+1)
	}
	b.WriteString("</tr>")
	for r := range 200 {
		b.WriteString("<tr>")
		for c := range 10 {
			switch {
			case c == 0 && r%10 == 0:
				fmt.Fprintf(&b, `<td rowspan="2">第%d行&nbsp;A</td>`, r)
			case c == 0 && r%10 == 1:
			default:
				fmt.Fprintf(&b, "<td><span>%d-%d</span> &amp; 值</td>", r, c)
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}

func BenchmarkTableGrid(b *testing.B) {
	n, err := ParseNode(benchTable(), nil)
	if err != nil {
		b.Fatal(err)
	}
	table := FindTable(n)
	m := &countingMeter{limit: 1 << 62}
	for b.Loop() {
		if _, err := TableGrid(table, m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkText(b *testing.B) {
	n, err := ParseNode(benchTable(), nil)
	if err != nil {
		b.Fatal(err)
	}
	m := &countingMeter{limit: 1 << 62}
	for b.Loop() {
		if _, err := Text(n, m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseNode(b *testing.B) {
	s := benchTable()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := ParseNode(s, nil); err != nil {
			b.Fatal(err)
		}
	}
}
