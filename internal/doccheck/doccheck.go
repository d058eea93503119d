// Package doccheck finds Go declarations that lack the doc comments the house style asks for
// (STYLE.md §17): a package comment, and a comment on every exported name that starts with that
// name. Its test walks every package of the module, so a missing comment fails the tests rather
// than a review.
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
			// A command's comment starts "Command name …", as go doc expects.
			if want := "Package " + f.Name.Name + " "; !strings.HasPrefix(f.Doc.Text(), want) &&
				!(f.Name.Name == "main" && strings.HasPrefix(f.Doc.Text(), "Command ")) {
				out = append(out, fmt.Sprintf("%s: the package comment does not start with %q", filepath.Base(name), want))
			}
		}
		report := func(pos token.Pos, what string) {
			p := fset.Position(pos)
			out = append(out, fmt.Sprintf("%s:%d: %s has no doc comment", filepath.Base(p.Filename), p.Line, what))
		}
		// A comment that is there must start with the name it documents ("Run runs …"); a
		// deprecated or grouped form is left to review.
		misnamed := func(pos token.Pos, name string, doc *ast.CommentGroup) {
			if doc == nil {
				return
			}
			text := doc.Text()
			if strings.HasPrefix(text, name+" ") || strings.HasPrefix(text, name+"\n") ||
				strings.HasPrefix(text, "A "+name+" ") || strings.HasPrefix(text, "An "+name+" ") ||
				strings.HasPrefix(text, "The "+name+" ") || strings.HasPrefix(text, "Deprecated:") {
				return
			}
			p := fset.Position(pos)
			out = append(out, fmt.Sprintf("%s:%d: the doc comment of %s does not start with its name", filepath.Base(p.Filename), p.Line, name))
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Recv != nil && !receiverExported(d.Recv) {
					continue
				}
				if d.Doc != nil {
					misnamed(d.Pos(), d.Name.Name, d.Doc)
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
						if !s.Name.IsExported() {
							continue
						}
						switch {
						case s.Doc == nil && d.Doc == nil:
							report(s.Pos(), "type "+s.Name.Name)
						case s.Doc != nil:
							misnamed(s.Pos(), s.Name.Name, s.Doc)
						case !d.Lparen.IsValid():
							misnamed(s.Pos(), s.Name.Name, d.Doc)
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
