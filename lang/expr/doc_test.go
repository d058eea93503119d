package expr_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestDocComments enforces the house rule that the package and every exported identifier have a
// doc comment, and that each comment starts with the identifier's name.
func TestDocComments(t *testing.T) {
	checkDocComments(t, ".")
}

func checkDocComments(t *testing.T, dir string) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		d := doc.New(p, "x", 0)
		if !strings.HasPrefix(d.Doc, "Package "+d.Name+" ") {
			t.Errorf("package %s: the package comment must start with \"Package %s \"", d.Name, d.Name)
		}
		check := func(name, text string, pos token.Pos) {
			if !strings.HasPrefix(text, name+" ") && !strings.HasPrefix(text, "A "+name+" ") && !strings.HasPrefix(text, "An "+name+" ") {
				t.Errorf("%s: %s: doc comment must start with its name, got %q", fset.Position(pos), name, firstLine(text))
			}
		}
		for _, f := range d.Funcs {
			check(f.Name, f.Doc, f.Decl.Pos())
		}
		for _, ty := range d.Types {
			check(ty.Name, ty.Doc, ty.Decl.Pos())
			for _, f := range ty.Funcs {
				check(f.Name, f.Doc, f.Decl.Pos())
			}
			for _, m := range ty.Methods {
				if m.Name == "Error" || m.Name == "String" || m.Name == "Unwrap" || m.Name == "Is" {
					continue // the interface they implement documents them
				}
				check(m.Name, m.Doc, m.Decl.Pos())
			}
			checkValues(t, fset, ty.Consts)
			checkValues(t, fset, ty.Vars)
		}
		checkValues(t, fset, d.Consts)
		checkValues(t, fset, d.Vars)
	}
}

// checkValues requires a comment on every exported const or var (on the group or the spec).
func checkValues(t *testing.T, fset *token.FileSet, values []*doc.Value) {
	t.Helper()
	for _, v := range values {
		if v.Doc != "" {
			continue
		}
		for _, spec := range v.Decl.Specs {
			vs := spec.(*ast.ValueSpec)
			for _, n := range vs.Names {
				if n.IsExported() && vs.Doc == nil && vs.Comment == nil {
					t.Errorf("%s: %s has no doc comment", fset.Position(n.Pos()), n.Name)
				}
			}
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
