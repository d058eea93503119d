package diag

import (
	"encoding/json"
	"testing"
)

func TestDiagnosticString(t *testing.T) {
	tests := []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"error with path", Diagnostic{File: "tools/a.yaml", Pos: Pos{Line: 2, Col: 12}, Path: "steps[0] (let x)", Msg: "value: unknown name 'y'"},
			"tools/a.yaml:2:12: steps[0] (let x): value: unknown name 'y'"},
		{"warning", Diagnostic{Severity: Warning, File: "PLUGIN.md", Pos: Pos{Line: 1, Col: 1}, Msg: "m"},
			"PLUGIN.md:1:1: warning: m"},
		{"warning with path", Diagnostic{Severity: Warning, File: "r.json", Pos: Pos{Line: 3, Col: 5, Offset: 40}, Path: "plugins[0].id", Msg: "m"},
			"r.json:3:5: warning: plugins[0].id: m"},
		{"unknown position", Diagnostic{File: "d.json", Msg: "m"}, "d.json:0:0: m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDiagnosticFormat(t *testing.T) {
	src := []byte("steps:\n\t- let: x\n    value: y + 1\r\n")
	tests := []struct {
		name string
		d    Diagnostic
		src  []byte
		want string
	}{
		{"caret", Diagnostic{File: "a.yaml", Pos: Pos{Line: 3, Col: 12}, Msg: "bad"}, src,
			"a.yaml:3:12: bad\n        value: y + 1\n               ^"},
		{"tab kept", Diagnostic{File: "a.yaml", Pos: Pos{Line: 2, Col: 4}, Msg: "bad"}, src,
			"a.yaml:2:4: bad\n    \t- let: x\n    \t  ^"},
		{"wide characters", Diagnostic{File: "a.yaml", Pos: Pos{Line: 1, Col: 15}, Msg: "bad"}, []byte("title: 空闲教室 ${x}\n"),
			"a.yaml:1:15: bad\n    title: 空闲教室 ${x}\n                      ^"},
		{"line out of range", Diagnostic{File: "a.yaml", Pos: Pos{Line: 9, Col: 1}, Msg: "bad"}, src, "a.yaml:9:1: bad"},
		{"empty line", Diagnostic{File: "a.yaml", Pos: Pos{Line: 4, Col: 1}, Msg: "bad"}, src, "a.yaml:4:1: bad"},
		{"no position", Diagnostic{File: "a.yaml", Msg: "bad"}, src, "a.yaml:0:0: bad"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.Format(tc.src); got != tc.want {
				t.Errorf("Format =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestDiagnosticJSON(t *testing.T) {
	ds := []Diagnostic{
		{File: "tools/a.yaml", Pos: Pos{Line: 3, Col: 9, Offset: 30}, Msg: "m"},
		{Severity: Warning, File: "tools/a.yaml", Pos: Pos{Line: 8, Col: 5}, Path: "steps[0] (let r)", Msg: "w"},
	}
	b, err := json.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"file":"tools/a.yaml","line":3,"col":9,"severity":"error","message":"m"},` +
		`{"file":"tools/a.yaml","line":8,"col":5,"severity":"warning","step":"steps[0] (let r)","message":"w"}]`
	if string(b) != want {
		t.Errorf("json =\n%s\nwant\n%s", b, want)
	}
}

func TestHasErrors(t *testing.T) {
	w := Diagnostic{Severity: Warning, Msg: "w"}
	e := Diagnostic{Msg: "e"}
	if HasErrors(nil) || HasErrors([]Diagnostic{w}) || !HasErrors([]Diagnostic{w, e}) {
		t.Error("HasErrors")
	}
}

func TestPos(t *testing.T) {
	p, q := Pos{Line: 1, Col: 9}, Pos{Line: 2, Col: 1}
	if !p.Less(q) || q.Less(p) || p.Less(p) || !(Pos{Line: 1, Col: 2}).Less(p) {
		t.Error("Less")
	}
	if (Pos{}).IsValid() || !p.IsValid() || p.String() != "1:9" {
		t.Error("IsValid or String")
	}
}
