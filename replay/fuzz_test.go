package replay

import (
	"errors"
	"testing"
	"testing/fstest"
)

// FuzzDecode feeds arbitrary bytes to the test-file decoder. Invariants: no panic; a failure is
// an ErrorList whose every entry names the file and a line ≥ 1 (or none, for size); a success
// yields at least one case, each with a tool and exactly one of expect / expectError.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"tool: a\nexpect: 1\n",
		"name: n\ntool: a\ninput: { x: 1 }\nnow: 2030-01-01\nexpectError: '^x'\n---\ntool: b\nexpect: [1, {a: b}]\n",
		"tool: a\nkv: { k: { value: 1, expires: 0 }, j: 2 }\nresponses:\n  - { match: x, status: 201, headers: { a: b }, body: { a: [1] } }\n  - { match: y, file: f.json }\nexpect: null\n",
		"tool: a\nabilities:\n  otp.code: { calls: [ { args: { a: 1 }, result: 2 }, { error: e } ] }\nexpect: 1\nexpectRequests:\n  - { match: x, method: get, query: { a: 1 }, json: [1], form: { b: c }, headers: { h: v } }\n",
		"tool: &a x\nexpect: *a\n",
		"- [",
	} {
		f.Add([]byte(s))
	}
	fsys := fstest.MapFS{"tests/f.json": {Data: []byte(`{"a":1}`)}}
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := Decode(fsys, "tests/t.yaml", "t.yaml", data)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			for _, e := range list {
				if e.File != "t.yaml" || (e.Line < 1 && len(data) <= maxTestFileSize) {
					t.Fatalf("error without a position: %q", e.Error())
				}
			}
			return
		}
		if len(cases) == 0 {
			t.Fatal("no cases and no error")
		}
		for _, c := range cases {
			if c.Tool == "" && c.ToolPos.Line == 0 {
				t.Fatalf("case %d without a tool", c.Index)
			}
			if c.HasExpect == (c.ExpectError != nil) {
				t.Fatalf("case %d: HasExpect %v, ExpectError %v", c.Index, c.HasExpect, c.ExpectError)
			}
			if c.Input == nil {
				t.Fatalf("case %d: nil input", c.Index)
			}
		}
	})
}
