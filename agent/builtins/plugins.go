package builtins

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/docs"
	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/mcpx/mcpurl"
	"github.com/pkuinfo/harness/plugin"
)

// referenceDoc is docs/PLUGIN-LANGUAGE.md, embedded by package docs, so
// the reference cannot drift from the document.
var referenceDoc = docs.PluginLanguage

// Plugins is the plugins built-in (seed 003 "让 AI 帮你写插件"): the
// authoring tools, onDemand, and use, which loads any plugin's onDemand
// tools. None of them installs anything: install opens the review sheet,
// and the person decides there. Write tools ask by default.
var Plugins = &builtin.Plugin{
	ID: "plugins", Name: "插件", Description: "和助手一起编写、校验、试运行插件,并打开审核页。", Version: "1.0.0", Icon: "sparkles",
	Instructions: "To write or change a plugin, first call plugins__use with plugin \"plugins\" to load the authoring tools; read plugins__reference, " +
		"validate every change with plugins__validate until ok, try read tools with plugins__tryTool, then open the review sheet with plugins__install. You never install anything: the user decides on the sheet. " +
		"Other plugins' rarely used tools also appear only after plugins__use.",
	I18n: builtin.I18n{En: builtin.EnText{Name: "Plugins", Description: "Write, check and try plugins with the assistant, then open the review sheet.",
		Tools: map[string]builtin.ToolText{
			"use": {Title: "Load a plugin's tools"}, "reference": {Title: "Plugin language reference"}, "validate": {Title: "Check a draft"},
			"tryTool": {Title: "Try a draft's tool"}, "source": {Title: "An installed plugin's files"}, "install": {Title: "Open the review sheet"},
			"installRemote": {Title: "Review a remote plugin"}}}},
	Tools: []*builtin.Tool{
		{Name: "use", Title: "加载插件的工具", Effect: plugin.EffectRead, Run: builtin.Func(use),
			Description: "Loads a plugin's onDemand tools into this conversation (they are offered from the next step on). Use plugin \"plugins\" before writing a plugin. Returns { plugin, tools }."},
		{Name: "reference", Title: "插件语言参考", Effect: plugin.EffectRead, OnDemand: true, Run: builtin.Func(reference),
			Description: "The PLUGIN.md language (manifest, tools, steps, expressions, templates, abilities, limits) and the genui catalogue. Read it before writing or changing a plugin; with section (e.g. \"Standard library\") it returns that section, which the main page names but leaves out. Returns { reference }."},
		{Name: "validate", Title: "校验草稿", Effect: plugin.EffectRead, OnDemand: true, Run: builtin.Func(validate),
			Description: "Checks a draft folder with the app's loader and validator. files maps paths to contents, e.g. { \"PLUGIN.md\": \"---…\", \"tools/x.yaml\": \"…\" }. Returns { ok: true, id, version, tools, widgets, campus, network, abilities, warnings } or { ok: false, issues: [{ file, line, col, step, message }] }; fix every issue and validate again."},
		{Name: "tryTool", Title: "试运行草稿的工具", Effect: plugin.EffectRead, OnDemand: true, Untrusted: true, Reaching: true, Run: builtin.Func(tryTool),
			Description: "Runs one read tool of a draft for real, without installing it: real requests, the user's campus sessions for the services the draft declares, a throw-away storage. write, money and public tools are refused. Returns { tool, result } (untrusted data)."},
		{Name: "source", Title: "已安装插件的文件", Effect: plugin.EffectRead, OnDemand: true, Run: builtin.Func(source),
			Description: "Returns an installed plugin document's files { plugin, version, files }, to explain, fix or copy it. Built-in plugins have no document."},
		{Name: "install", Title: "打开审核页", Effect: plugin.EffectWrite, OnDemand: true, Reaching: true, Run: builtin.Func(install),
			Description: "Opens the app's review sheet for a link (a GitHub folder or a PLUGIN.md URL) or a draft ({ files }). It installs nothing: the user reads the sheet and decides. Returns { opened: true, review, sheet }."},
		{Name: "installRemote", Title: "审核远程插件", Effect: plugin.EffectWrite, OnDemand: true, Reaching: true, Run: builtin.Func(installRemote),
			Description: "Opens the add-remote-plugin sheet for an MCP server URL (https, or http on this machine or a private network). It adds nothing: the user confirms in the app. Returns { opened: true, url }."},
	},
}

// UseInput is plugins.use's input.
type UseInput struct {
	Plugin string `json:"plugin" jsonschema:"the plugin id, e.g. plugins" harness:"min=1,max=41,trim"`
}

// Used is plugins.use's result: the onDemand tools now offered.
type Used struct {
	Plugin string   `json:"plugin"`
	Tools  []string `json:"tools"`
}

func use(c *builtin.Context, in UseInput) (Used, error) {
	tools, err := c.Host.AgentTools(c)
	if err != nil {
		return Used{}, err
	}
	out := Used{Plugin: in.Plugin, Tools: []string{}}
	found := false
	for _, t := range tools {
		if t.Plugin != in.Plugin {
			continue
		}
		found = true
		if t.OnDemand {
			out.Tools = append(out.Tools, host.ModelName(t.Plugin, t.Tool))
		}
	}
	if !found {
		return Used{}, builtin.Errorf("no enabled plugin %q offers tools to the assistant", in.Plugin)
	}
	return out, nil
}

// onRequest are the sections of docs/PLUGIN-LANGUAGE.md that Reference("") names but leaves
// out, so that the main reference stays one tool result: what an author reads in the terminal
// or in an error message, the cost formulas, and the standard library, which is read by
// section when a draft needs it.
var onRequest = []string{"Standard library", "Validation", "What things cost", "Recorded tests", "Author CLI"}

// catalogueHeading is the section Reference adds after the document: the genui catalogue.
const catalogueHeading = "Generative UI catalogue"

// Reference is the plugin language from docs/PLUGIN-LANGUAGE.md. With section "" it is the
// main sections, then the genui catalogue, then the names of the sections left out
// (onRequest); with a section's heading (any case, e.g. "Standard library") it is that section
// alone. An unknown heading is an error listing the headings.
func Reference(section string) (string, error) {
	var heads []string
	parts := map[string]*strings.Builder{}
	var cur *strings.Builder
	head := ""
	for line := range strings.Lines(referenceDoc) {
		if strings.HasPrefix(line, "## ") {
			head = strings.TrimSpace(strings.TrimPrefix(line, "## "))
			heads = append(heads, head)
			cur = &strings.Builder{}
			parts[head] = cur
		}
		if cur != nil {
			cur.WriteString(line)
		}
	}
	heads = append(heads, catalogueHeading)
	parts[catalogueHeading] = &strings.Builder{}
	parts[catalogueHeading].WriteString("## " + catalogueHeading + "\n\n" + genui.DescribeCatalog())
	if section = strings.TrimSpace(section); section != "" {
		for _, h := range heads {
			if strings.EqualFold(h, section) {
				return parts[h].String(), nil
			}
		}
		return "", builtin.Errorf("no section %q: the sections are %s", section, strings.Join(heads, ", "))
	}
	var b strings.Builder
	if i := strings.Index(referenceDoc, "\n## "); i >= 0 {
		b.WriteString(referenceDoc[:i+1]) // the title and introduction
	}
	for _, h := range heads {
		if !slices.Contains(onRequest, h) {
			b.WriteString(parts[h].String())
		}
	}
	b.WriteString("\n## More sections\n\nCall plugins__reference with section set to one of: " + strings.Join(onRequest, ", ") + ".\n")
	return b.String(), nil
}

// ReferenceInput is plugins.reference's input.
type ReferenceInput struct {
	Section string `json:"section,omitempty" jsonschema:"one section by its heading, e.g. Standard library; omit for the main sections" harness:"max=80,trim"`
}

func reference(c *builtin.Context, in ReferenceInput) (map[string]string, error) {
	ref, err := Reference(in.Section)
	if err != nil {
		return nil, err
	}
	return map[string]string{"reference": ref}, nil
}

// FilesInput is a draft folder: path → content.
type FilesInput struct {
	Files map[string]string `json:"files" jsonschema:"the draft folder: path → file content, with PLUGIN.md"`
}

func draftFiles(files map[string]string) (map[string][]byte, error) {
	if len(files) == 0 {
		return nil, builtin.Errorf("files is empty: give at least PLUGIN.md")
	}
	if len(files) > 64 {
		return nil, builtin.Errorf("the draft has %d files; the limit is 64", len(files))
	}
	out := make(map[string][]byte, len(files))
	for k, v := range files {
		out[k] = []byte(v)
	}
	return out, nil
}

// Issue is one problem of a draft, where it is.
type Issue struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Step    string `json:"step,omitempty"`
	Message string `json:"message"`
}

func issues(ds []diag.Diagnostic, sev diag.Severity) []Issue {
	out := []Issue{}
	for _, d := range ds {
		if d.Severity == sev {
			out = append(out, Issue{File: d.File, Line: d.Pos.Line, Col: d.Pos.Col, Step: d.Path, Message: d.Msg})
		}
	}
	return out
}

// Validated is plugins.validate's result.
type Validated struct {
	OK        bool     `json:"ok"`
	ID        string   `json:"id,omitempty"`
	Version   string   `json:"version,omitempty"`
	Tools     []any    `json:"tools,omitempty"`
	Widgets   []string `json:"widgets,omitempty"`
	Campus    []string `json:"campus,omitempty"`
	Network   []string `json:"network,omitempty"`
	Abilities []string `json:"abilities,omitempty"`
	Issues    []Issue  `json:"issues,omitempty"`
	Warnings  []Issue  `json:"warnings,omitempty"`
}

func validate(c *builtin.Context, in FilesInput) (Validated, error) {
	files, err := draftFiles(in.Files)
	if err != nil {
		return Validated{}, err
	}
	p, diags, err := host.LoadDraft(c, files)
	var inv *host.Invalid
	var ur *host.Unreadable
	switch {
	case errors.As(err, &inv):
		return Validated{OK: false, Issues: issues(diags, diag.Error)}, nil
	case errors.As(err, &ur):
		return Validated{OK: false, Issues: []Issue{{File: "PLUGIN.md", Line: 1, Col: 1, Message: ur.Err.Error()}}}, nil
	case err != nil:
		return Validated{}, err
	}
	v := Validated{OK: true, ID: p.Manifest.ID, Version: p.Manifest.Version, Tools: []any{}, Widgets: []string{},
		Campus: nonNil(p.Manifest.Campus), Network: nonNil(p.Manifest.Network), Abilities: nonNil(p.Manifest.Abilities),
		Warnings: issues(diags, diag.Warning)}
	for _, t := range p.Tools {
		v.Tools = append(v.Tools, map[string]any{"name": t.Name, "effect": t.Effect.String()})
	}
	for _, w := range p.Manifest.Widgets {
		v.Widgets = append(v.Widgets, w.Name)
	}
	return v, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TryInput is plugins.tryTool's input.
type TryInput struct {
	Files map[string]string `json:"files" jsonschema:"the draft folder: path → file content"`
	Tool  string            `json:"tool" jsonschema:"the read tool to run" harness:"min=1,max=40,trim"`
	Input map[string]any    `json:"input,omitempty" jsonschema:"the tool's input"`
}

func tryTool(c *builtin.Context, in TryInput) (map[string]any, error) {
	files, err := draftFiles(in.Files)
	if err != nil {
		return nil, err
	}
	p, diags, err := host.LoadDraft(c, files)
	if err != nil {
		if len(diags) > 0 {
			return nil, builtin.Errorf("the draft does not validate (plugins__validate shows where): %s", issues(diags, diag.Error)[0].Message)
		}
		return nil, err
	}
	var input any
	if in.Input != nil {
		b, _ := json.Marshal(in.Input)
		if input, err = expr.FromJSON(b); err != nil {
			return nil, builtin.Errorf("input: %v", err)
		}
	}
	v, err := c.Host.TryDraft(c, p, in.Tool, input)
	if err != nil {
		var ie *interp.Error
		if errors.As(err, &ie) {
			return nil, builtin.Errorf("%s", ie.Error())
		}
		return nil, err
	}
	out, err := expr.ToJSON(v, "")
	if err != nil {
		return nil, builtin.Errorf("the result: %v", err)
	}
	return map[string]any{"tool": in.Tool, "result": json.RawMessage(out)}, nil
}

// SourceInput is plugins.source's input.
type SourceInput struct {
	Plugin string `json:"plugin" jsonschema:"the installed plugin's id" harness:"min=1,max=41,trim"`
}

func source(c *builtin.Context, in SourceInput) (map[string]any, error) {
	if c.Host.Builtin(in.Plugin) != nil {
		return nil, builtin.Errorf("%s is a built-in plugin: it is Go code in the app and has no plugin document", in.Plugin)
	}
	p, err := c.Host.Plugin(c, in.Plugin)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	names := make([]string, 0, len(p.Files))
	for n := range p.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files[n] = string(p.Files[n])
	}
	if in, err := c.Host.Show(c, in.Plugin); err != nil || !in.Official {
		c.MarkUntrusted() // a Community plugin's files are its author's text
	}
	return map[string]any{"plugin": in.Plugin, "version": p.Manifest.Version, "files": files}, nil
}

// InstallInput is plugins.install's input: a link or a draft.
type InstallInput struct {
	Link  string            `json:"link,omitempty" jsonschema:"an install link: a GitHub folder or a PLUGIN.md URL" harness:"max=2000,trim"`
	Files map[string]string `json:"files,omitempty" jsonschema:"a draft folder instead of a link"`
}

// Opened is plugins.install's result: the review sheet the app shows.
// Nothing is installed until the person installs it from the sheet
// (POST /v1/plugins with source and hash).
type Opened struct {
	Opened bool         `json:"opened"`
	Review *host.Review `json:"review"`
	Sheet  string       `json:"sheet"`
	Source string       `json:"source"`
	Note   string       `json:"note"`
}

func install(c *builtin.Context, in InstallInput) (Opened, error) {
	var rv *host.Review
	var err error
	switch {
	case in.Link != "" && len(in.Files) > 0:
		return Opened{}, builtin.Errorf("give link or files, not both")
	case in.Link != "":
		if !strings.Contains(in.Link, "://") {
			return Opened{}, builtin.Errorf("link %q: give an https install link (a GitHub folder or a PLUGIN.md URL)", in.Link)
		}
		rv, err = c.Host.Review(c, in.Link)
	case len(in.Files) > 0:
		files, ferr := draftFiles(in.Files)
		if ferr != nil {
			return Opened{}, ferr
		}
		rv, err = c.Host.ReviewDraft(c, files)
	default:
		return Opened{}, builtin.Errorf("give link or files")
	}
	if err != nil {
		return Opened{}, reviewError(err)
	}
	if !rv.Official {
		c.MarkUntrusted() // the sheet holds a Community plugin's own text (its notes, titles)
	}
	return Opened{Opened: true, Review: rv, Sheet: rv.Sheet(string(c.Locale)), Source: rv.Source,
		Note: "The review sheet is open. Nothing is installed unless the user installs it from the sheet."}, nil
}

func reviewError(err error) error {
	var inv *host.Invalid
	if errors.As(err, &inv) {
		return builtin.Errorf("the plugin does not validate; fix it with plugins__validate first:\n%s", strings.TrimPrefix(inv.Error(), "host: "))
	}
	return builtin.Errorf("%s", strings.TrimPrefix(err.Error(), "host: "))
}

// RemoteInput is plugins.installRemote's input.
type RemoteInput struct {
	URL  string `json:"url" jsonschema:"the MCP server's URL, e.g. https://example.org/mcp" harness:"min=1,max=2000,trim"`
	Name string `json:"name,omitempty" jsonschema:"a name to show" harness:"max=60,trim"`
}

func installRemote(c *builtin.Context, in RemoteInput) (map[string]any, error) {
	// The same rule as harness plugins add-remote: https, or plain http on this machine or a private network.
	u, err := mcpurl.Check(in.URL)
	if err != nil {
		return nil, builtin.Errorf("%v", err)
	}
	return map[string]any{"opened": true, "url": u.String(), "name": in.Name,
		"note": "The add-remote-plugin sheet is open with this URL. Nothing is added unless the user confirms it there (a bearer token, if any, is typed by the user, never by you)."}, nil
}
