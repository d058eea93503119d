package mcpx

import (
	"encoding/json"
	"maps"
	"slices"
)

// schemaKeywords are the JSON Schema keywords PlainSchema keeps: the plain
// subset every major model provider accepts.
var schemaKeywords = map[string]bool{
	"type": true, "description": true, "title": true, "enum": true, "default": true,
	"properties": true, "required": true, "items": true, "additionalProperties": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"pattern": true, "format": true,
}

// PlainSchema returns a copy of a JSON Schema (decoded JSON: maps, slices,
// strings, float64, json.RawMessage) in the plain subset every MCP client accepts:
// no $ref/$defs, no anyOf/oneOf/allOf/not, no type arrays. $ref is resolved
// against the root's $defs/definitions (at most 16 levels; a deeper or
// unknown reference becomes {}); a type array keeps its first type other
// than "null"; anyOf/oneOf keep the first alternative that is not
// {"type":"null"} (the common Optional encoding), merged under the outer
// keywords; allOf merges its parts. Unknown keywords are dropped. The
// result of a non-object root is {"type":"object","properties":{}}, since
// MCP requires an object input schema.
func PlainSchema(schema any) map[string]any {
	var root map[string]any
	if b, err := json.Marshal(schema); err == nil {
		_ = json.Unmarshal(b, &root) // not an object: root stays nil
	}
	budget := MaxSchemaNodes
	out, _ := plain(root, root, 0, &budget).(map[string]any)
	if out == nil || out["type"] != "object" {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	return out
}

// normalize turns json.RawMessage and typed maps into plain decoded JSON.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any, []any, string, float64, bool, nil:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// MaxSchemaNodes is the most schema objects PlainSchema makes: $ref expands, so a few hundred
// bytes of $defs naming each other could otherwise make millions. Past it, a schema is {}.
const MaxSchemaNodes = 1000

func plain(v any, root map[string]any, depth int, budget *int) any {
	s, ok := normalize(v).(map[string]any)
	if !ok {
		return map[string]any{}
	}
	if depth > 16 || *budget <= 0 {
		return map[string]any{}
	}
	*budget--
	if ref, ok := s["$ref"].(string); ok {
		target := resolveRef(root, ref)
		merged := maps.Clone(target)
		for k, x := range s {
			if k != "$ref" {
				merged[k] = x
			}
		}
		return plain(merged, root, depth+1, budget)
	}
	out := map[string]any{}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := s[key].([]any)
		if len(list) == 0 {
			continue
		}
		parts := list
		if key != "allOf" {
			parts = []any{firstNonNull(list)}
		}
		for _, p := range parts {
			if sub, ok := plain(p, root, depth+1, budget).(map[string]any); ok {
				maps.Copy(out, sub)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		x := s[k]
		if !schemaKeywords[k] {
			continue
		}
		switch k {
		case "type":
			if t := plainType(x); t != "" {
				out["type"] = t
			}
		case "properties":
			props := map[string]any{}
			if m, ok := x.(map[string]any); ok {
				for _, name := range slices.Sorted(maps.Keys(m)) { // in order: the budget cuts the same ones each time
					props[name] = plain(m[name], root, depth+1, budget)
				}
			}
			out["properties"] = props
		case "items":
			out["items"] = plain(x, root, depth+1, budget)
		case "additionalProperties":
			if b, ok := x.(bool); ok {
				out[k] = b
			} else {
				out[k] = plain(x, root, depth+1, budget)
			}
		case "required":
			if list, ok := x.([]any); ok {
				req := []any{}
				for _, r := range list {
					if name, ok := r.(string); ok {
						req = append(req, name)
					}
				}
				out[k] = req
			}
		default:
			out[k] = x
		}
	}
	return out
}

// plainType reads "type": a string, or the first non-null entry of a list.
func plainType(x any) string {
	switch t := x.(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

func firstNonNull(list []any) any {
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && m["type"] == "null" && len(m) == 1 {
			continue
		}
		return x
	}
	return list[0]
}

// resolveRef finds "#/$defs/X" or "#/definitions/X" in root; anything else
// is {}.
func resolveRef(root map[string]any, ref string) map[string]any {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if len(ref) > len(prefix) && ref[:len(prefix)] == prefix {
			defs, _ := root[prefix[2:len(prefix)-1]].(map[string]any)
			if d, ok := defs[ref[len(prefix):]].(map[string]any); ok {
				return d
			}
		}
	}
	return map[string]any{}
}

// schemaProblems lists where a schema leaves the plain subset; tests use it
// on every generated schema. Paths are JSON Pointer-like ("/properties/x").
func schemaProblems(v any, path string) []string {
	var out []string
	switch x := normalize(v).(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			switch k {
			case "$ref", "$defs", "definitions", "anyOf", "oneOf", "allOf", "not":
				out = append(out, path+"/"+k+": not in the plain subset")
				continue
			case "type":
				if _, ok := x[k].(string); !ok {
					out = append(out, path+"/type: not a single type")
				}
			}
			if k == "properties" {
				props, _ := x[k].(map[string]any)
				for _, name := range slices.Sorted(maps.Keys(props)) {
					out = append(out, schemaProblems(props[name], path+"/properties/"+name)...)
				}
			}
			if k == "items" {
				out = append(out, schemaProblems(x[k], path+"/items")...)
			}
		}
	}
	return out
}
