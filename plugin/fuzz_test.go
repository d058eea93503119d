package plugin

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"

	"github.com/pkuinfo/harness/lang/diag"
)

// FuzzLoad loads a PLUGIN.md and a tool file (also offered as the shared file). Invariants: no
// panic; every diagnostic names a file of the plugin and a real line and column in it; a plugin
// without errors satisfies the manifest rules. Seeds: the quickstart, every golden case, and
// testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	add := func(manifest, tool []byte) { f.Add(manifest, tool) }
	qs := "testdata/quickstart/my-classrooms/"
	add(mustRead(f, qs+"PLUGIN.md"), mustRead(f, qs+"tools/overview.yaml"))
	cases, _ := filepath.Glob("testdata/validate/*.txtar")
	for _, c := range cases {
		ar, err := txtar.ParseFile(c)
		if err != nil {
			f.Fatal(err)
		}
		var manifest, tool []byte
		for _, file := range ar.Files {
			switch {
			case file.Name == ManifestFile:
				manifest = file.Data
			case tool == nil && strings.HasSuffix(file.Name, ".yaml"):
				tool = file.Data
			}
		}
		add(manifest, tool)
	}
	f.Fuzz(func(t *testing.T, manifest, tool []byte) {
		files := map[string][]byte{ManifestFile: manifest}
		// Every tool, shared and UI path a seed names resolves to the fuzzed tool text, so the
		// fuzzer reaches the tool decoder whatever the frontmatter says.
		for _, name := range []string{"tools/a.yaml", "tools/overview.yaml", "tools/free.yaml", "tools/names.yaml", "shared.yaml", "widgets/overview.json"} {
			files[name] = tool
		}
		p, ds, err := LoadFiles(context.Background(), files)
		if err != nil {
			if p != nil {
				t.Fatalf("error %v with a plugin", err)
			}
			return
		}
		for _, d := range ds {
			text, ok := p.Files[d.File]
			if !ok {
				t.Fatalf("diagnostic names a file that was not loaded: %s", d)
			}
			lines := strings.Count(string(text), "\n") + 1
			if d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1 || d.Msg == "" {
				t.Fatalf("diagnostic outside its file (%d lines): %s", lines, d)
			}
			if d.Pos.Line <= lines && utf8.Valid(text) {
				if line := newSource(d.File, text).lineText(d.Pos.Line); d.Pos.Col > utf8.RuneCountInString(line)+1 {
					t.Fatalf("column past the end of line %q: %s", line, d)
				}
			}
		}
		if !diag.HasErrors(ds) {
			m := p.Manifest
			if !idRe.MatchString(m.ID) || m.Spec != 1 || !semverRe.MatchString(m.Version) {
				t.Fatalf("valid plugin with a bad manifest: %+v", m)
			}
			for _, tool := range p.Tools {
				if !toolNameRe.MatchString(tool.Name) || tool.Effect < EffectRead || tool.Effect > EffectPublic || utf8.RuneCountInString(tool.Title) > MaxTitle {
					t.Fatalf("valid plugin with a bad tool: %+v", tool)
				}
			}
		}
	})
}

func mustRead(f *testing.F, name string) []byte {
	b, err := DirFetcher(".").Fetch(context.Background(), name, MaxTotalBytes)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzScalarPos encodes a value in each YAML scalar style and checks that every position inside
// it maps into the file, in order, and for the styles without escapes onto the same character.
func FuzzScalarPos(f *testing.F) {
	for _, s := range []string{"a + b", "it's", "x\ny\n", "  lead", "tab\tx", "教室 ${a}", "a: b", "'q'", "\"d\"", "\\d+", "# not", "line\n\nbreak"} {
		for style := 0; style < 5; style++ {
			f.Add(uint8(style), s)
		}
	}
	styles := []yaml.Style{0, yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle, yaml.LiteralStyle, yaml.FoldedStyle}
	f.Fuzz(func(t *testing.T, style uint8, value string) {
		if !utf8.ValidString(value) || len(value) > 2000 {
			return
		}
		st := styles[int(style)%len(styles)]
		doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "k"},
			{Kind: yaml.ScalarNode, Value: value, Style: st, Tag: "!!str"},
		}}
		out, err := yaml.Marshal(doc)
		if err != nil {
			return
		}
		src := newSource("f.yaml", out)
		d := &diagList{}
		root, ok := parseYAML(src, out, d)
		if !ok || root.Kind != yaml.MappingNode || len(root.Content) != 2 || root.Content[1].Value != value {
			return // the encoder chose something the scanner reads differently
		}
		n := root.Content[1]
		sc := newScalar(src, n)
		prev := -1
		for i, r := range value {
			p := sc.FilePos(posAt(value, i))
			if p.Offset < 0 || p.Offset > len(out) {
				t.Fatalf("offset %d outside the file", p.Offset)
			}
			if p.Offset < prev {
				t.Fatalf("positions go backwards at %d in %q (style %v):\n%s", i, value, n.Style, out)
			}
			prev = p.Offset
			plainish := n.Style&(yaml.DoubleQuotedStyle) == 0
			if plainish && r != ' ' && r != '\t' && r != '\n' && r != '\'' && r != '\r' {
				got, _ := utf8.DecodeRune(out[p.Offset:])
				if got != r {
					t.Fatalf("value[%d] = %q maps to %q (style %v):\n%s", i, r, got, n.Style, out)
				}
			}
		}
	})
}
