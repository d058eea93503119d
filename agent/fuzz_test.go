package agent

import (
	"encoding/json"
	"testing"
)

// FuzzCompletionToChunk: whatever a provider sends as a JSON reply, the
// rewrite never panics, and what it returns is JSON.
func FuzzCompletionToChunk(f *testing.F) {
	f.Add([]byte(`{"id":"1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi","tool_calls":[{"id":"c","function":{"name":"x","arguments":"{}"}}]}}]}`))
	f.Add([]byte(`{"error":{"message":"x"}}`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[1,2]}}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := completionToChunk(b)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON out of %q: %q", b, out)
		}
	})
}

// FuzzPlainSchema: any JSON Schema becomes an object schema in the plain
// subset: type object, properties present, no $ref, anyOf or format left.
func FuzzPlainSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":["string","null"],"format":"date"},"b":{"$ref":"#/x"}},"required":["a"]}`))
	f.Add([]byte(`{"anyOf":[{"type":"string"}]}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"oneOf":[]}}}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s map[string]any
		if json.Unmarshal(b, &s) != nil {
			return
		}
		out := PlainSchema(s)
		if out["type"] != "object" || out["properties"] == nil {
			t.Fatalf("not an object schema: %v", out)
		}
		var walk func(m map[string]any)
		walk = func(m map[string]any) {
			for k, v := range m {
				if k == "properties" {
					for _, p := range v.(map[string]any) {
						walk(p.(map[string]any))
					}
					continue
				}
				if !plainKeys[k] && k != "items" {
					t.Fatalf("key %q left in %v", k, out)
				}
				if k == "items" {
					walk(v.(map[string]any))
				}
			}
		}
		walk(out)
		if _, err := json.Marshal(out); err != nil {
			t.Fatal(err)
		}
	})
}
