package genui

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SchemaID is the $id of the generated JSON Schema.
const SchemaID = "urn:pku-harness:genui:1"

// Schema returns the JSON Schema (draft 2020-12) of a version-1 document, generated from
// Catalog, indented with two spaces and ending in a newline. Validate checks more than the
// schema can say (bindings against the plugin's tools and data sources, template expressions);
// the schema is for editors.
func Schema() []byte {
	template := map[string]any{"type": "string", "pattern": `\$\{`, "description": "a ${expr} template; exactly one ${expr} keeps its type"}
	defs := map[string]any{
		"template": template,
		"duration": map[string]any{"oneOf": []any{
			map[string]any{"type": "string", "pattern": `^[0-9]{1,6}(s|m|h|d)$`},
			map[string]any{"type": "integer", "minimum": 1},
		}},
		"icon": map[string]any{"enum": Icons},
		"node": map[string]any{"oneOf": refs(componentNames())},
		"action": map[string]any{
			"type":                 "object",
			"required":             []string{"tool"},
			"additionalProperties": false,
			"properties": map[string]any{
				"tool":    map[string]any{"type": "string", "description": "a tool of this plugin"},
				"args":    map[string]any{"type": "object", "description": "the tool's input; values may be templates"},
				"confirm": map[string]any{"type": "string", "description": "a question the user must accept first"},
				"then":    map[string]any{"enum": Thens, "description": "after success; default refresh"},
			},
		},
		"binding": map[string]any{"oneOf": []any{
			map[string]any{
				"type": "object", "required": []string{"source"}, "additionalProperties": false,
				"properties": map[string]any{"source": map[string]any{"type": "string", "description": "a manifest dataSources name"}},
			},
			map[string]any{
				"type": "object", "required": []string{"tool"}, "additionalProperties": false,
				"properties": map[string]any{
					"tool": map[string]any{"type": "string", "description": "a read tool of this plugin"},
					"args": map[string]any{"type": "object"},
					"ttl":  map[string]any{"$ref": "#/$defs/duration"},
				},
			},
		}},
	}
	for _, c := range Catalog {
		props := map[string]any{
			"type": map[string]any{"const": c.Name},
			"when": propSchema(Prop{Kind: KindBool, Doc: commonProps[1].Doc}),
		}
		required := []string{"type"}
		for _, p := range c.Props {
			props[p.Name] = propSchema(p)
			if p.Required {
				required = append(required, p.Name)
			}
		}
		defs[c.Name] = map[string]any{
			"type": "object", "description": c.Summary, "required": required,
			"additionalProperties": false, "properties": props,
		}
	}
	lang := map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	schema := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  SchemaID,
		"title":                "PKU harness generative-UI document, version 1",
		"type":                 "object",
		"required":             []string{"ui", "kind", "title", "root"},
		"additionalProperties": false,
		"properties": map[string]any{
			"ui":          map[string]any{"const": 1},
			"kind":        map[string]any{"enum": []string{"widget", "screen"}},
			"title":       map[string]any{"type": "string", "maxLength": 60},
			"description": map[string]any{"type": "string", "maxLength": 300, "description": "for the assistant: what the widget shows"},
			"i18n": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
				"en": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
					"title": map[string]any{"type": "string", "maxLength": 60}, "description": map[string]any{"type": "string", "maxLength": 300},
				}},
			}},
			"sizes":   map[string]any{"type": "array", "minItems": 1, "uniqueItems": true, "items": map[string]any{"enum": Sizes}},
			"refresh": map[string]any{"$ref": "#/$defs/duration"},
			"strings": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"zh-Hans": lang, "en": lang}},
			"data":    map[string]any{"type": "object", "additionalProperties": map[string]any{"$ref": "#/$defs/binding"}},
			"root":    map[string]any{"$ref": "#/$defs/node"},
		},
		"$defs": defs,
	}
	b, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		panic(err) // only maps, slices and strings: cannot fail
	}
	return append(b, '\n')
}

func refs(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"$ref": "#/$defs/" + n}
	}
	return out
}

func propSchema(p Prop) map[string]any {
	tmpl := map[string]any{"$ref": "#/$defs/template"}
	var s map[string]any
	switch p.Kind {
	case KindText:
		s = map[string]any{"type": []string{"string", "number", "boolean", "null"}}
	case KindNumber:
		s = map[string]any{"anyOf": []any{map[string]any{"type": "number"}, tmpl}}
	case KindBool:
		s = map[string]any{"anyOf": []any{map[string]any{"type": "boolean"}, tmpl}}
	case KindEnum:
		s = map[string]any{"anyOf": []any{map[string]any{"enum": p.Enum}, tmpl}}
	case KindIcon:
		s = map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/icon"}, tmpl}}
	case KindNumbers:
		s = map[string]any{"anyOf": []any{map[string]any{"type": "array", "items": map[string]any{"type": []string{"number", "null"}}}, tmpl}}
	case KindList:
		s = map[string]any{"anyOf": []any{map[string]any{"type": "array"}, tmpl}}
	case KindAny:
		s = map[string]any{}
	case KindName:
		s = map[string]any{"type": "string", "pattern": `^[A-Za-z_][A-Za-z0-9_]*$`}
	case KindAction:
		s = map[string]any{"$ref": "#/$defs/action"}
	case KindNode:
		s = map[string]any{"$ref": "#/$defs/node"}
	case KindNodes:
		s = map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/node"}}
	}
	if p.Doc != "" {
		s["description"] = p.Doc
	}
	return s
}

// propSignature is a prop as the docs and the catalogue text show it: name, a star when
// required, and its kind or enum values.
func propSignature(p Prop) string {
	var b strings.Builder
	b.WriteString(p.Name)
	if p.Required {
		b.WriteString("*")
	}
	switch {
	case len(p.Enum) > 0:
		fmt.Fprintf(&b, " (%s)", strings.Join(p.Enum, "|"))
	default:
		fmt.Fprintf(&b, " (%s)", p.Kind)
	}
	return b.String()
}

// MarkdownTable returns the component table of docs/GENUI.md: one row per component with its
// summary and its props (a star marks a required prop). A test keeps the docs in sync.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| component | what it draws | props (* required) |\n| --- | --- | --- |\n")
	for _, c := range Catalog {
		var props []string
		for _, p := range c.Props {
			props = append(props, "`"+propSignature(p)+"` "+p.Doc)
		}
		cell := strings.Join(props, "<br>")
		if cell == "" {
			cell = "none"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Name, c.Summary, strings.ReplaceAll(cell, "|", "\\|"))
	}
	return b.String()
}

// DescribeCatalog returns the catalogue as plain text for an assistant that writes widgets and
// screens (seed 003 §描述: services.genui.describeCatalog()): the document shape, the scope of
// templates, and one line per component.
func DescribeCatalog() string {
	var b strings.Builder
	b.WriteString(`Generative UI (ui: 1). A document is {"ui":1,"kind":"widget"|"screen","title","description","sizes":["sm","md","lg"],"refresh":"1m","strings":{"zh-Hans":{},"en":{}},"data":{NAME:{"source":DATASOURCE}|{"tool":TOOL,"args":{},"ttl":"10m"}},"root":NODE}.
A node is {"type":COMPONENT, ...props, "when"?: condition}. String props are ${expr} templates over data.NAME, the List item, index, t.KEY (strings in the viewer's language), form.NAME (screens) and host.size, host.locale, host.now; a prop that is exactly one ${expr} keeps the value's type.
Icons: ` + strings.Join(Icons, ", ") + `. Tones: ` + strings.Join(Tones, ", ") + `.
Components (* = required):
`)
	for _, c := range Catalog {
		var props []string
		for _, p := range c.Props {
			props = append(props, propSignature(p))
		}
		fmt.Fprintf(&b, "- %s: %s", c.Name, c.Summary)
		if len(props) > 0 {
			fmt.Fprintf(&b, " Props: %s.", strings.Join(props, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}
