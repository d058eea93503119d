package plugin

import (
	"context"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestNodePosFastPath checks nodePos against the general pos(offset(line, col)) on every node of
// a tree with multi-byte text, flow collections and block scalars.
func TestNodePosFastPath(t *testing.T) {
	text := []byte("a: 工具 x\nb: { c: '一 二', d: [1, 2, 三] }\ne: |\n  多行\n  文本\nf:\n  - g: \"\\u00e9 é\"\n    h: 1.5\n")
	src := newSource("t.yaml", text)
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node)
	count := 0
	walk = func(n *yaml.Node) {
		count++
		if got, want := src.nodePos(n), src.pos(src.offset(n.Line, n.Column)); got != want {
			t.Errorf("node %q at %d:%d: nodePos %+v, want %+v", n.Value, n.Line, n.Column, got, want)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	for _, n := range []*yaml.Node{{Line: 0, Column: 3}, {Line: 2, Column: 0}, {Line: 1, Column: 99}, {Line: 99, Column: 1}, {Line: 9, Column: 1}} {
		if got, want := src.nodePos(n), src.pos(src.offset(n.Line, n.Column)); got != want {
			t.Errorf("%d:%d: nodePos %+v, want %+v", n.Line, n.Column, got, want)
		}
	}
	if count < 20 {
		t.Fatalf("walked %d nodes", count)
	}
}

// TestPlainNumber checks the fast path of yamlValue against Node.Decode.
func TestPlainNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-7", "12", "012", "0.5", "-0.5", "1.", ".5", "1.2.3", "123456789012345",
		"1234567890123456", "99999999999999999", "1e3", "0x1F", "0o17", "1_000", "+1", "1.25", "-12.5000", "00", "0.0"} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("v: "+s), &doc); err != nil {
			t.Fatal(err)
		}
		n := doc.Content[0].Content[1]
		if n.Tag != "!!int" && n.Tag != "!!float" {
			continue
		}
		var want float64
		if err := n.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got, err := yamlValue(n)
		if err != nil || got != want {
			t.Errorf("%s: yamlValue = %v, %v; Decode = %v", s, got, err, want)
		}
	}
}

// TestLoadValidateAllocs bounds the allocations of loading and validating a 100 KB plugin (a
// fifth of the benchmark's; about 52,000 in November 2026, 67,000 before the parse sharing and
// the allocation cuts): a change that brings back per-field garbage or per-tool parses fails here.
func TestLoadValidateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	files := bigPlugin(100 << 10)
	n := testing.AllocsPerRun(2, func() {
		if _, _, err := LoadFiles(context.Background(), files); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations", n)
	if limit := 58000.0; n > limit {
		t.Errorf("loading a 100 KB plugin allocates %.0f times, want at most %.0f", n, limit)
	}
}
