package genui

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
)

// DrawInput is what a draw reads besides the document: the viewer (Size "sm", "md" or "lg",
// Locale "zh-Hans" or "en", Now the time of drawing), Data (binding name → the bound value as an
// expr value, e.g. from expr.FromJSON; a missing binding reads as null) and, on screens, Form
// (Field name → its current value; fields absent here take their document value).
type DrawInput struct {
	Size   string
	Locale string
	Now    time.Time
	Data   map[string]any
	Form   map[string]any
}

// Drawn is a document with every template evaluated: Title in the viewer's language, Refresh the
// document's refresh interval in seconds (0 when none), Root the resolved node tree and Problems
// the templates that failed (each hid its node and nothing else, docs/GENUI.md "Nodes, templates
// and scope").
//
// In Root every prop holds its value (a template prop has been replaced by what it rendered to),
// a node whose `when` is falsy is gone, a List has `children` (one resolved template per item,
// after `limit`) and, when the list is empty, its resolved `empty` instead of `items` and
// `template`, and a Button's action has its args and confirm evaluated. The web app draws Root
// with its components; nothing in it is code.
type Drawn struct {
	Title    string   `json:"title"`
	Refresh  int      `json:"refresh,omitempty"`
	Root     any      `json:"root"`
	Problems []string `json:"problems,omitempty"`
}

// drawEnv evaluates templates: the standard library and the formatters, as the validator checks
// them.
var drawEnv = env

// Draw evaluates a genui document (docs/GENUI.md) for one viewer. The document should have passed
// Validate; Draw still refuses one that is not JSON, has no root, or is not version 1, with an
// error naming why. A template that fails at draw time hides its node and is listed in
// Drawn.Problems; ctx bounds the whole draw.
func Draw(ctx context.Context, doc []byte, in DrawInput) (*Drawn, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("genui: the document is not JSON: %v", err)
	}
	if v, _ := d["ui"].(float64); v != 1 {
		return nil, fmt.Errorf("genui: the document's ui is %v; this host draws version 1", d["ui"])
	}
	root, ok := d["root"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("genui: the document has no root node")
	}
	locale := in.Locale
	if locale != "en" {
		locale = "zh-Hans"
	}
	size := in.Size
	if size == "" {
		size = "md"
	}
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	out := &Drawn{Title: str(d["title"])}
	if locale == "en" {
		if i, ok := d["i18n"].(map[string]any); ok {
			if en, ok := i["en"].(map[string]any); ok && str(en["title"]) != "" {
				out.Title = str(en["title"])
			}
		}
	}
	if r := str(d["refresh"]); r != "" {
		out.Refresh = refreshSeconds(r)
	}
	// t.KEY: the viewer's language, falling back to zh-Hans key by key.
	t := map[string]any{}
	if ss, ok := d["strings"].(map[string]any); ok {
		if zh, ok := ss["zh-Hans"].(map[string]any); ok {
			for k, v := range zh {
				t[k] = v
			}
		}
		if locale == "en" {
			if en, ok := ss["en"].(map[string]any); ok {
				for k, v := range en {
					t[k] = v
				}
			}
		}
	}
	data := expr.NewObject(len(in.Data))
	for k, v := range in.Data {
		data.Set(k, v)
	}
	if bindings, ok := d["data"].(map[string]any); ok {
		for k := range bindings {
			if _, ok := data.Get(k); !ok {
				data.Set(k, nil)
			}
		}
	}
	host := expr.NewObject(3)
	host.Set("size", size)
	host.Set("locale", locale)
	host.Set("now", float64(now.UnixMilli()))
	tv, err := expr.FromGo(t)
	if err != nil {
		return nil, fmt.Errorf("genui: strings: %v", err)
	}
	form := expr.NewObject(len(in.Form))
	collectFields(root, form)
	for k, v := range in.Form {
		form.Set(k, v)
	}
	dr := &drawer{ctx: ctx, out: out}
	vars := scopeVars{vars: map[string]any{"data": data, "t": tv, "host": host, "form": form}}
	out.Root = dr.node(root, "$.root", vars)
	if out.Root == nil {
		out.Root = map[string]any{"type": "Column", "children": []any{}}
	}
	return out, nil
}

// collectFields sets form.NAME to every input's (InputComponents) document value (null when it has none), so a
// Button's args read the initial values before the viewer types.
func collectFields(n any, form *expr.Object) {
	switch x := n.(type) {
	case map[string]any:
		if typ, _ := x["type"].(string); InputComponents[typ] {
			if name := str(x["name"]); name != "" {
				v, _ := expr.FromGo(plainJSON(x["value"]))
				if s, ok := v.(string); ok && strings.Contains(s, "${") {
					v = nil
				}
				form.Set(name, v)
			}
		}
		for _, c := range x {
			collectFields(c, form)
		}
	case []any:
		for _, c := range x {
			collectFields(c, form)
		}
	}
}

// plainJSON turns encoding/json numbers and maps into what expr.FromGo takes.
func plainJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plainJSON(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainJSON(e)
		}
		return out
	}
	return v
}

type scopeVars struct {
	parent *scopeVars
	vars   map[string]any
}

func (s scopeVars) Lookup(name string) (any, bool) {
	if v, ok := s.vars[name]; ok {
		return v, true
	}
	if s.parent != nil {
		return s.parent.Lookup(name)
	}
	return nil, false
}

type drawer struct {
	ctx   context.Context
	out   *Drawn
	drawn int // nodes drawn so far (MaxDrawnNodes)
}

// MaxDrawnNodes is the most nodes one draw makes: Lists nest, so a small document over a long
// list could otherwise make 200^k of them. The nodes past it are left out, with a problem.
const MaxDrawnNodes = 5000

// maxProblems bounds Drawn.Problems.
const maxProblems = 20

func (dr *drawer) problem(path string, err error) {
	if len(dr.out.Problems) < maxProblems {
		dr.out.Problems = append(dr.out.Problems, path+": "+err.Error())
	}
}

// eval renders one template string in scope; ok is false when it failed (the error is recorded).
func (dr *drawer) eval(s, path string, sc scopeVars) (any, bool) {
	if !strings.Contains(s, "${") {
		if strings.Contains(s, "$${") {
			return strings.ReplaceAll(s, "$${", "${"), true
		}
		return s, true
	}
	tm, err := drawEnv.ParseTemplate(s)
	if err != nil {
		dr.problem(path, err)
		return nil, false
	}
	v, err := tm.Render(dr.ctx, sc, nil)
	if err != nil {
		dr.problem(path, err)
		return nil, false
	}
	return v, true
}

// wire converts an expr value to plain JSON data for the reply.
func wire(v any) any {
	b, err := expr.ToJSON(v, "")
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// node resolves one node; nil when it is hidden (when falsy, or a template of it failed).
func (dr *drawer) node(n map[string]any, path string, sc scopeVars) any {
	if dr.ctx.Err() != nil {
		return nil
	}
	if dr.drawn >= MaxDrawnNodes {
		if dr.drawn == MaxDrawnNodes {
			dr.drawn++
			dr.problem(path, fmt.Errorf("the document draws more than %d nodes: the rest is left out", MaxDrawnNodes))
		}
		return nil
	}
	dr.drawn++
	if w, ok := n["when"]; ok {
		switch x := w.(type) {
		case bool:
			if !x {
				return nil
			}
		case string:
			v, ok := dr.eval(x, path+".when", sc)
			if !ok || !expr.Truthy(v) {
				return nil
			}
		}
	}
	typ := str(n["type"])
	comp := Lookup(typ)
	if comp == nil {
		dr.problem(path, fmt.Errorf("unknown component %q", typ))
		return nil
	}
	out := map[string]any{"type": typ}
	if typ == "List" {
		return dr.list(n, path, sc, out)
	}
	for k, v := range n {
		if k == "type" || k == "when" {
			continue
		}
		p := comp.Prop(k)
		if p == nil {
			continue
		}
		pp := path + "." + k
		switch p.Kind {
		case KindNode:
			if m, ok := v.(map[string]any); ok {
				if r := dr.node(m, pp, sc); r != nil {
					out[k] = r
				}
			}
		case KindNodes:
			out[k] = dr.nodes(v, pp, sc)
		case KindName:
			out[k] = v
		case KindAction:
			a, ok := dr.action(v, pp, sc)
			if !ok {
				return nil
			}
			out[k] = a
		default:
			r, ok := dr.value(v, pp, sc)
			if !ok {
				return nil
			}
			// A templated enum may render a tool's data: the viewer gets enum values only.
			if p.Kind == KindEnum && len(p.Enum) > 0 {
				if e, _ := r.(string); !slices.Contains(p.Enum, e) {
					dr.problem(pp, fmt.Errorf("%s is not one of %s: the prop is left out", quote(r), strings.Join(p.Enum, ", ")))
					continue
				}
			}
			out[k] = r
		}
	}
	return out
}

// quote shows a drawn value in a problem, cut to 40 bytes.
func quote(v any) string {
	s := fmt.Sprintf("%q", fmt.Sprint(v))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// value resolves a prop value: templates in strings, recursively in lists and objects.
func (dr *drawer) value(v any, path string, sc scopeVars) (any, bool) {
	switch x := v.(type) {
	case string:
		r, ok := dr.eval(x, path, sc)
		if !ok {
			return nil, false
		}
		return wire(r), true
	case []any:
		out := make([]any, 0, len(x))
		for i, e := range x {
			r, ok := dr.value(e, fmt.Sprintf("%s[%d]", path, i), sc)
			if !ok {
				return nil, false
			}
			out = append(out, r)
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, ok := dr.value(e, path+"."+k, sc)
			if !ok {
				return nil, false
			}
			out[k] = r
		}
		return out, true
	}
	return v, true
}

func (dr *drawer) nodes(v any, path string, sc scopeVars) []any {
	list, _ := v.([]any)
	out := make([]any, 0, len(list))
	for i, c := range list {
		if m, ok := c.(map[string]any); ok {
			if r := dr.node(m, fmt.Sprintf("%s[%d]", path, i), sc); r != nil {
				out = append(out, r)
			}
		}
	}
	return out
}

func (dr *drawer) action(v any, path string, sc scopeVars) (map[string]any, bool) {
	a, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := map[string]any{"tool": str(a["tool"]), "then": "refresh"}
	if t := str(a["then"]); t != "" {
		out["then"] = t
	}
	if c, ok := a["confirm"].(string); ok {
		r, ok := dr.eval(c, path+".confirm", sc)
		if !ok {
			return nil, false
		}
		out["confirm"] = fmt.Sprint(wire(r))
	}
	args := map[string]any{}
	if m, ok := a["args"].(map[string]any); ok {
		for k, e := range m {
			r, ok := dr.value(e, path+".args."+k, sc)
			if !ok {
				return nil, false
			}
			args[k] = r
		}
	}
	out["args"] = args
	return out, true
}

// maxListItems bounds the items a List draws when the document gives no limit.
const maxListItems = 200

func (dr *drawer) list(n map[string]any, path string, sc scopeVars, out map[string]any) any {
	var items []any
	switch x := n["items"].(type) {
	case string:
		v, ok := dr.eval(x, path+".items", sc)
		if !ok {
			return nil
		}
		items, _ = v.([]any)
		if v != nil && items == nil {
			dr.problem(path+".items", fmt.Errorf("items is %s, not a list", expr.TypeOf(v)))
			return nil
		}
	case []any:
		for _, e := range x {
			ev, _ := expr.FromGo(plainJSON(e))
			items = append(items, ev)
		}
	}
	limit := maxListItems
	lv := n["limit"]
	if x, ok := lv.(string); ok { // a template: "${host.size == 'sm' ? 3 : 5}"
		lv, _ = dr.eval(x, path+".limit", sc)
	}
	if l, ok := lv.(float64); ok && l >= 0 && int(l) < limit {
		limit = int(l)
	}
	if len(items) > limit {
		items = items[:limit]
	}
	name := str(n["item"])
	if name == "" {
		name = "item"
	}
	if d, ok := n["dividers"].(bool); ok {
		out["dividers"] = d
	}
	tmpl, _ := n["template"].(map[string]any)
	children := make([]any, 0, len(items))
	for i, it := range items {
		inner := scopeVars{parent: &sc, vars: map[string]any{name: it, "index": float64(i)}}
		if r := dr.node(tmpl, fmt.Sprintf("%s.template[%d]", path, i), inner); r != nil {
			children = append(children, r)
		}
	}
	out["children"] = children
	if len(items) == 0 {
		if e, ok := n["empty"].(map[string]any); ok {
			if r := dr.node(e, path+".empty", sc); r != nil {
				out["empty"] = r
			}
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// RefreshSeconds reads a document's refresh interval ("30s", "10m", "2h", "1d" or a number of
// seconds) as Drawn.Refresh gives it: seconds, 0 when s is empty or not an interval.
func RefreshSeconds(s string) int { return refreshSeconds(s) }

// refreshSeconds reads a refresh interval ("30s", "10m", "2h", "1d" or seconds); 0 when bad.
func refreshSeconds(s string) int {
	if s == "" {
		return 0
	}
	unit := 1
	switch s[len(s)-1] {
	case 's':
		s = s[:len(s)-1]
	case 'm':
		unit, s = 60, s[:len(s)-1]
	case 'h':
		unit, s = 3600, s[:len(s)-1]
	case 'd':
		unit, s = 86400, s[:len(s)-1]
	}
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n <= 0 {
		return 0
	}
	return n * unit
}
