package mcpx

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestPlainSchemaRefBomb: a remote server's input schema is a third party's. $ref expands, so a
// few hundred bytes of $defs, each naming the next three times, would make 3^depth nodes in
// the host (and in every model request). PlainSchema stops at MaxSchemaNodes.
func TestPlainSchemaRefBomb(t *testing.T) {
	defs := map[string]any{}
	for i := range 13 {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": map[string]any{"a": next, "b": next, "c": next}}
	}
	defs["d13"] = map[string]any{"type": "string"}
	schema := map[string]any{"type": "object", "$defs": defs, "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d0"}}}
	b, _ := json.Marshal(PlainSchema(schema))
	if len(b) > 64<<10 {
		t.Errorf("the plain schema of a %d-byte $ref bomb is %d bytes", len(jsonOf(schema)), len(b))
	}
}

func jsonOf(v any) []byte { b, _ := json.Marshal(v); return b }
