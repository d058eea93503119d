package genui

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/diag"
)

// Tool is what Validate needs to know about one tool of the plugin: its effect (read, write,
// money or public; seed 004 §Tools), the names of its input fields, the fields that must be
// given (no default, not optional) and whether only a person's tap may run it.
type Tool struct {
	Effect   string
	Input    []string
	Required []string
	UserOnly bool
}

// Context is what the plugin knows about a widget or screen file: Kind is "widget" or "screen"
// when the manifest lists the file under widgets: or screens: ("" accepts either);
// DataSources are the names declared in the manifest's dataSources:; Tools are the plugin's
// tools by name; Functions are the server functions the plugin declares (its cloud.functions,
// else its `server:` section: plugin.Manifest.CloudFunctions), which a `{ "fn": NAME }` data
// binding may read (seed 003 "服务端函数": widgets may bind `{ fn }`, not only `{ tool }`).
type Context struct {
	Kind        string
	DataSources []string
	Tools       map[string]Tool
	Functions   []string
}

// MaxDiagnostics caps the diagnostics of one document; the last one then says how many more
// there were.
const MaxDiagnostics = 100

// Validate checks the generative-UI document src (the contents of file) against the
// catalogue and the plugin context c, and returns every problem found, sorted by position
// (nil when the document is valid). It never panics: malformed JSON yields one diagnostic at
// the offending byte. See docs/GENUI.md for the rules.
func Validate(file string, src []byte, c Context) []diag.Diagnostic {
	v := &validator{file: file, src: src, li: newLineIndex(src), ctx: c}
	if len(src) > MaxDocumentBytes {
		v.errAt(0, "", "the document is %d bytes, the limit is %d", len(src), MaxDocumentBytes)
		return v.diags
	}
	root, err := parseJSON(src)
	if err != nil {
		off := 0
		if se, ok := err.(*syntaxError); ok {
			off = se.off
		}
		v.errAt(off, "", "invalid JSON: %s", strings.TrimPrefix(err.Error(), "invalid character "))
		return v.diags
	}
	v.document(root)
	return v.finish()
}

type validator struct {
	file  string
	src   []byte
	li    *lineIndex
	ctx   Context
	diags []diag.Diagnostic

	kind    string          // the document's kind
	data    map[string]bool // names declared in data:
	strs    map[string]bool // keys of the strings table (zh-Hans)
	hasStrs bool
	fields  map[string]bool // Field names (form.*)
}

func (v *validator) add(sev diag.Severity, off int, path, format string, args ...any) {
	v.diags = append(v.diags, diag.Diagnostic{File: v.file, Pos: v.li.pos(off), Path: path, Severity: sev, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) errAt(off int, path, format string, args ...any) {
	v.add(diag.Error, off, path, format, args...)
}

func (v *validator) warnAt(off int, path, format string, args ...any) {
	v.add(diag.Warning, off, path, format, args...)
}

func (v *validator) finish() []diag.Diagnostic {
	sort.SliceStable(v.diags, func(i, j int) bool { return v.diags[i].Pos.Offset < v.diags[j].Pos.Offset })
	if len(v.diags) > MaxDiagnostics {
		more := len(v.diags) - MaxDiagnostics + 1
		v.diags = v.diags[:MaxDiagnostics-1]
		last := v.diags[len(v.diags)-1]
		v.diags = append(v.diags, diag.Diagnostic{File: v.file, Pos: last.Pos, Severity: diag.Error, Msg: fmt.Sprintf("%d more problems not shown", more)})
	}
	return v.diags
}

var (
	identRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	durationRE = regexp.MustCompile(`^([0-9]{1,6})(s|m|h|d)$`)
)

// childPath appends an object key to a JSON path.
func childPath(path, key string) string {
	if identRE.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// topKeys are the keys a document may have.
var topKeys = []string{"ui", "kind", "title", "description", "i18n", "sizes", "refresh", "strings", "data", "root"}

func (v *validator) document(doc *jvalue) {
	if doc.kind != jObject {
		v.errAt(doc.off, "$", "a document is a JSON object, not a %s", doc.kind)
		return
	}
	for _, f := range doc.fields {
		if !contains(topKeys, f.key) {
			v.errAt(f.keyOff, childPath("$", f.key), "unknown key %q; a document has %s", f.key, strings.Join(topKeys, ", "))
		}
	}
	// ui: the format version.
	switch ui := doc.get("ui"); {
	case ui == nil:
		v.errAt(doc.off, "$", "missing \"ui\": 1 (the format version)")
	case ui.kind != jNumber || ui.num.String() != "1":
		v.errAt(ui.off, "$.ui", "unsupported format version %s; this host reads \"ui\": 1", v.text(ui))
	}
	// kind.
	switch k := doc.get("kind"); {
	case k == nil:
		v.errAt(doc.off, "$", "missing \"kind\": \"widget\" or \"screen\"")
	case k.kind != jString || (k.str != "widget" && k.str != "screen"):
		v.errAt(k.off, "$.kind", "kind must be \"widget\" or \"screen\", not %s", v.text(k))
	default:
		v.kind = k.str
		if v.ctx.Kind != "" && v.ctx.Kind != k.str {
			v.errAt(k.off, "$.kind", "the manifest lists this file under %ss but its kind is %q", v.ctx.Kind, k.str)
		}
	}
	if v.kind == "" {
		v.kind = v.ctx.Kind
	}
	v.plainString(doc, "title", "$.title", true, 60)
	v.plainString(doc, "description", "$.description", v.kind == "widget", 300)
	v.i18n(doc.get("i18n"))
	v.sizes(doc.get("sizes"))
	if r := doc.get("refresh"); r != nil {
		if secs, ok := v.duration(r, "$.refresh"); ok && secs < 60 {
			v.errAt(r.off, "$.refresh", "refresh is at least 1m (60 s), not %s", v.text(r))
		}
	}
	v.stringsTable(doc.get("strings"))
	v.collectFields(doc.get("root"))
	v.dataDecls(doc.get("data"))
	root := doc.get("root")
	if root == nil {
		v.errAt(doc.off, "$", "missing \"root\": the top node")
		return
	}
	v.node(root, "$.root", scope{})
}

func (v *validator) text(j *jvalue) string {
	if j == nil {
		return "nothing"
	}
	end := j.end
	if end > len(v.src) || end < j.off {
		end = j.off
	}
	s := string(v.src[j.off:end])
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		s = string(r[:40]) + "…"
	}
	return s
}

// plainString checks an optional or required string key of obj that is not a template.
func (v *validator) plainString(obj *jvalue, key, path string, required bool, max int) {
	s := obj.get(key)
	if s == nil {
		if required {
			v.errAt(obj.off, pathParent(path), "missing %q", key)
		}
		return
	}
	if s.kind != jString {
		v.errAt(s.off, path, "%s must be a string, not a %s", key, s.kind)
		return
	}
	if n := utf8.RuneCountInString(s.str); n > max {
		v.errAt(s.off, path, "%s is %d characters, the limit is %d", key, n, max)
	}
	if strings.TrimSpace(s.str) == "" {
		v.errAt(s.off, path, "%s is empty", key)
	}
}

func pathParent(path string) string {
	if i := strings.LastIndexAny(path, ".["); i > 0 {
		return path[:i]
	}
	return "$"
}

func (v *validator) i18n(j *jvalue) {
	if j == nil {
		v.warnAt(0, "$", "missing i18n.en: English users see the Chinese title")
		return
	}
	if j.kind != jObject {
		v.errAt(j.off, "$.i18n", "i18n must be an object such as { \"en\": { \"title\": … } }")
		return
	}
	for _, f := range j.fields {
		if f.key != "en" {
			v.errAt(f.keyOff, childPath("$.i18n", f.key), "unknown language %q; the app's languages are zh-Hans (the source) and en", f.key)
		}
	}
	en := j.get("en")
	if en == nil {
		v.warnAt(j.off, "$.i18n", "missing i18n.en: English users see the Chinese title")
		return
	}
	if en.kind != jObject {
		v.errAt(en.off, "$.i18n.en", "i18n.en must be an object with title and description")
		return
	}
	for _, f := range en.fields {
		if f.key != "title" && f.key != "description" {
			v.errAt(f.keyOff, childPath("$.i18n.en", f.key), "unknown key %q; i18n.en has title and description", f.key)
		}
	}
	if en.get("title") == nil {
		v.warnAt(en.off, "$.i18n.en", "missing i18n.en.title")
	}
	v.plainString(en, "title", "$.i18n.en.title", false, 60)
	v.plainString(en, "description", "$.i18n.en.description", false, 300)
}

func (v *validator) sizes(j *jvalue) {
	if j == nil {
		return
	}
	if v.kind == "screen" {
		v.errAt(j.off, "$.sizes", "sizes applies to widgets only")
		return
	}
	if j.kind != jArray || len(j.items) == 0 {
		v.errAt(j.off, "$.sizes", "sizes must be a non-empty list of %s", strings.Join(Sizes, ", "))
		return
	}
	seen := map[string]bool{}
	for i, it := range j.items {
		p := indexPath("$.sizes", i)
		switch {
		case it.kind != jString || !contains(Sizes, it.str):
			v.errAt(it.off, p, "unknown size %s; sizes are %s", v.text(it), strings.Join(Sizes, ", "))
		case seen[it.str]:
			v.errAt(it.off, p, "size %q is listed twice", it.str)
		}
		seen[it.str] = true
	}
}

// duration reads a duration such as "30s", "10m", "2h", "1d" or a number of seconds
// (docs/DECISIONS.md §6) and returns it in seconds.
func (v *validator) duration(j *jvalue, path string) (int, bool) {
	switch j.kind {
	case jNumber:
		n, err := strconv.Atoi(j.num.String())
		if err == nil && n > 0 {
			return n, true
		}
	case jString:
		if m := durationRE.FindStringSubmatch(j.str); m != nil {
			n, _ := strconv.Atoi(m[1])
			n *= map[string]int{"s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]
			if n > 0 {
				return n, true
			}
		}
	}
	v.errAt(j.off, path, "%s is not a duration; write 30s, 10m, 2h, 1d or a number of seconds", v.text(j))
	return 0, false
}

func (v *validator) stringsTable(j *jvalue) {
	v.strs = map[string]bool{}
	if j == nil {
		return
	}
	v.hasStrs = true
	if j.kind != jObject {
		v.errAt(j.off, "$.strings", "strings must be an object { \"zh-Hans\": { KEY: text }, \"en\": { KEY: text } }")
		return
	}
	langs := map[string]map[string]bool{}
	for _, f := range j.fields {
		p := childPath("$.strings", f.key)
		if f.key != "zh-Hans" && f.key != "en" {
			v.errAt(f.keyOff, p, "unknown language %q; strings has zh-Hans and en", f.key)
			continue
		}
		if f.val.kind != jObject {
			v.errAt(f.val.off, p, "strings.%s must be an object of KEY: text", f.key)
			continue
		}
		keys := map[string]bool{}
		for _, s := range f.val.fields {
			sp := childPath(p, s.key)
			if !identRE.MatchString(s.key) {
				v.errAt(s.keyOff, sp, "string key %q must be an identifier (letters, digits, _)", s.key)
			}
			if s.val.kind != jString {
				v.errAt(s.val.off, sp, "a string must be text, not a %s", s.val.kind)
			}
			keys[s.key] = true
		}
		langs[f.key] = keys
	}
	zh, en := langs["zh-Hans"], langs["en"]
	if zh == nil {
		v.errAt(j.off, "$.strings", "missing strings.zh-Hans (the source language)")
	}
	for k := range zh {
		v.strs[k] = true
	}
	if zh != nil && en == nil {
		v.warnAt(j.off, "$.strings", "missing strings.en: English users see Chinese text")
	}
	if zh != nil && en != nil {
		for _, f := range j.get("zh-Hans").fields {
			if !en[f.key] {
				v.warnAt(f.keyOff, childPath("$.strings.zh-Hans", f.key), "no English text for %q in strings.en", f.key)
			}
		}
		for _, f := range j.get("en").fields {
			if !zh[f.key] {
				v.errAt(f.keyOff, childPath("$.strings.en", f.key), "%q is not in strings.zh-Hans", f.key)
			}
		}
	}
}

func (v *validator) dataDecls(j *jvalue) {
	v.data = map[string]bool{}
	if j == nil {
		return
	}
	if j.kind != jObject {
		v.errAt(j.off, "$.data", "data must be an object of NAME: { source } or { tool, args, ttl }")
		return
	}
	for _, f := range j.fields {
		p := childPath("$.data", f.key)
		if !identRE.MatchString(f.key) {
			v.errAt(f.keyOff, p, "data name %q must be an identifier (letters, digits, _)", f.key)
		}
		v.data[f.key] = true
		d := f.val
		if d.kind != jObject {
			v.errAt(d.off, p, "a data binding is { \"source\": NAME } or { \"tool\": NAME, \"args\": {…}, \"ttl\": \"10m\" }")
			continue
		}
		for _, g := range d.fields {
			if !contains([]string{"source", "tool", "args", "ttl", "fn"}, g.key) {
				v.errAt(g.keyOff, childPath(p, g.key), "unknown key %q in a data binding; use source, or tool or fn with args and ttl", g.key)
			}
		}
		src, tool, fn := d.get("source"), d.get("tool"), d.get("fn")
		switch {
		case fn != nil && (src != nil || tool != nil):
			v.errAt(d.off, p, "give one of source, tool or fn")
		case fn != nil:
			v.fnBinding(d, fn, p)
		case src != nil && tool != nil:
			v.errAt(d.off, p, "give either source or tool, not both")
		case src != nil:
			for _, k := range []string{"args", "ttl"} {
				if x := d.get(k); x != nil {
					v.errAt(x.off, childPath(p, k), "%s belongs to the manifest's dataSources entry, not to a source binding", k)
				}
			}
			if src.kind != jString {
				v.errAt(src.off, p+".source", "source must be the name of a manifest dataSources entry")
			} else if !contains(v.ctx.DataSources, src.str) {
				v.errAt(src.off, p+".source", "unknown data source %q%s", src.str, knownList("the manifest declares", v.ctx.DataSources))
			}
		case tool != nil:
			v.toolBinding(d, tool, p)
		default:
			v.errAt(d.off, p, "a data binding needs source, tool or fn")
		}
	}
}

// fnBinding checks a `{ "fn": NAME, "args": {…}, "ttl": "1m" }` binding: NAME must be one of
// the server functions the plugin declares (Context.Functions); the host runs it on the Cloud
// provider as the person, consent-gated, never for the model.
func (v *validator) fnBinding(d, fn *jvalue, p string) {
	switch {
	case fn.kind != jString:
		v.errAt(fn.off, p+".fn", "fn must be the name of one of the plugin's server functions")
	case !contains(v.ctx.Functions, fn.str):
		v.errAt(fn.off, p+".fn", "unknown server function %q%s", fn.str, knownList("the plugin declares", v.ctx.Functions))
	}
	if ttl := d.get("ttl"); ttl != nil {
		v.duration(ttl, p+".ttl")
	}
	v.args(d.get("args"), "", Tool{}, false, p+".args", scope{noData: true})
}

func knownList(prefix string, names []string) string {
	if len(names) == 0 {
		return "; " + strings.Replace(prefix, "declares", "declares none", 1)
	}
	s := append([]string(nil), names...)
	sort.Strings(s)
	return "; " + prefix + " " + strings.Join(s, ", ")
}

func (v *validator) toolNames() []string {
	names := make([]string, 0, len(v.ctx.Tools))
	for n := range v.ctx.Tools {
		names = append(names, n)
	}
	return names
}

func (v *validator) toolBinding(d, tool *jvalue, p string) {
	if tool.kind != jString {
		v.errAt(tool.off, p+".tool", "tool must be the name of one of the plugin's tools")
		return
	}
	t, ok := v.ctx.Tools[tool.str]
	if !ok {
		v.errAt(tool.off, p+".tool", "unknown tool %q%s", tool.str, knownList("the plugin has", v.toolNames()))
	} else {
		if t.Effect != "" && t.Effect != "read" {
			v.errAt(tool.off, p+".tool", "a data binding runs by itself, so it may only use read tools; %q is %s", tool.str, t.Effect)
		}
		// A screen is opened by the person and its bindings run as them, so a userOnly read
		// tool may feed it (what only the person may see, e.g. a share link for a QR code); a
		// widget refreshes by itself and an inline document is drawn for the assistant's turn.
		if t.UserOnly && (v.ctx.Kind != "screen" || t.Effect != "read") {
			v.errAt(tool.off, p+".tool", "%q is userOnly: only a tap may run it, not a data binding (a screen may bind a userOnly read tool)", tool.str)
		}
	}
	if ttl := d.get("ttl"); ttl != nil {
		v.duration(ttl, p+".ttl")
	}
	// Args of a data binding may read host.*, t.* and, on screens, form.* (the host reloads the
	// binding when a field changes), but not data.*: data is not loaded yet.
	v.args(d.get("args"), tool.str, t, ok, p+".args", scope{noData: true})
}

// args checks the args object of a tool binding or action against the tool's input fields.
func (v *validator) args(a *jvalue, toolName string, t Tool, known bool, p string, sc scope) {
	given := map[string]bool{}
	if a != nil {
		if a.kind != jObject {
			v.errAt(a.off, p, "args must be an object of input fields")
			return
		}
		for _, f := range a.fields {
			given[f.key] = true
			fp := childPath(p, f.key)
			if known && !contains(t.Input, f.key) {
				v.errAt(f.keyOff, fp, "tool %q has no input field %q%s", toolName, f.key, knownList("its fields are", t.Input))
			}
			v.anyValue(f.val, fp, sc)
		}
	}
	if !known {
		return
	}
	for _, r := range t.Required {
		if !given[r] {
			off := 0
			if a != nil {
				off = a.off
			}
			v.errAt(off, p, "missing required input field %q of tool %q", r, toolName)
		}
	}
}

// anyValue checks templates anywhere inside a JSON value.
func (v *validator) anyValue(j *jvalue, p string, sc scope) {
	switch j.kind {
	case jString:
		v.template(j, p, sc)
	case jObject:
		for _, f := range j.fields {
			v.anyValue(f.val, childPath(p, f.key), sc)
		}
	case jArray:
		for i, it := range j.items {
			v.anyValue(it, indexPath(p, i), sc)
		}
	}
}

// collectFields records the names of every input node (InputComponents) so that form.NAME can be checked.
func (v *validator) collectFields(j *jvalue) {
	v.fields = map[string]bool{}
	var walk func(*jvalue, int)
	walk = func(j *jvalue, depth int) {
		if j == nil || depth > MaxDepth {
			return
		}
		switch j.kind {
		case jObject:
			if t := j.get("type"); t != nil && t.kind == jString && InputComponents[t.str] {
				if n := j.get("name"); n != nil && n.kind == jString {
					v.fields[n.str] = true
				}
			}
			for _, f := range j.fields {
				walk(f.val, depth+1)
			}
		case jArray:
			for _, it := range j.items {
				walk(it, depth+1)
			}
		}
	}
	walk(j, 0)
}

// scope is what a template may read besides data, host and t.
type scope struct {
	items  []string // the item names of the enclosing List templates, innermost last
	noData bool     // data.* is not available (args of a data binding)
}

func (v *validator) node(j *jvalue, p string, sc scope) {
	if j.kind != jObject {
		v.errAt(j.off, p, "a node is an object with a \"type\", not a %s", j.kind)
		return
	}
	t := j.get("type")
	if t == nil {
		v.errAt(j.off, p, "missing \"type\"; components are %s", strings.Join(componentNames(), ", "))
		return
	}
	if t.kind != jString {
		v.errAt(t.off, p+".type", "type must be a component name")
		return
	}
	c := Lookup(t.str)
	if c == nil {
		v.errAt(t.off, p+".type", "unknown component %q; components are %s", t.str, strings.Join(componentNames(), ", "))
		return
	}
	if InputComponents[c.Name] && v.kind == "widget" {
		v.errAt(t.off, p+".type", "%s is for screens; a widget has no inputs", c.Name)
	}
	for _, f := range j.fields {
		fp := childPath(p, f.key)
		if f.key == "type" {
			continue
		}
		if f.key == "when" {
			v.typed(f.val, fp, KindBool, nil, sc)
			continue
		}
		prop := c.Prop(f.key)
		if prop == nil {
			v.errAt(f.keyOff, fp, "%s has no prop %q%s", c.Name, f.key, knownList("its props are", propNames(c)))
			continue
		}
		v.prop(c, prop, j, f.val, fp, sc)
	}
	for _, prop := range c.Props {
		if prop.Required && j.get(prop.Name) == nil {
			v.errAt(j.off, p, "%s needs %q (%s)", c.Name, prop.Name, prop.Doc)
		}
	}
}

func propNames(c *Component) []string {
	var names []string
	for _, p := range c.Props {
		names = append(names, p.Name)
	}
	return names
}

func (v *validator) prop(c *Component, prop *Prop, node, val *jvalue, p string, sc scope) {
	switch prop.Kind {
	case KindName:
		if val.kind != jString || !identRE.MatchString(val.str) {
			v.errAt(val.off, p, "%s must be a plain name (letters, digits, _), not %s", prop.Name, v.text(val))
		}
	case KindNodes:
		if val.kind != jArray {
			v.errAt(val.off, p, "%s must be a list of nodes", prop.Name)
			return
		}
		for i, it := range val.items {
			v.node(it, indexPath(p, i), sc)
		}
	case KindNode:
		inner := sc
		if c.Name == "List" && prop.Name == "template" {
			name := "item"
			if n := node.get("item"); n != nil && n.kind == jString && identRE.MatchString(n.str) {
				name = n.str
			}
			if reserved[name] {
				v.errAt(itemNode(node).off, childPath(pathParent(p), "item"), "item name %q hides a name every template reads; choose another", name)
			}
			// Outer items stay readable in a nested List (a copy: siblings must not share).
			inner.items = append(append([]string(nil), sc.items...), name)
		}
		v.node(val, p, inner)
	case KindAction:
		v.action(val, p, sc)
	default:
		v.typed(val, p, prop.Kind, prop.Enum, sc)
	}
}

// itemNode returns the "item" member of a List node for error positions.
func itemNode(node *jvalue) *jvalue {
	if it := node.get("item"); it != nil {
		return it
	}
	return node
}

var reserved = map[string]bool{"data": true, "host": true, "t": true, "form": true, "index": true}

func (v *validator) action(a *jvalue, p string, sc scope) {
	if a.kind != jObject {
		v.errAt(a.off, p, "an action is { \"tool\": NAME, \"args\": {…}, \"confirm\": text, \"then\": \"refresh\" }")
		return
	}
	for _, f := range a.fields {
		if !contains([]string{"tool", "args", "confirm", "then"}, f.key) {
			v.errAt(f.keyOff, childPath(p, f.key), "unknown key %q in an action; an action has tool, args, confirm and then", f.key)
		}
	}
	tool := a.get("tool")
	var t Tool
	known := false
	switch {
	case tool == nil:
		v.errAt(a.off, p, "an action needs \"tool\"")
	case tool.kind != jString:
		v.errAt(tool.off, p+".tool", "tool must be the name of one of the plugin's tools")
	default:
		t, known = v.ctx.Tools[tool.str]
		if !known {
			v.errAt(tool.off, p+".tool", "unknown tool %q%s", tool.str, knownList("the plugin has", v.toolNames()))
		}
	}
	if c := a.get("confirm"); c != nil {
		v.typed(c, p+".confirm", KindText, nil, sc)
	} else if known && t.Effect != "" && t.Effect != "read" {
		v.warnAt(tool.off, p, "tool %q is %s but the action has no \"confirm\" question", tool.str, t.Effect)
	}
	if th := a.get("then"); th != nil && (th.kind != jString || !contains(Thens, th.str)) {
		v.errAt(th.off, p+".then", "then must be one of %s, not %s", strings.Join(Thens, ", "), v.text(th))
	}
	name := ""
	if tool != nil && tool.kind == jString {
		name = tool.str
	}
	v.args(a.get("args"), name, t, known, p+".args", sc)
}

// typed checks a prop value of a templatable kind: a template string, or a literal of the
// kind.
func (v *validator) typed(val *jvalue, p string, kind PropKind, enum []string, sc scope) {
	if val.kind == jString && strings.Contains(val.str, "${") {
		single := v.template(val, p, sc)
		if !single && kind != KindText && kind != KindAny && kind != KindEnum && kind != KindIcon {
			v.errAt(val.off, p, "a %s prop takes one ${expr} (which keeps its type), not text around it", kind)
		}
		return
	}
	ok := true
	switch kind {
	case KindText:
		ok = val.kind != jObject && val.kind != jArray
	case KindAny:
	case KindNumber:
		ok = val.kind == jNumber
	case KindBool:
		ok = val.kind == jBool
	case KindEnum, KindIcon:
		if kind == KindIcon {
			enum = Icons
		}
		if val.kind != jString || !contains(enum, val.str) {
			v.errAt(val.off, p, "%s is not one of %s", v.text(val), strings.Join(enum, ", "))
		}
		return
	case KindNumbers:
		ok = val.kind == jArray
		for i, it := range val.items {
			if it.kind != jNumber && it.kind != jNull {
				v.errAt(it.off, indexPath(p, i), "values must be numbers or null, not %s", v.text(it))
			}
		}
	case KindList:
		ok = val.kind == jArray
		if ok {
			v.anyValue(val, p, sc)
		}
	}
	if !ok {
		v.errAt(val.off, p, "expected a %s or a ${expr} template, not %s", kind, v.text(val))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
