package replay

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
