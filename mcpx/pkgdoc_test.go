package mcpx

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocComments checks STYLE §17 for mcpx and the demo-canteen package: a
// package comment, and a doc comment starting with the name on every
// exported declaration.
func TestDocComments(t *testing.T) {
	for _, dir := range []string{".", "../examples/demo-canteen/canteen"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		fset := token.NewFileSet()
		hasPkgDoc := false
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			hasPkgDoc = hasPkgDoc || af.Doc != nil
			check := func(name string, doc *ast.CommentGroup, pos token.Pos) {
				if ast.IsExported(name) && (doc == nil || !strings.HasPrefix(doc.Text(), name+" ")) {
					t.Errorf("%s: %s has no doc comment starting with its name", fset.Position(pos), name)
				}
			}
			for _, d := range af.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv != nil {
						recv := d.Recv.List[0].Type
						if st, ok := recv.(*ast.StarExpr); ok {
							recv = st.X
						}
						if id, ok := recv.(*ast.Ident); ok && !ast.IsExported(id.Name) {
							continue
						}
					}
					check(d.Name.Name, d.Doc, d.Pos())
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							doc := s.Doc
							if doc == nil {
								doc = d.Doc
							}
							check(s.Name.Name, doc, s.Pos())
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if ast.IsExported(n.Name) && s.Doc == nil && s.Comment == nil && d.Doc == nil {
									t.Errorf("%s: %s has no doc comment", fset.Position(n.Pos()), n.Name)
								}
							}
						}
					}
				}
			}
		}
		if !hasPkgDoc {
			t.Errorf("package %s has no package comment", dir)
		}
	}
}
