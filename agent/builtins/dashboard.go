package builtins

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

// MaxWidgets is how many widgets the dashboard holds.
const MaxWidgets = 40

// Dashboard is the dashboard built-in: the cards on the dashboard tab, a
// widget of any plugin or a genui document bound to a tool, each with a
// size and a config. The web app draws this state.
var Dashboard = &builtin.Plugin{
	ID: "dashboard", Name: "看板", Description: "首页看板上的小组件:添加、调整和移除。", Version: "1.0.0", Icon: "chart",
	Instructions: "Use dashboard__list to see the dashboard, dashboard__upsertWidget to add or change a card (a plugin's widget as \"plugin.widget\", e.g. timetable.today; or a genui document bound to a read tool), dashboard__removeWidget to take one off.",
	I18n: builtin.I18n{En: builtin.EnText{Name: "Dashboard", Description: "The widgets on the home dashboard: add, change and remove them.",
		Tools: map[string]builtin.ToolText{"upsertWidget": {Title: "Add or change a widget"}, "removeWidget": {Title: "Remove a widget"}, "list": {Title: "Dashboard widgets"}}}},
	Tools: []*builtin.Tool{
		{Name: "upsertWidget", Title: "添加或修改小组件", Effect: plugin.EffectWrite, ReachingFields: []string{"document", "tool", "args", "config"}, Run: builtin.Func(upsertWidget),
			Description: "Use when the user wants a card on the dashboard. Give widget as \"plugin.widget\" (a widget an installed plugin declares, e.g. timetable.today), or document (a genui widget document as JSON text, see the catalogue in plugins__reference) with tool (the read tool whose result it shows, \"plugin.tool\") and args. size is sm, md or lg and must be one the widget declares (its document's sizes; omit it for the widget's default: md when declared, else its first); config is the widget's config object. Give id to change an existing card. Returns the card { id, widget | tool, size, config }."},
		{Name: "removeWidget", Title: "移除小组件", Effect: plugin.EffectWrite, Run: builtin.Func(removeWidget),
			Description: "Use when the user wants a card off the dashboard; id from dashboard__list. Returns { removed }."},
		{Name: "list", Title: "看板上的小组件", Effect: plugin.EffectRead, Run: builtin.Func(listWidgets),
			Description: "Use to see the dashboard. Returns { widgets: [{ id, widget | tool, size, config }] } in order."},
	},
}

// Card is one widget on the dashboard.
type Card struct {
	ID       string          `json:"id"`
	Widget   string          `json:"widget,omitempty"`   // "plugin.widget"
	Document json.RawMessage `json:"document,omitempty"` // a genui widget document
	Tool     string          `json:"tool,omitempty"`     // "plugin.tool" the document shows
	Args     map[string]any  `json:"args,omitempty"`
	Size     string          `json:"size"`
	Config   map[string]any  `json:"config,omitempty"`
}

// UpsertInput is dashboard.upsertWidget's input.
type UpsertInput struct {
	ID       string         `json:"id,omitempty" jsonschema:"the card to change; omit to add one" harness:"max=40,trim"`
	Widget   string         `json:"widget,omitempty" jsonschema:"a plugin's widget, plugin.widget, e.g. timetable.today" harness:"max=100,trim"`
	Document string         `json:"document,omitempty" jsonschema:"a genui widget document as JSON text, instead of widget" harness:"max=65536"`
	Tool     string         `json:"tool,omitempty" jsonschema:"with document: the read tool it shows, plugin.tool" harness:"max=100,trim"`
	Args     map[string]any `json:"args,omitempty" jsonschema:"with document: the tool's input"`
	Size     string         `json:"size,omitempty" jsonschema:"sm (half width), md (full row) or lg, one the widget declares; omit for its default (md when declared, else its first size)" harness:"enum=sm|md|lg"`
	Config   map[string]any `json:"config,omitempty" jsonschema:"the widget's config"`
}

// RemoveInput is dashboard.removeWidget's input.
type RemoveInput struct {
	ID string `json:"id" jsonschema:"the card, from dashboard__list" harness:"min=1,max=40,trim"`
}

// Board is the dashboard's state.
type Board struct {
	Widgets []Card `json:"widgets"`
}

const boardKey = "board"

func loadBoard(c *builtin.Context) (Board, error) {
	var b Board
	if _, err := c.KV.Get(boardKey, &b); err != nil {
		return b, err
	}
	if b.Widgets == nil {
		b.Widgets = []Card{}
	}
	return b, nil
}

// splitID reads "plugin.name" (or "plugin__name").
func splitID(s, what string) (string, string, error) {
	p, n, ok := host.SplitToolName(s)
	if !ok || p == "" || n == "" {
		return "", "", builtin.Errorf("%s %q: write it as plugin.name, e.g. timetable.today", what, s)
	}
	return p, n, nil
}

func upsertWidget(c *builtin.Context, in UpsertInput) (Card, error) {
	card := Card{ID: in.ID, Size: in.Size, Config: in.Config}
	var sizes []string // the sizes the widget declares
	switch {
	case in.Widget != "" && in.Document != "":
		return Card{}, builtin.Errorf("give widget or document, not both")
	case in.Widget != "":
		pid, name, err := splitID(in.Widget, "widget")
		if err != nil {
			return Card{}, err
		}
		p, err := c.Host.Plugin(c, pid)
		if err != nil {
			return Card{}, builtin.Errorf("widget %s: %v", in.Widget, strings.TrimPrefix(err.Error(), "host: "))
		}
		var names []string
		for _, w := range p.Manifest.Widgets {
			names = append(names, w.Name)
		}
		if !slices.Contains(names, name) {
			return Card{}, builtin.Errorf("plugin %s has no widget %q (it has: %s)", pid, name, strings.Join(names, ", "))
		}
		card.Widget = pid + "." + name
		for _, w := range p.Manifest.Widgets {
			if w.Name == name {
				sizes = genui.DeclaredSizes(p.Files[w.File])
			}
		}
	case in.Document != "":
		if in.Tool == "" {
			return Card{}, builtin.Errorf("a document needs tool: the read tool whose result it shows")
		}
		pid, tool, err := splitID(in.Tool, "tool")
		if err != nil {
			return Card{}, err
		}
		p, err := c.Host.Plugin(c, pid)
		if err != nil {
			return Card{}, builtin.Errorf("tool %s: %v", in.Tool, strings.TrimPrefix(err.Error(), "host: "))
		}
		t := p.Tool(tool)
		if t == nil || t.Effect != plugin.EffectRead || t.UserOnly {
			return Card{}, builtin.Errorf("tool %s: a widget shows a read tool of an installed plugin", in.Tool)
		}
		if diags := genui.Validate("document", []byte(in.Document), genui.Context{Kind: "widget", DataSources: []string{"tool"}}); hasErrors(diags) {
			return Card{}, builtin.Errorf("the document has errors:\n%s", diagText(diags))
		}
		card.Document, card.Tool, card.Args = json.RawMessage(in.Document), pid+"."+tool, in.Args
		sizes = genui.DeclaredSizes(card.Document)
	default:
		return Card{}, builtin.Errorf("give widget (plugin.widget) or document with tool")
	}
	// A card takes only a size its widget declares (docs/GENUI.md "sizes").
	switch {
	case card.Size == "":
		card.Size = genui.DefaultSize(sizes)
	case !slices.Contains(sizes, card.Size):
		what := in.Widget
		if what == "" {
			what = "this document"
		}
		return Card{}, builtin.Errorf("widget %s does not come in size %s; it declares %s", what, card.Size, strings.Join(sizes, ", "))
	}
	b, err := loadBoard(c)
	if err != nil {
		return Card{}, err
	}
	if card.ID == "" {
		card.ID = fmt.Sprintf("w%d", c.Now.UnixMilli())
		for slices.ContainsFunc(b.Widgets, func(x Card) bool { return x.ID == card.ID }) {
			card.ID += "x"
		}
		if len(b.Widgets) >= MaxWidgets {
			return Card{}, builtin.Errorf("the dashboard has %d widgets, the limit is %d; remove one first", len(b.Widgets), MaxWidgets)
		}
		b.Widgets = append(b.Widgets, card)
	} else {
		i := slices.IndexFunc(b.Widgets, func(x Card) bool { return x.ID == card.ID })
		if i < 0 {
			return Card{}, builtin.Errorf("there is no card %s on the dashboard (dashboard__list shows them)", card.ID)
		}
		b.Widgets[i] = card
	}
	return card, c.KV.Set(boardKey, b)
}

func removeWidget(c *builtin.Context, in RemoveInput) (map[string]any, error) {
	b, err := loadBoard(c)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(b.Widgets, func(x Card) bool { return x.ID == in.ID })
	if i < 0 {
		return nil, builtin.Errorf("there is no card %s on the dashboard", in.ID)
	}
	b.Widgets = slices.Delete(b.Widgets, i, i+1)
	return map[string]any{"removed": in.ID}, c.KV.Set(boardKey, b)
}

func listWidgets(c *builtin.Context, _ builtin.Empty) (Board, error) { return loadBoard(c) }

func hasErrors(ds []diag.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == diag.Error {
			return true
		}
	}
	return false
}

func diagText(ds []diag.Diagnostic) string {
	var lines []string
	for _, d := range ds {
		if d.Severity == diag.Error {
			lines = append(lines, d.String())
		}
	}
	return strings.Join(lines, "\n")
}
