package cli

import (
	"bytes"
	"io"
	"strings"

	"golang.org/x/text/width"
)

// table lines up tab-separated cells in columns, as text/tabwriter does with padding 2, but
// measures a cell by its width on a terminal: a Chinese character (East Asian wide or
// fullwidth) takes two columns, so a header or a status in Chinese lines up with the rows
// under it. Write buffers; Flush writes every line, each cell but a line's last padded to its
// column's widest. A line with fewer cells ends early.
type table struct {
	w   io.Writer
	buf bytes.Buffer
}

// newTable returns a table that writes to w on Flush.
func newTable(w io.Writer) *table { return &table{w: w} }

// Write buffers p; it never fails.
func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the buffered lines in columns and empties the buffer.
func (t *table) Flush() error {
	text := strings.TrimSuffix(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return nil
	}
	var rows [][]string
	var widths []int
	for line := range strings.SplitSeq(text, "\n") {
		cells := strings.Split(line, "\t")
		for i, c := range cells[:len(cells)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
		rows = append(rows, cells)
	}
	var out strings.Builder
	for _, cells := range rows {
		for i, c := range cells {
			out.WriteString(c)
			if i < len(cells)-1 {
				out.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
			}
		}
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// displayWidth is how many terminal columns s takes: two for each East Asian wide or
// fullwidth rune, one for any other.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}
