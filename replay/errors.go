package replay

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/lang/diag"
)

// Error is one problem in a test file, at a position in that file. It prints as
// `FILE:LINE:COL: message` (docs/DECISIONS.md §7). Pos.Col 0 means the position is known only to
// the line, Pos.Line 0 that it is not known.
type Error struct {
	File string   // the test file as displayed
	Pos  diag.Pos // 1-based line and column; the offset is not tracked
	Msg  string   // what is wrong
}

// Error implements error.
func (e *Error) Error() string {
	switch {
	case e.Pos.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Pos.Col == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Pos.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// ErrorList collects every problem found in a test file instead of stopping at the first.
// Err returns nil when the list is empty.
type ErrorList []*Error

// Error implements error: one problem per line, sorted by position.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns l as an error, sorted by position, or nil when l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Pos.Less(b.Pos)
	})
	return l
}
