package expr

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/pkuinfo/harness/lang/diag"
)

// Error is a static problem (a parse or check error) at a position in the source.
// Error() is "LINE:COL: MSG".
type Error struct {
	Pos diag.Pos
	Msg string
}

// Error returns "LINE:COL: MSG".
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList collects every static problem of one source, sorted by position (see Sort). The
// parser and checker report all problems they find, never just the first.
type ErrorList []*Error

// maxErrors caps an ErrorList so a garbage input cannot produce megabytes of messages.
const maxErrors = 50

// add appends an error unless the list is full.
func (l *ErrorList) add(p diag.Pos, format string, args ...any) {
	if len(*l) >= maxErrors {
		return
	}
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	*l = append(*l, &Error{Pos: p, Msg: msg})
}

// Sort orders the list by position, keeping the order of errors at the same position.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool { return l[i].Pos.Less(l[j].Pos) })
}

// Error joins the messages, one per line.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns nil when the list is empty and the sorted list otherwise.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	l.Sort()
	return l
}

// RuntimeError is an evaluation failure at a position. Kind is "expression" for a wrong value
// (reading a property of null, adding a list…) and "limit" when the operation budget, nesting or
// a builtin's size limit stopped the run; it becomes error.kind in a plugin's catch (SPEC §4).
// Error() is "LINE:COL: MSG".
type RuntimeError struct {
	Pos  diag.Pos
	Msg  string
	Kind string
	err  error // the wrapped cause, e.g. ErrBudget or a context error
}

// Error returns "LINE:COL: MSG".
func (e *RuntimeError) Error() string {
	if !e.Pos.IsValid() {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// Unwrap returns the cause, so errors.Is(err, ErrBudget) works.
func (e *RuntimeError) Unwrap() error { return e.err }

// Format renders err for a person: each message followed by the offending line of src and a
// caret under the column. Errors without a position (or not from this package) print as
// err.Error(). Wide (CJK) characters before the column are padded with two spaces so the caret
// lines up in a terminal.
func Format(src string, err error) string {
	if err == nil {
		return ""
	}
	var list ErrorList
	var re *RuntimeError
	switch {
	case errors.As(err, &list):
	case errors.As(err, &re):
		return withCaret(src, re.Error(), re.Pos)
	default:
		var e *Error
		if errors.As(err, &e) {
			return withCaret(src, e.Error(), e.Pos)
		}
		return err.Error()
	}
	var b strings.Builder
	for i, e := range list {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(withCaret(src, e.Error(), e.Pos))
	}
	return b.String()
}

func withCaret(src, msg string, p diag.Pos) string {
	if !p.IsValid() {
		return msg
	}
	line := sourceLine(src, p.Line)
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString("\n    ")
	b.WriteString(line)
	b.WriteString("\n    ")
	col := 1
	for _, r := range line {
		if col >= p.Col {
			break
		}
		switch {
		case r == '\t':
			b.WriteByte('\t')
		case isWide(r):
			b.WriteString("  ")
		default:
			b.WriteByte(' ')
		}
		col++
	}
	for ; col < p.Col; col++ { // caret past the end of the line (e.g. "unexpected end")
		b.WriteByte(' ')
	}
	b.WriteByte('^')
	return b.String()
}

func isWide(r rune) bool {
	k := width.LookupRune(r).Kind()
	return k == width.EastAsianWide || k == width.EastAsianFullwidth
}

// sourceLine returns line n (1-based) of src without its line ending.
func sourceLine(src string, n int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return strings.TrimSuffix(src, "\r")
}

// posAt computes the position of byte offset off in src by counting lines and code points. It is used
// for errors only; the lexer tracks positions incrementally.
func posAt(src string, off int) diag.Pos {
	if off > len(src) {
		off = len(src)
	}
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return diag.Pos{Line: line, Col: utf8.RuneCountInString(src[start:off]) + 1, Offset: off}
}
