package plugin

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/text/width"

	"github.com/pkuinfo/harness/lang/diag"
)

// Severity says whether a diagnostic stops the plugin from loading (SeverityError) or is advice
// (SeverityWarning). STYLE §8: warnings are a severity, not a separate path.
type Severity int

// The two severities.
const (
	SeverityError Severity = iota
	SeverityWarning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == SeverityWarning {
		return "warning"
	}
	return "error"
}

// MarshalText writes "error" or "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one problem found while loading or validating a plugin (SPEC-DECISIONS §7). File
// is relative to the plugin folder; Line and Col are 1-based (Col counts code points); Step is
// the step path ("steps[2] (let page)") or "" outside steps.
type Diagnostic struct {
	File     string   `json:"file"`           // relative to the plugin folder
	Line     int      `json:"line"`           // 1-based
	Col      int      `json:"col"`            // 1-based, in code points
	Severity Severity `json:"severity"`       // error or warning
	Step     string   `json:"step,omitempty"` // step path, "" outside steps
	Msg      string   `json:"message"`        // what is wrong, and how to fix it where known
}

// String formats the diagnostic as "FILE:LINE:COL: [step: ]message", with "warning: " before the
// message of a warning.
func (d Diagnostic) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", d.File, d.Line, d.Col)
	if d.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	if d.Step != "" {
		b.WriteString(d.Step)
		b.WriteString(": ")
	}
	b.WriteString(d.Msg)
	return b.String()
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// SortDiagnostics orders diagnostics by file (PLUGIN.md first, then by name), line, column and
// message, and drops exact duplicates.
func SortDiagnostics(ds []Diagnostic) []Diagnostic {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			if a.File == ManifestFile || b.File == ManifestFile {
				return a.File == ManifestFile
			}
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Msg < b.Msg
	})
	out := ds[:0]
	for i, d := range ds {
		if i > 0 && d == ds[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// maxDiagnostics caps how many diagnostics one plugin reports; a file of garbage should not
// produce megabytes of output.
const maxDiagnostics = 200

// diagList collects diagnostics.
type diagList struct {
	ds      []Diagnostic
	dropped int
}

func (l *diagList) add(d Diagnostic) {
	if len(l.ds) >= maxDiagnostics {
		l.dropped++
		return
	}
	l.ds = append(l.ds, d)
}

func (l *diagList) errorf(file string, p diag.Pos, step, format string, args ...any) {
	l.add(Diagnostic{File: file, Line: p.Line, Col: p.Col, Step: step, Msg: fmt.Sprintf(format, args...)})
}

func (l *diagList) warnf(file string, p diag.Pos, step, format string, args ...any) {
	l.add(Diagnostic{File: file, Line: p.Line, Col: p.Col, Severity: SeverityWarning, Step: step, Msg: fmt.Sprintf(format, args...)})
}

func (l *diagList) result() []Diagnostic {
	ds := SortDiagnostics(l.ds)
	if l.dropped > 0 {
		ds = append(ds, Diagnostic{File: ManifestFile, Line: 1, Col: 1,
			Msg: fmt.Sprintf("%d more problems not shown", l.dropped)})
	}
	return ds
}

// FormatDiagnostic returns the diagnostic followed by the offending source line and a caret under
// its column, for people (STYLE §9); wide (CJK) characters count as two columns. src is the
// file's text; when the line is not in src only the diagnostic is returned.
func FormatDiagnostic(d Diagnostic, src []byte) string {
	s := newSource(d.File, src)
	line := s.lineText(d.Line)
	if d.Line < 1 || d.Line > len(s.lines) || line == "" {
		return d.String()
	}
	var caret strings.Builder
	col := 1
	for _, r := range line {
		if col >= d.Col {
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
