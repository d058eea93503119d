package interp_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
)

// TestDocExamples runs every tool example of the "Steps and limits"
// section of docs/PLUGIN-LANGUAGE.md that is followed by a JSON block, and
// compares the result with that block, so the document cannot drift from
// the interpreter.
func TestDocExamples(t *testing.T) {
	data, err := os.ReadFile("../docs/PLUGIN-LANGUAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "\n## Steps and limits\n")
	if start < 0 {
		t.Fatal(`no "## Steps and limits" section`)
	}
	sec := doc[start+1:]
	if end := strings.Index(sec, "\n## "); end >= 0 {
		sec = sec[:end]
	}
	re := regexp.MustCompile("(?s)```yaml\n(.*?)```\n\n```json\n(.*?)\n```")
	ms := re.FindAllStringSubmatch(sec, -1)
	if len(ms) == 0 {
		t.Fatal("no runnable examples")
	}
	for i, m := range ms {
		p := loadPlugin(t, map[string]string{"main": m[1]})
		v, err := interp.Run(context.Background(), p, "main", nil, interp.Options{KV: kvstore.NewMemory(), Now: func() time.Time { return fixedNow }})
		if err != nil {
			t.Errorf("example %d: %v", i+1, err)
			continue
		}
		if got := toJSON(t, v); got != m[2] {
			t.Errorf("example %d:\ngot  %s\nwant %s", i+1, got, m[2])
		}
	}
}
