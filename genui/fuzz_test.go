package genui

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzValidate feeds arbitrary bytes to Validate. Beyond "never panics" it asserts the walk's
// invariants: diagnostics are sorted, capped and point inside the file; the result is
// deterministic; and bytes encoding/json rejects always give exactly one "invalid JSON"
// diagnostic.
func FuzzValidate(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	widgets, _ := filepath.Glob("../plugins/*/widgets/*.json")
	for _, p := range append(seeds, widgets...) {
		if strings.HasSuffix(p, ".golden.json") {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		``, `{`, `[]`, `{"ui":1}`, `{"a":1,"a":2}`, "\"\xff\"", `{"ui":1,"kind":"widget","root":{"type":"Text","text":"${"}}`,
		`{"root":{"type":"List","items":"${data.x}","template":{"type":"Text","text":"${item.\u4e2d}"}}}`,
		`{"root":{"type":"Text","text":"\ud83d\ude00${data.q}\u00e9"}}`,
		strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
		`{"ui":1,"kind":"widget","title":"T","data":{"a":{"fn":"stats","args":{"n":"${host.now}"},"ttl":"1m"},"b":{"fn":"../x"}},"root":{"type":"Text","text":"${data.a.count}"}}`,
	} {
		f.Add([]byte(s))
	}
	ctx := testCtx
	ctx.Functions = []string{"stats"} // so { fn } bindings take the accepting path too
	f.Fuzz(func(t *testing.T, src []byte) {
		ds := Validate("f.json", src, ctx)
		if len(ds) > MaxDiagnostics {
			t.Fatalf("%d diagnostics, cap is %d", len(ds), MaxDiagnostics)
		}
		lines := bytes.Count(src, []byte("\n")) + 1
		for i, d := range ds {
			if d.Pos.Offset < 0 || d.Pos.Offset > len(src) || d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1 {
				t.Fatalf("diagnostic %d out of the file (%d bytes, %d lines): %+v", i, len(src), lines, d)
			}
			if i > 0 && ds[i-1].Pos.Offset > d.Pos.Offset {
				t.Fatalf("diagnostics not sorted: %v before %v", ds[i-1], d)
			}
			if d.File != "f.json" || d.Msg == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		if again := Validate("f.json", src, ctx); !reflect.DeepEqual(ds, again) {
			t.Fatalf("not deterministic:\n%v\n%v", ds, again)
		}
		if len(src) <= MaxDocumentBytes && !json.Valid(src) {
			if len(ds) != 1 || !strings.HasPrefix(ds[0].Msg, "invalid JSON") {
				t.Fatalf("json.Valid rejects the input but Validate said %v", ds)
			}
		}
	})
}
