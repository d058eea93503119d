package diag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/width"
)

// Severity says whether a diagnostic is an error (the file is refused) or a warning (advice).
// Warnings are a severity, not a separate path (docs/DECISIONS.md §7). The zero Severity is Error.
type Severity int

// The two severities.
const (
	Error Severity = iota
	Warning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// MarshalText writes "error" or "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one problem found in a file. File is the file as shown to the reader (relative
// to the plugin folder for a plugin); Pos is where the problem is; Path says where in the file's
// structure, when it has one: a step path ("steps[2] (let page)") in a tool, a JSON path
// ("$.root.children[1].text", "plugins[2].id") in a document or a registry file; Msg says what
// is wrong, and how to fix it where known.
type Diagnostic struct {
	Severity Severity
	File     string
	Pos      Pos
	Path     string
	Msg      string
}

// String formats d as "FILE:LINE:COL: [warning: ][PATH: ]MSG" (docs/DECISIONS.md §7).
func (d Diagnostic) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", d.File, d.Pos.Line, d.Pos.Col)
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	b.WriteString(d.Msg)
	return b.String()
}

// MarshalJSON writes d in the shape of plugins.validate and `harness plugin validate --json`:
// {"file", "line", "col", "severity": "error"|"warning", "step" (Path, left out when empty),
// "message"}. The offset is not written.
func (d Diagnostic) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		File     string   `json:"file"`
		Line     int      `json:"line"`
		Col      int      `json:"col"`
		Severity Severity `json:"severity"`
		Path     string   `json:"step,omitempty"`
		Msg      string   `json:"message"`
	}{d.File, d.Pos.Line, d.Pos.Col, d.Severity, d.Path, d.Msg})
}

// HasErrors reports whether any of ds is an error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Format returns d followed by the offending line of src and a caret under its column, for
// people (STYLE §9); wide (CJK) characters count as two columns, tabs stay tabs. src is the
// file's text; when d's line is not in src, or is empty, only d.String() is returned.
func (d Diagnostic) Format(src []byte) string {
	line, ok := sourceLine(src, d.Pos.Line)
	if !ok || line == "" {
		return d.String()
	}
	var caret strings.Builder
	col := 1
	for _, r := range line {
		if col >= d.Pos.Col {
			break
		}
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			caret.WriteString("  ") // CJK characters take two columns in a terminal
		default:
			if r == '\t' {
				caret.WriteByte('\t')
			} else {
				caret.WriteByte(' ')
			}
		}
		col++
	}
	caret.WriteByte('^')
	return d.String() + "\n    " + line + "\n    " + caret.String()
}

// sourceLine returns line n (1-based) of src without its line ending, and whether src has that
// line.
func sourceLine(src []byte, n int) (string, bool) {
	if n < 1 {
		return "", false
	}
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return "", false
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return string(bytes.TrimSuffix(src, []byte("\r"))), true
}
