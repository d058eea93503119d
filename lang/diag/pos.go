// Package diag holds the two types every part of the harness reports problems with: Pos, a place
// in a source file, and Diagnostic, one problem at such a place with its severity. The
// expression language, the plugin and genui validators, the registry validator and the
// recorded-test runner all use them, so a problem prints the same way wherever it is found:
// FILE:LINE:COL: message, with "warning: " before the message of a warning.
//
// The package imports nothing of the harness; every other package may import it.
package diag

import "fmt"

// Pos is a position in a source file: Line and Col are 1-based (Col counts Unicode code points,
// not bytes), Offset is the 0-based byte offset. The zero Pos means "unknown"; a Pos with a Line
// and Col 0 is known only to the line. Offset is 0 where the producer tracks only lines and
// columns (YAML nodes, for one).
type Pos struct{ Line, Col, Offset int }

// String returns "LINE:COL".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// IsValid reports whether p names a real position (Line ≥ 1).
func (p Pos) IsValid() bool { return p.Line > 0 }

// Less orders positions by line, then column.
func (p Pos) Less(q Pos) bool {
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}
