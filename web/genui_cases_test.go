package web

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/genui"
)

// TestRendererDrawsEveryComponent reads the renderer's Draw switch in src/genui.tsx and checks it
// against genui.Catalog: every component the validator accepts has a case (a document that passes
// validation never draws as nothing), no case names a component the catalogue lacks, and a type
// the renderer does not know draws the "unsupported component" notice instead of null.
func TestRendererDrawsEveryComponent(t *testing.T) {
	src, err := os.ReadFile("src/genui.tsx")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	start := strings.Index(s, "export function Draw(")
	if start < 0 {
		t.Fatal("src/genui.tsx has no Draw function")
	}
	body := s[start:]
	end := strings.Index(body, "\n}\n")
	if end < 0 {
		t.Fatal("src/genui.tsx: Draw has no end")
	}
	body = body[:end]
	sw := strings.Index(body, "switch (node.type) {")
	if sw < 0 {
		t.Fatal("src/genui.tsx: Draw does not switch on node.type")
	}
	var cases []string
	for _, m := range regexp.MustCompile(`(?m)^\s*case '([A-Za-z]+)':`).FindAllStringSubmatch(body[sw:], -1) {
		cases = append(cases, m[1])
	}
	for _, c := range genui.Catalog {
		if !slices.Contains(cases, c.Name) {
			t.Errorf("src/genui.tsx: Draw has no case for the catalogue's %s", c.Name)
		}
	}
	for _, c := range cases {
		if genui.Lookup(c) == nil {
			t.Errorf("src/genui.tsx: Draw has a case for %s, which is not in genui.Catalog", c)
		}
	}
	// After the switch: the notice for an unknown type, not a silent null.
	tail := body[strings.LastIndex(body, "\n  }\n"):]
	if strings.Contains(tail, "return null") || !strings.Contains(tail, "genui.unsupported") {
		t.Errorf("src/genui.tsx: a type Draw does not know must draw the genui.unsupported notice; after the switch:%s", tail)
	}
}
