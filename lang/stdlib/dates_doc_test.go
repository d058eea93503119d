package stdlib

import (
	"os"
	"strings"
	"testing"
)

// docSections returns the text of the "### Dates" and "### HTML" sections of the language
// reference.
func docSections(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../docs/PLUGIN-LANGUAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "\n### Dates\n") || !strings.Contains(string(src), "\n### HTML\n") {
		t.Fatal("docs/PLUGIN-LANGUAGE.md has no \"### Dates\" or \"### HTML\" section")
	}
	var out strings.Builder
	in, fence := false, false
	for line := range strings.SplitSeq(string(src), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			in = line == "### Dates" || line == "### HTML"
		}
		if in {
			out.WriteString(line + "\n")
		}
	}
	return out.String()
}

// TestDocExamplesDatesHTML evaluates every example line "EXPR // → JSON" in the js blocks of the
// Dates and HTML sections, with the documented now (2024-03-05 14:30:15.250 Beijing), so the
// documentation cannot drift from the code.
func TestDocExamplesDatesHTML(t *testing.T) {
	text := docSections(t)
	if !strings.Contains(text, "1709620215250") {
		t.Fatal("the Dates section no longer states now = 1709620215250")
	}
	n := 0
	inJS := false
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case line == "```js":
			inJS = true
			continue
		case strings.HasPrefix(line, "```"):
			inJS = false
			continue
		}
		if !inJS || strings.TrimSpace(line) == "" {
			continue
		}
		src, want, ok := strings.Cut(line, "// → ")
		if !ok {
			t.Errorf("example without '// → ': %s", line)
			continue
		}
		src, want = strings.TrimSpace(src), strings.TrimSpace(want)
		n++
		if got := evalDateCase(t, src, nil); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", src, got, want)
		}
	}
	if n < 10 {
		t.Errorf("found %d examples, want at least 10", n)
	}
}
