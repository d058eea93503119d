package plugin

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// docSection returns the text of the "## title" section of docs/PLUGIN-LANGUAGE.md.
func docSection(t *testing.T, title string) string {
	t.Helper()
	data, err := os.ReadFile("../docs/PLUGIN-LANGUAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "\n## "+title+"\n")
	if start < 0 {
		t.Fatalf("docs/PLUGIN-LANGUAGE.md has no section %q", title)
	}
	rest := doc[start+1:]
	if end := strings.Index(rest[3:], "\n## "); end >= 0 {
		rest = rest[:end+4]
	}
	return rest
}

var docFileRe = regexp.MustCompile("(?m)^`rooms/([^`]+)`[^\n]*:\n\n```[a-z]*\n((?s:.*?))```\n")

// docFiles returns the files the sections show as "`rooms/PATH`:" followed by a code block.
func docFiles(t *testing.T, sections ...string) map[string][]byte {
	files := map[string][]byte{}
	for _, s := range sections {
		for _, m := range docFileRe.FindAllStringSubmatch(docSection(t, s), -1) {
			files[m[1]] = []byte(m[2])
		}
	}
	return files
}

// TestDocExamples runs the examples of the "Manifest", "Tools and input" and "Validation"
// sections: the example plugin validates without a diagnostic, and the broken tool gives exactly
// the diagnostics the section shows.
func TestDocExamples(t *testing.T) {
	files := docFiles(t, "Manifest", "Tools and input", "Validation")
	busy := files["tools/busy.yaml"]
	delete(files, "tools/busy.yaml")
	if len(files) != 2 || busy == nil {
		t.Fatalf("found the example files %v", files)
	}
	_, ds, err := LoadFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		t.Errorf("the documented example plugin has a diagnostic: %s", d)
	}

	manifest := string(files[ManifestFile])
	manifest = strings.Replace(manifest, "  free: tools/free.yaml\n", "  free: tools/free.yaml\n  busy: tools/busy.yaml\n", 1)
	manifest = strings.Replace(manifest, "tools: { free: {", "tools: { busy: { title: Busy }, free: {", 1)
	files[ManifestFile] = []byte(manifest)
	files["tools/busy.yaml"] = busy
	_, ds, err = LoadFiles(context.Background(), files)
	got := formatDiagnostics(ds, err)
	m := regexp.MustCompile("(?s)gives, when added[^\n]*\n\n```\n(.*?)```").FindStringSubmatch(docSection(t, "Validation"))
	if m == nil {
		t.Fatal("the Validation section has no \"gives\" block")
	}
	if got != m[1] {
		t.Errorf("the Validation example gives\n%s\nbut the section shows\n%s", got, m[1])
	}
}

// TestDocAbilityTable keeps the "Host abilities" table of the docs equal to AbilityTable.
func TestDocAbilityTable(t *testing.T) {
	if want := AbilityTable(); !strings.Contains(docSection(t, "Manifest"), want) {
		t.Errorf("docs/PLUGIN-LANGUAGE.md \"Host abilities\" should hold exactly:\n%s", want)
	}
}
