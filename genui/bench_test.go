package genui

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkValidateWidget validates the classrooms dashboard widget (2 KB, 16 templates).
func BenchmarkValidateWidget(b *testing.B) {
	src, err := os.ReadFile("../plugins/classrooms/widgets/overview.json")
	if err != nil {
		b.Fatal(err)
	}
	ctx := Context{Kind: "widget", DataSources: []string{"overview"}}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if ds := Validate("overview.json", src, ctx); len(ds) != 0 {
			b.Fatal(ds)
		}
	}
}

// BenchmarkValidateLarge validates a document near the 256 KB limit: a Column of 1,400 Rows,
// each with two templated Texts.
func BenchmarkValidateLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(head + `"root":{"type":"Column","children":[`)
	for i := 0; i < 1400; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"type":"Row","align":"between","children":[{"type":"Text","text":"${data.overview.rows[0].name ?? 'none'}"},{"type":"Chip","tone":"muted","text":"${len(data.overview.rows)} rooms"}]}`)
	}
	sb.WriteString("]}}")
	src := []byte(sb.String())
	if len(src) > MaxDocumentBytes {
		b.Fatalf("%d bytes, over the limit", len(src))
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if ds := Validate("large.json", src, testCtx); len(ds) != 0 {
			b.Fatal(ds[0])
		}
	}
}
