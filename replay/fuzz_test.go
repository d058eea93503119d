package replay

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/pkuinfo/harness/lang/expr"
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
				if e.File != "t.yaml" || (e.Pos.Line < 1 && len(data) <= maxTestFileSize) {
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

// FuzzEncodeDecode checks the printer against the parser: any JSON value written by EncodeTest
// as a test's input and expect reads back (Decode) as an equal value.
func FuzzEncodeDecode(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2.5,null,true],"b":"2030-01-01","c":{"":"~"}}`,
		`["yes","no","0x1F","1e3","-.inf",".nan","- a",": b","#c","'q'","\"d\"","a\nb"," x ","\t"]`,
		`{"key: colon":"é\u0000\u2028","k\n2":[{}],"&a":"*a","!t":"<<"}`,
		`[1e21,1e-7,-0,123456789012345680000,0.1]`,
		`"\ufeffbom"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := expr.FromJSON(data)
		if err != nil {
			return
		}
		enc, err := EncodeTest(RecordedTest{Tool: "t", Input: v, Result: v}, nil)
		if err != nil {
			t.Fatalf("EncodeTest: %v", err)
		}
		cases, err := Decode(nil, "tests/t.yaml", "t.yaml", enc)
		if err != nil {
			t.Fatalf("Decode of\n%s: %v", enc, err)
		}
		if d := Diff(cases[0].Expect, v); d != nil {
			t.Fatalf("expect reads back differently: %q\n%s", d, enc)
		}
		if _, isObj := v.(*expr.Object); isObj {
			if d := Diff(cases[0].Input, v); d != nil {
				t.Fatalf("input reads back differently: %q\n%s", d, enc)
			}
		}
	})
}
