package plugin

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/pkuinfo/harness/lang/diag"
)

var update = flag.Bool("update", false, "rewrite the golden diagnostics in testdata/validate/*.txtar")

// formatDiagnostics prints diagnostics one per line, as the CLI does without the source lines.
func formatDiagnostics(ds []diag.Diagnostic, err error) string {
	var b strings.Builder
	if err != nil {
		b.WriteString("load error: " + err.Error() + "\n")
	}
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestValidateGolden loads each testdata/validate/*.txtar as a plugin (every file but
// "diagnostics") and compares the diagnostics with the archive's "diagnostics" file. Run with
// -update to rewrite them; review the diff.
func TestValidateGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/validate/*.txtar")
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
			plugin := map[string][]byte{}
			golden := -1
			for i, f := range ar.Files {
				if f.Name == "diagnostics" {
					golden = i
					continue
				}
				plugin[f.Name] = f.Data
			}
			_, ds, err := LoadFiles(context.Background(), plugin)
			got := formatDiagnostics(ds, err)
			if *update {
				if golden < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "diagnostics"})
					golden = len(ar.Files) - 1
				}
				ar.Files[golden].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if golden < 0 {
				t.Fatalf("%s has no diagnostics file; run with -update", file)
			}
			if want := string(ar.Files[golden].Data); got != want {
				t.Errorf("diagnostics differ\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}

// TestValidateBuiltInGo checks a plugin built in Go, without positions: the rules still apply and
// problems are reported at 1:1 of the file they concern.
func TestValidateBuiltInGo(t *testing.T) {
	p := &Plugin{
		Manifest: &Manifest{Spec: 1, ID: "go-built", Name: "Go", Description: "Built in Go.", Version: "1.0",
			Author: "pkuinfo", Tools: []*ToolRef{{Name: "Ping"}, {Name: "pong"}}},
		Tools: []*Tool{{Name: "Ping", File: "tools/ping.yaml", Title: "乒", Description: "Pings.", Effect: EffectRead},
			{Name: "pong", File: "tools/pong.yaml", Title: "乓", Description: "Pongs."}},
		Shared: &Shared{},
	}
	got := formatDiagnostics(Validate(p), nil)
	want := "PLUGIN.md:1:1: warning: i18n.en.description is missing: English users see the Chinese description\n" +
		"PLUGIN.md:1:1: warning: i18n.en.name is missing: English users see the Chinese name\n" +
		"PLUGIN.md:1:1: warning: i18n.en.tools.Ping.title is missing: English users see the Chinese title\n" +
		"PLUGIN.md:1:1: warning: i18n.en.tools.pong.title is missing: English users see the Chinese title\n" +
		"PLUGIN.md:1:1: tool name \"Ping\" must be ASCII lowerCamel: ^[a-z][a-zA-Z0-9]{0,39}$\n" +
		"PLUGIN.md:1:1: version \"1.0\" is not a semantic version such as 1.2.0\n" +
		"tools/pong.yaml:1:1: tool pong needs effect: read, write, money or public\n"
	if got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}
