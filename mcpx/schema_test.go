package mcpx

import (
	"encoding/json"
	"testing"
)

func TestPlainSchema(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not an object", `{"type":"string"}`, `{"properties":{},"type":"object"}`},
		{"no properties", `{"type":"object"}`, `{"properties":{},"type":"object"}`},
		{"type array", `{"type":"object","properties":{"a":{"type":["null","integer"],"minimum":1}}}`,
			`{"properties":{"a":{"minimum":1,"type":"integer"}},"type":"object"}`},
		{"ref to defs", `{"type":"object","$defs":{"D":{"type":"string","enum":["x","y"]}},"properties":{"d":{"$ref":"#/$defs/D","description":"a day"}},"required":["d"]}`,
			`{"properties":{"d":{"description":"a day","enum":["x","y"],"type":"string"}},"required":["d"],"type":"object"}`},
		{"optional anyOf", `{"type":"object","properties":{"n":{"anyOf":[{"type":"null"},{"type":"number","maximum":9}],"default":null}}}`,
			`{"properties":{"n":{"default":null,"maximum":9,"type":"number"}},"type":"object"}`},
		{"allOf merged, not dropped", `{"type":"object","properties":{"s":{"allOf":[{"type":"string"},{"pattern":"^a"}],"not":{"const":"b"}}}}`,
			`{"properties":{"s":{"pattern":"^a","type":"string"}},"type":"object"}`},
		{"items and unknown keywords", `{"type":"object","$schema":"x","properties":{"l":{"type":"array","items":{"type":"string","x-foo":1},"maxItems":3}},"additionalProperties":false}`,
			`{"additionalProperties":false,"properties":{"l":{"items":{"type":"string"},"maxItems":3,"type":"array"}},"type":"object"}`},
		{"unknown ref", `{"type":"object","properties":{"r":{"$ref":"http://example.com/s"}}}`, `{"properties":{"r":{}},"type":"object"}`},
		{"self reference stops", `{"type":"object","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}},"properties":{"n":{"$ref":"#/$defs/N"}}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in any
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			out := PlainSchema(in)
			b, _ := json.Marshal(out)
			if tc.want != "" && string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
			if p := schemaProblems(out, ""); len(p) > 0 {
				t.Errorf("not plain: %v", p)
			}
		})
	}
}

// FuzzPlainSchema: whatever JSON comes in, the result is an object schema
// in the plain subset.
func FuzzPlainSchema(f *testing.F) {
	for _, s := range []string{`{}`, `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"anyOf":[{"type":["string","null"]}]}}}`, `[1]`, `null`, `{"type":"object","properties":{"x":{"oneOf":[]}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var in any
		if json.Unmarshal([]byte(s), &in) != nil {
			return
		}
		out := PlainSchema(in)
		if out["type"] != "object" {
			t.Fatalf("type %v", out["type"])
		}
		if p := schemaProblems(out, ""); len(p) > 0 {
			t.Fatalf("%s: not plain: %v", s, p)
		}
	})
}
