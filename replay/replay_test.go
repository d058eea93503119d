package replay

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pkuinfo/harness/plugin"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/cases/*.txtar")

// TestCases runs each testdata/cases/*.txtar: the archive's files are a plugin folder, and its
// `want` section is the exact text report of `harness plugin test` on it (paths relative to the
// folder). Run with -update to rewrite the want sections.
func TestCases(t *testing.T) {
	files, err := filepath.Glob("testdata/cases/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), name)
			wantIndex := -1
			for i, f := range ar.Files {
				if f.Name == "want" {
					wantIndex = i
					continue
				}
				p := filepath.Join(dir, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if wantIndex < 0 {
				t.Fatal("archive has no want section")
			}
			rep, err := RunDir(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := rep.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(buf.String(), dir+string(filepath.Separator), "")
			if *update {
				ar.Files[wantIndex].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := string(ar.Files[wantIndex].Data); got != want {
				t.Errorf("report differs (run with -update to accept)\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}

// TestQuickstart replays the seed's quickstart plugin (seed 003 "编写第一个插件"), copied
// verbatim with its recorded test: it must validate and its test must pass unchanged.
func TestQuickstart(t *testing.T) {
	rep, err := RunDir(context.Background(), "testdata/my-classrooms")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	const want = "ok   my-classrooms/overview\n1 passed, 0 failed\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// BenchmarkQuickstart measures one whole recorded tool run: load and validate the plugin,
// decode its test, run the tool against the recorded response and compare the result.
func BenchmarkQuickstart(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		rep, err := RunDir(ctx, "testdata/my-classrooms")
		if err != nil || rep.Failed != 0 || rep.Passed != 1 {
			b.Fatalf("RunDir: %v, %+v", err, rep)
		}
	}
}

// TestDocExamples decodes the YAML examples of docs/PLUGIN-LANGUAGE.md "Recorded tests", so the
// documentation cannot drift from the decoder (STYLE §16): the first block is a whole test, the
// others are fragments of one.
func TestDocExamples(t *testing.T) {
	data, err := os.ReadFile("../docs/PLUGIN-LANGUAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "\n## Recorded tests\n")
	if start < 0 {
		t.Fatal("no section ## Recorded tests")
	}
	section := doc[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	blocks := strings.Split(section, "```yaml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("got %d yaml blocks, want at least 2", len(blocks))
	}
	fsys := fstest.MapFS{"tests/fixtures/schedule.html": {Data: []byte("<table></table>")}}
	for i, b := range blocks {
		src, _, _ := strings.Cut(b, "```")
		if i > 0 {
			src = "tool: x\nexpect: 1\n" + src
		}
		cases, err := Decode(fsys, "tests/doc.yaml", "doc.yaml", []byte(src))
		if err != nil {
			t.Errorf("block %d: %v", i+1, err)
			continue
		}
		if i == 0 && (len(cases) != 1 || len(cases[0].Responses) != 3 || len(cases[0].KV) != 2 || len(cases[0].ExpectRequests) != 1) {
			t.Errorf("block 1 decoded to %+v", cases[0])
		}
	}
}

// BenchmarkRunCase measures the run alone (the plugin loaded and the test decoded once): fresh KV,
// fakes, interp.Run against the recorded response, and the comparison.
func BenchmarkRunCase(b *testing.B) {
	ctx := context.Background()
	p, diags, err := plugin.LoadDir("testdata/my-classrooms")
	if err != nil || len(diags) != 0 {
		b.Fatalf("LoadDir: %v %v", err, diags)
	}
	cases, err := DecodeFile(context.Background(), os.DirFS("testdata/my-classrooms"), "tests/overview.yaml", "overview.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if o := RunCase(ctx, p, cases[0]); !o.Passed {
			b.Fatalf("failed: %q", o.Problems)
		}
	}
}
