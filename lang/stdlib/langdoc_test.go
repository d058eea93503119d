package stdlib

import (
	"os"
	"strings"
	"testing"
)

// TestLanguageDocExamples runs every example line "EXPR // → JSON" in the js blocks of the
// "Expressions" and "Standard library" sections of docs/PLUGIN-LANGUAGE.md (except Dates and
// HTML, which TestDocExamplesDatesHTML runs with its fixed now), so the reference cannot drift
// from the code. An expected value "error: …" must be the error message.
func TestLanguageDocExamples(t *testing.T) {
	data, err := os.ReadFile("../../docs/PLUGIN-LANGUAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	vars := libVars(t)
	n := 0
	section, sub := "", ""
	inJS := false
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			inJS = line == "```js"
			continue
		case !inJS && strings.HasPrefix(line, "## "):
			section, sub = line, ""
			continue
		case !inJS && strings.HasPrefix(line, "### "):
			sub = line
			continue
		}
		if !inJS || strings.TrimSpace(line) == "" {
			continue
		}
		if section != "## Expressions" && section != "## Standard library" || sub == "### Dates" || sub == "### HTML" {
			continue
		}
		src, want, ok := strings.Cut(line, "// → ")
		if !ok {
			t.Errorf("line %d: example without '// → ': %s", i+1, line)
			continue
		}
		src, want = strings.TrimSpace(src), strings.TrimSpace(want)
		n++
		if got := evalLib(t, src, vars, 100_000); got != want {
			t.Errorf("line %d: %s\n got: %s\nwant: %s", i+1, src, got, want)
		}
	}
	if n < 60 {
		t.Errorf("found %d examples, want at least 60", n)
	}
}
