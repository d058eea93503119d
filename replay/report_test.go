package replay

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func sampleReport() Report {
	var r Report
	r.Add(Outcome{Plugin: "classrooms", File: "plugins/classrooms/tests/free.yaml", Line: 1, Name: "today", Tool: "free", Passed: true, Elapsed: 1500 * time.Microsecond})
	r.Add(Outcome{Plugin: "classrooms", File: "plugins/classrooms/tests/free.yml", Line: 9, Tool: "free",
		Problems: []string{"the result differs from expect (plugins/classrooms/tests/free.yml:12:9):", "  $.rooms[2].seats: got 40, want 50"}})
	r.Add(Outcome{Plugin: "broken", Problems: []string{"the plugin does not validate:", "  tools/a.yaml:4:9: return: unknown name 'nope'"}})
	r.NoTests = []string{"shuttle"}
	r.Skipped = []string{"plugins/plugins.go"}
	return r
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	const want = `ok   classrooms/free: today
FAIL classrooms/free
    the result differs from expect (plugins/classrooms/tests/free.yml:12:9):
      $.rooms[2].seats: got 40, want 50
FAIL broken
    the plugin does not validate:
      tools/a.yaml:4:9: return: unknown name 'nope'
?    shuttle [no tests]
?    plugins/plugins.go [not a folder]
1 passed, 2 failed
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	const want = `{
  "tests": [
    {
      "plugin": "classrooms",
      "file": "plugins/classrooms/tests/free.yaml",
      "line": 1,
      "name": "today",
      "tool": "free",
      "ok": true,
      "label": "classrooms/free: today",
      "ms": 1.5
    },
    {
      "plugin": "classrooms",
      "file": "plugins/classrooms/tests/free.yml",
      "line": 9,
      "tool": "free",
      "ok": false,
      "problems": [
        "the result differs from expect (plugins/classrooms/tests/free.yml:12:9):",
        "  $.rooms[2].seats: got 40, want 50"
      ],
      "label": "classrooms/free",
      "ms": 0
    },
    {
      "plugin": "broken",
      "ok": false,
      "problems": [
        "the plugin does not validate:",
        "  tools/a.yaml:4:9: return: unknown name 'nope'"
      ],
      "label": "broken",
      "ms": 0
    }
  ],
  "noTests": [
    "shuttle"
  ],
  "skipped": [
    "plugins/plugins.go"
  ],
  "passed": 1,
  "failed": 2
}
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestRunDirNotAPlugin(t *testing.T) {
	for _, dir := range []string{"testdata/nowhere", t.TempDir()} {
		_, err := RunDir(context.Background(), dir)
		if err == nil || !strings.Contains(err.Error(), "PLUGIN.md") {
			t.Errorf("RunDir(%s): got %v, want an error naming PLUGIN.md", dir, err)
		}
	}
}
