package host

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// AgentTool is one tool the agent may be offered (for the MCP server and
// the assistant): the model's name "<id>__<tool>" (seed 004 "The
// instructions"), the description written for the model, the input as JSON
// Schema, the effect and the flags.
type AgentTool struct {
	Name         string         `json:"name"` // "<plugin>__<tool>"
	Plugin       string         `json:"plugin"`
	Tool         string         `json:"tool"`
	Title        string         `json:"title"`
	TitleEn      string         `json:"titleEn,omitempty"` // the English title (i18n.en.tools), "" when the plugin has none
	Description  string         `json:"description"`
	Effect       plugin.Effect  `json:"effect"`
	Mode         Mode           `json:"mode"`
	Untrusted    bool           `json:"untrusted,omitempty"`
	OnDemand     bool           `json:"onDemand,omitempty"`
	Remote       bool           `json:"remote,omitempty"` // a remote plugin's tool (WithRemotes)
	InputSchema  map[string]any `json:"inputSchema"`
	Instructions string         `json:"-"` // the plugin's instructions (PLUGIN.md body)
}

// SplitToolName splits "<plugin>__<tool>" (or "<plugin>.<tool>"); ok is
// false when neither separator is there.
func SplitToolName(name string) (pluginID, tool string, ok bool) {
	if p, t, ok := strings.Cut(name, "__"); ok {
		return p, t, true
	}
	return strings.Cut(name, ".")
}

// AgentTools returns the tools of every enabled plugin that the agent may
// call, by plugin id in manifest order: userOnly tools are left out (seed
// 003: "这样工具对模型不可见"), and so are tools whose effect is set to
// deny. onDemand tools are included with OnDemand set; the caller decides
// when to offer them. The enabled remote plugins' tools (WithRemotes) follow,
// untrusted.
func (h *Host) AgentTools(ctx context.Context) ([]AgentTool, error) {
	list, err := h.List(ctx)
	if err != nil {
		return nil, err
	}
	out := []AgentTool{}
	for _, in := range list {
		if !in.Enabled || in.Kind == KindRemote {
			continue
		}
		p, err := h.Plugin(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		modes, err := h.Modes(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		for _, t := range p.Tools {
			if t.UserOnly || modes[t.Effect] == ModeDeny {
				continue
			}
			out = append(out, AgentTool{
				Name: in.ID + "__" + t.Name, Plugin: in.ID, Tool: t.Name, Title: t.Title, TitleEn: ToolTitleEn(p, t.Name),
				Description: t.Description, Effect: t.Effect, Mode: modes[t.Effect],
				Untrusted: t.Untrusted || !in.Official, OnDemand: t.OnDemand, InputSchema: InputSchema(t),
				Instructions: p.Instructions,
			})
		}
	}
	remote, err := h.remoteAgentTools(ctx)
	if err != nil {
		return nil, err
	}
	return append(out, remote...), nil
}

// ToolTitleEn is the English title of p's tool named tool: the document's
// i18n.en.tools.<tool>.title, or a built-in's I18n.En.Tools (which reach the
// manifest the same way); "" when there is none, and the front ends fall
// back to the Chinese title (seed 004 "Optional fields", i18n).
func ToolTitleEn(p *plugin.Plugin, tool string) string {
	if p == nil || p.Manifest == nil || p.Manifest.I18n == nil || p.Manifest.I18n.En == nil {
		return ""
	}
	for _, t := range p.Manifest.I18n.En.Tools {
		if t.Name == tool {
			return t.Title
		}
	}
	return ""
}

// InputSchema returns a tool's input as a JSON Schema object (the form MCP's
// inputSchema takes): type object, one property per input field with its
// type, enum, default, description, bounds (minimum/maximum for numbers,
// minLength/maxLength for strings, minItems/maxItems for arrays), pattern
// and items; required lists the fields that are neither optional nor
// defaulted; additionalProperties is false.
func InputSchema(t *plugin.Tool) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range t.Input {
		props[f.Name] = fieldSchema(f)
		if !f.Optional && !f.HasDefault {
			required = append(required, f.Name)
		}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

func fieldSchema(f *plugin.InputField) map[string]any {
	s := map[string]any{}
	if f.Type != "" {
		s["type"] = f.Type
	}
	if len(f.Enum) > 0 {
		if b, err := expr.ToJSON(f.Enum, ""); err == nil {
			s["enum"] = json.RawMessage(b)
		}
	}
	if f.HasDefault {
		if b, err := expr.ToJSON(f.Default, ""); err == nil {
			s["default"] = json.RawMessage(b)
		}
	}
	if f.Description != "" {
		s["description"] = f.Description
	}
	lo, hi := "minimum", "maximum"
	switch f.Type {
	case "string":
		lo, hi = "minLength", "maxLength"
	case "array":
		lo, hi = "minItems", "maxItems"
	}
	if f.Min != nil {
		s[lo] = *f.Min
	}
	if f.Max != nil {
		s[hi] = *f.Max
	}
	if f.Pattern != "" {
		s["pattern"] = f.Pattern
	}
	if f.Items != nil {
		s["items"] = fieldSchema(f.Items)
	}
	return s
}
