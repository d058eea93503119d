package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissing(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// Documented is fine.
func Documented() {}

func Bare() {}

func unexported() {}

type T struct{}

func (T) M() {}

type u struct{}

func (u) M() {}

// Group documents its members.
const (
	A = 1
	B = 2
)

var V, w = 1, 2

// does something, but the comment does not name it.
func Misnamed() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\nfunc TestX() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Missing(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Base(dir) + ": no package comment",
		"p.go:10: type T has no doc comment",
		"p.go:12: func M has no doc comment",
		"p.go:24: V has no doc comment",
		"p.go:27: the doc comment of Misnamed does not start with its name",
		"p.go:6: func Bare has no doc comment",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLangPackages holds the lang packages of this tree to the rule.
func TestLangPackages(t *testing.T) {
	for _, dir := range []string{"."} {
		got, err := Missing(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			t.Errorf("%s: %s", dir, m)
		}
	}
}
