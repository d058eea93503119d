package stdlib

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestDocComments enforces the house rule that the package and every exported identifier of
// this package have a doc comment starting with the identifier's name.
func TestDocComments(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	d := doc.New(pkgs["stdlib"], "x", 0)
	if !strings.HasPrefix(d.Doc, "Package stdlib ") {
		t.Error("the package comment must start with \"Package stdlib \"")
	}
	check := func(name, text string, pos token.Pos) {
		if !strings.HasPrefix(text, name+" ") {
			t.Errorf("%s: %s: doc comment must start with its name", fset.Position(pos), name)
		}
	}
	for _, f := range d.Funcs {
		check(f.Name, f.Doc, f.Decl.Pos())
	}
	for _, ty := range d.Types {
		check(ty.Name, ty.Doc, ty.Decl.Pos())
		for _, f := range append(ty.Funcs, ty.Methods...) {
			check(f.Name, f.Doc, f.Decl.Pos())
		}
	}
	for _, v := range append(d.Consts, d.Vars...) {
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
