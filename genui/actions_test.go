package genui

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestActionTools(t *testing.T) {
	tests := []struct {
		name, doc string
		want      map[string][]string // tool → sorted argument names
	}{
		{"none", `{"type":"Text","text":"hi"}`, map[string][]string{}},
		{"nested in lists", `{"type":"Stack","children":[{"type":"Button","action":{"tool":"wallet.topup","args":{"amount":5,"note":"x"}}},
			[{"type":"Button","action":{"tool":"focus.stop"}}]]}`, map[string][]string{"wallet.topup": {"amount", "note"}, "focus.stop": nil}},
		{"tool not a string", `{"action":{"tool":3}}`, map[string][]string{}},
		{"args not an object", `{"action":{"tool":"a.b","args":[1]}}`, map[string][]string{"a.b": nil}},
		{"not an object", `[1,"x",null]`, map[string][]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal([]byte(tc.doc), &doc); err != nil {
				t.Fatal(err)
			}
			got := ActionTools(doc)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for name, args := range tc.want {
				tool, ok := got[name]
				in := slices.Sorted(slices.Values(tool.Input))
				if !ok || tool.Effect != "write" || !slices.Equal(in, args) {
					t.Errorf("%s: got %+v, want write with %v", name, tool, args)
				}
			}
		})
	}
}
