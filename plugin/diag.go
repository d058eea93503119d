package plugin

import (
	"fmt"
	"sort"

	"github.com/pkuinfo/harness/lang/diag"
)

// SortDiagnostics orders diagnostics by file (PLUGIN.md first, then by name), line, column and
// message, and drops duplicates: diagnostics that differ at most in their byte offset, which
// print the same.
func SortDiagnostics(ds []diag.Diagnostic) []diag.Diagnostic {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			if a.File == ManifestFile || b.File == ManifestFile {
				return a.File == ManifestFile
			}
			return a.File < b.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		return a.Msg < b.Msg
	})
	out := ds[:0]
	for i, d := range ds {
		if i > 0 && samePrinted(d, ds[i-1]) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// samePrinted reports whether a and b differ at most in their byte offset.
func samePrinted(a, b diag.Diagnostic) bool {
	a.Pos.Offset, b.Pos.Offset = 0, 0
	return a == b
}

// maxDiagnostics caps how many diagnostics one plugin reports; a file of garbage should not
// produce megabytes of output.
const maxDiagnostics = 200

// diagList collects diagnostics.
type diagList struct {
	ds      []diag.Diagnostic
	dropped int
}

func (l *diagList) add(d diag.Diagnostic) {
	if len(l.ds) >= maxDiagnostics {
		l.dropped++
		return
	}
	l.ds = append(l.ds, d)
}

func (l *diagList) errorf(file string, p diag.Pos, step, format string, args ...any) {
	l.add(diag.Diagnostic{File: file, Pos: p, Path: step, Msg: fmt.Sprintf(format, args...)})
}

func (l *diagList) warnf(file string, p diag.Pos, step, format string, args ...any) {
	l.add(diag.Diagnostic{Severity: diag.Warning, File: file, Pos: p, Path: step, Msg: fmt.Sprintf(format, args...)})
}

func (l *diagList) result() []diag.Diagnostic {
	ds := SortDiagnostics(l.ds)
	if l.dropped > 0 {
		ds = append(ds, diag.Diagnostic{File: ManifestFile, Pos: diag.Pos{Line: 1, Col: 1},
			Msg: fmt.Sprintf("%d more problems not shown", l.dropped)})
	}
	return ds
}
