package plugins

import (
	"context"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/replay"
)

// minTests is the number of recorded tests the six documents must have at least, all passing.
const minTests = 40

// TestDocumentsReplay replays every recorded test of every official document (what
// `harness plugin test plugins/*` does) and fails on any failed test, so a change in the
// runtime that breaks a document fails CI here (seed 004 §Official documents: "CI replays
// every document's tests").
func TestDocumentsReplay(t *testing.T) {
	total := 0
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			rep, err := replay.RunDir(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.NoTests) > 0 {
				t.Errorf("no recorded tests: %v", rep.NoTests)
			}
			for _, o := range rep.Outcomes {
				if !o.Passed {
					t.Errorf("FAIL %s\n%s", o.Label(), strings.Join(o.Problems, "\n"))
				}
			}
			total += rep.Passed + rep.Failed
		})
	}
	if total < minTests {
		t.Errorf("%d recorded tests in all, want at least %d", total, minTests)
	}
}
