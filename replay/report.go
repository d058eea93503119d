package replay

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteText prints the report as `harness plugin test` does (docs/DECISIONS.md §9): one line per
// test, `ok   LABEL` or `FAIL LABEL` followed by its problems indented by four spaces, a
// `?    ID [no tests]` line for each plugin without tests, a `?    NAME [not a folder]` line for
// each file argument skipped, and last the line
// `N passed, N failed`.
func (r Report) WriteText(w io.Writer) error {
	for _, o := range r.Outcomes {
		if o.Passed {
			if _, err := fmt.Fprintf(w, "ok   %s\n", o.Label()); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(w, "FAIL %s\n", o.Label()); err != nil {
			return err
		}
		for _, p := range o.Problems {
			if _, err := fmt.Fprintf(w, "    %s\n", p); err != nil {
				return err
			}
		}
	}
	for _, id := range r.NoTests {
		if _, err := fmt.Fprintf(w, "?    %s [no tests]\n", id); err != nil {
			return err
		}
	}
	for _, name := range r.Skipped {
		if _, err := fmt.Fprintf(w, "?    %s [not a folder]\n", name); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d passed, %d failed\n", r.Passed, r.Failed)
	return err
}

// WriteJSON prints the report as one JSON object, indented by two spaces:
// `{"tests":[{"plugin","file","line","name","tool","ok","problems","label","ms"}…],
// "noTests":[…],"skipped":[…],"passed":N,"failed":N}`. ms is the test's duration in milliseconds.
func (r Report) WriteJSON(w io.Writer) error {
	type outcome struct {
		Outcome
		Label string  `json:"label"`
		Ms    float64 `json:"ms"`
	}
	out := struct {
		Tests   []outcome `json:"tests"`
		NoTests []string  `json:"noTests,omitempty"`
		Skipped []string  `json:"skipped,omitempty"`
		Passed  int       `json:"passed"`
		Failed  int       `json:"failed"`
	}{Tests: []outcome{}, NoTests: r.NoTests, Skipped: r.Skipped, Passed: r.Passed, Failed: r.Failed}
	for _, o := range r.Outcomes {
		out.Tests = append(out.Tests, outcome{Outcome: o, Label: o.Label(), Ms: float64(o.Elapsed.Microseconds()) / 1000})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
