// Package doccheck finds Go declarations that lack the doc comments the house style asks for
// (STYLE.md §17): a package comment, and a comment on every exported name. Tests of the lang
// packages call it so a missing comment fails the build's tests rather than a review.
package doccheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Missing parses the non-test Go files of dir and returns one "file:line: what" line per
// exported function, method, type, constant or variable without a doc comment (a grouped
// declaration's own comment counts for its members), plus one when no file has a package
// comment. The result is sorted; an error is returned when a file cannot be read or parsed.
func Missing(dir string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []string
	hasPackageDoc := false
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Doc != nil {
			hasPackageDoc = true
		}
		report := func(pos token.Pos, what string) {
			p := fset.Position(pos)
			out = append(out, fmt.Sprintf("%s:%d: %s has no doc comment", filepath.Base(p.Filename), p.Line, what))
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc != nil {
					continue
				}
				if d.Recv != nil && !receiverExported(d.Recv) {
					continue
				}
				report(d.Pos(), "func "+d.Name.Name)
			case *ast.GenDecl:
				if d.Doc != nil && d.Lparen.IsValid() {
					continue // a documented group documents its members
				}
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
							report(s.Pos(), "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && d.Doc == nil {
								report(n.Pos(), n.Name)
							}
						}
					}
				}
			}
		}
	}
	if !hasPackageDoc {
		out = append(out, filepath.Base(dir)+": no package comment")
	}
	sort.Strings(out)
	return out, nil
}

// receiverExported reports whether a method's receiver type is exported.
func receiverExported(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
