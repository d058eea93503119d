package builtins

import (
	"encoding/json"

	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/plugin"
)

// UI is the ui built-in: a genui document shown inline in the chat (a
// form whose button calls a tool as the user, a small table of results).
var UI = &builtin.Plugin{
	ID: "ui", Name: "界面", Description: "在对话里显示表单、卡片等界面。", Version: "1.0.0", Icon: "sparkles",
	Instructions: "Use ui__render to show a form or a card in the chat: a genui screen document (see plugins__reference). A Button's action runs its tool as the user after they tap it; never assume it ran.",
	I18n: builtin.I18n{En: builtin.EnText{Name: "UI", Description: "Show forms and cards in the chat.",
		Tools: map[string]builtin.ToolText{"render": {Title: "Show in the chat"}}}},
	Tools: []*builtin.Tool{
		{Name: "render", Title: "在对话里显示", Effect: plugin.EffectRead, Run: builtin.Func(render),
			Description: "Use to show the user a form or a card inline: document is a genui document with kind screen (Field, Button with action { tool, args, confirm }, Text, Stat, List …). The app draws it; a Button runs its tool as the user when tapped. Returns { shown: true, document } or the document's errors."},
	},
}

// RenderInput is ui.render's input.
type RenderInput struct {
	Document map[string]any `json:"document" jsonschema:"the genui document (kind screen)"`
}

// Rendered is ui.render's result: the document the chat draws, and Drawn, the
// host's handle of it (host.NoteDrawn) that its buttons send so that the host
// decides them under the turn that drew it.
type Rendered struct {
	Shown    bool            `json:"shown"`
	Document json.RawMessage `json:"document"`
	Drawn    string          `json:"drawn,omitempty"`
}

func render(c *builtin.Context, in RenderInput) (Rendered, error) {
	if in.Document == nil {
		return Rendered{}, builtin.Errorf("document is required")
	}
	src, err := json.Marshal(in.Document)
	if err != nil {
		return Rendered{}, builtin.Errorf("document: %v", err)
	}
	// Tools named in actions run as the user through Host.Call when tapped; here
	// the document is only checked for shape.
	if diags := genui.Validate("document", src, genui.Context{Kind: "screen", Tools: genui.ActionTools(in.Document)}); hasErrors(diags) {
		return Rendered{}, builtin.Errorf("the document has errors:\n%s", diagText(diags))
	}
	r := Rendered{Shown: true, Document: src}
	if c.Actor != host.ActorUser && c.Host != nil {
		r.Drawn = c.Host.NoteDrawn(c.Turn)
	}
	return r, nil
}
