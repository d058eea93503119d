package genui

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and the generated table of docs/GENUI.md")

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./genui -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date; run go test ./genui -update and review the diff", path)
	}
}

func TestSchemaGolden(t *testing.T) {
	golden(t, "testdata/schema.golden.json", Schema())
}

func TestDescribeCatalogGolden(t *testing.T) {
	golden(t, "testdata/catalog.golden.txt", []byte(DescribeCatalog()))
}

const (
	docsPath   = "../docs/GENUI.md"
	beginTable = "<!-- BEGIN GENERATED: components (genui.MarkdownTable) -->\n"
	endTable   = "<!-- END GENERATED -->"
)

// TestDocsTable keeps the component table of docs/GENUI.md equal to MarkdownTable().
func TestDocsTable(t *testing.T) {
	src, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	i := strings.Index(doc, beginTable)
	j := strings.Index(doc, endTable)
	if i < 0 || j < i {
		t.Fatalf("%s: markers %q … %q not found", docsPath, strings.TrimSpace(beginTable), endTable)
	}
	current := doc[i+len(beginTable) : j]
	want := MarkdownTable()
	if current == want {
		return
	}
	if *update {
		doc = doc[:i+len(beginTable)] + want + doc[j:]
		if err := os.WriteFile(docsPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the component table is out of date; run go test ./genui -run TestDocsTable -update", docsPath)
}

// TestCatalogComplete pins the components the host must offer (docs/GENUI.md "Components") and basic catalogue
// hygiene: unique names, unique props, enums only on enum props.
func TestCatalogComplete(t *testing.T) {
	want := []string{"Text", "Markdown", "Stat", "Ring", "Sparkline", "Icon", "Chip", "Row", "Column",
		"Grid", "List", "EmptyState", "Divider", "Button", "Field", "QRCode"}
	for _, n := range want {
		if Lookup(n) == nil {
			t.Errorf("component %s missing", n)
		}
	}
	seen := map[string]bool{}
	for _, c := range Catalog {
		if seen[c.Name] {
			t.Errorf("component %s defined twice", c.Name)
		}
		seen[c.Name] = true
		props := map[string]bool{"type": true, "when": true}
		for _, p := range c.Props {
			if props[p.Name] {
				t.Errorf("%s.%s defined twice or shadows a common prop", c.Name, p.Name)
			}
			props[p.Name] = true
			if (p.Kind == KindEnum) != (len(p.Enum) > 0) {
				t.Errorf("%s.%s: kind %s with %d enum values", c.Name, p.Name, p.Kind, len(p.Enum))
			}
		}
	}
	list := Lookup("List")
	for _, p := range []string{"items", "item", "template", "empty"} {
		if list.Prop(p) == nil {
			t.Errorf("List.%s missing", p)
		}
	}
}

// TestDocsExamples runs docs/GENUI.md: its example document validates cleanly, and its example
// diagnostic is what Validate says about the classrooms widget with one binding misspelt.
func TestDocsExamples(t *testing.T) {
	src, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	start := strings.Index(doc, "```json\n")
	end := strings.Index(doc[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("no ```json example in docs/GENUI.md")
	}
	example := doc[start+8 : start+8+end]
	ctx := Context{Kind: "widget", DataSources: []string{"overview"}}
	if ds := Validate("example.json", []byte(example), ctx); len(ds) > 0 {
		t.Errorf("the docs' example document: %v", ds)
	}

	widget, err := os.ReadFile("../plugins/classrooms/widgets/overview.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(widget), "data.overview.total", "data.overveiw.total", 1)
	ds := Validate("widgets/overview.json", []byte(bad), ctx)
	if len(ds) != 1 {
		t.Fatalf("want one diagnostic, got %v", ds)
	}
	if want := "```\n" + ds[0].String() + "\n```"; !strings.Contains(doc, want) {
		t.Errorf("docs/GENUI.md does not show the diagnostic Validate gives:\n%s", want)
	}
}
