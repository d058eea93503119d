package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
	"github.com/pkuinfo/harness/plugin"
)

// Plugin is one built-in plugin: the Go value of seed 003's definePlugin.
// Chinese (zh-Hans) is the source language of every user-facing string;
// I18n.En holds the English of each. Compile checks it and turns it into
// the host's *host.Builtin.
type Plugin struct {
	// Private marks every tool's result as the person's private data (what
	// they keep in this built-in: to-dos, memories, classes), writes included,
	// since a write's result echoes what it changed (host.Builtin.PrivateTools).
	Private bool
	// ID is the registry id, ^[a-z0-9][a-z0-9-]{1,40}$; tools are
	// "ID.TOOL", the model's names "ID__TOOL".
	ID string
	// Name and Description are shown to users (Chinese, ≤ 200 characters).
	Name, Description string
	// Version is a semantic version; a new version ships with the app.
	Version string
	// Author is the GitHub name of the maintainer ("pkuinfo" for the app's own).
	Author string
	// Icon is a host icon name (see genui's icon set).
	Icon string
	// Campus, Network and Abilities are what the plugin may reach, as a
	// document declares them (seed 004 "What the plugin declares"); a
	// built-in's services go through the same checks.
	Campus, Network, Abilities []string
	// I18n is the English text of every user-facing string, and the UI
	// string table.
	I18n I18n
	// Instructions go into the assistant's system prompt on every request
	// (short; tools named by model name). Not translated.
	Instructions string
	// Context, when set, runs before each assistant turn with the user's
	// message; its text is given to the model as data, never as
	// instructions, and a run longer than ContextTimeout is cut off.
	Context func(c *Context, query string) (string, error)
	// Tools are the plugin's API, in order.
	Tools []*Tool
	// DataSources are read tools the dashboard and scheduled checks read,
	// cached for TTL.
	DataSources []DataSource
	// Widgets and Screens are genui documents (JSON, docs/GENUI.md).
	Widgets, Screens []UI
	// Settings are rows the plugin adds to Settings, each opening a screen.
	Settings []Setting
	// Commands are slash commands.
	Commands []Command
	// DefaultModes are the starting permission modes per effect (an
	// Official plugin's are taken as they are); effects not named start
	// at read auto, the rest ask.
	DefaultModes map[plugin.Effect]host.Mode
	// Cloud is the plugin's PKU harness Cloud declaration, nil when it uses
	// none (seed 003 "PKU harness Cloud"); the registry entry copies it.
	Cloud *plugin.Cloud
	// Legacy maps old ids to new ones (seed 003 "改名或合并"): "plugin"
	// renames of the plugin id, "tools" of tool names, "widgets" of widget
	// names.
	Legacy Legacy
}

// Legacy maps old names to current ones, so that saved widgets,
// schedules and settings keep working after a rename.
type Legacy struct {
	Plugin  []string          // former ids of this plugin
	Tools   map[string]string // old tool name → tool name
	Widgets map[string]string // old widget name → widget name
}

// ContextTimeout bounds a Plugin.Context run (seed 003: context runs before
// each assistant turn; a slow one is cut off, never waited for).
const ContextTimeout = 800 * time.Millisecond

// I18n is the English of a built-in (seed 003 "多语言": the manifest's
// strings in i18n.en, the UI's in a string table).
type I18n struct {
	En EnText
	// Strings is the UI string table (defineStrings): the same keys in both
	// languages.
	Strings Strings
}

// EnText is the English of the manifest's user-facing strings, keyed as the
// seed's i18n.en is: tool, widget, screen and command names, the screen a
// settings row opens, the data source name.
type EnText struct {
	Name, Description string
	Tools             map[string]ToolText
	Widgets           map[string]UIText
	Screens           map[string]UIText
	Settings          map[string]SettingText
	Commands          map[string]CommandText
	DataSources       map[string]UIText
}

// ToolText is a tool's English title (and summary, which built-ins do not
// use).
type ToolText struct{ Title, Summary string }

// UIText is the English title and description of a widget, screen or data
// source.
type UIText struct{ Title, Description string }

// SettingText is the English of a settings row.
type SettingText struct{ Title, Subtitle string }

// CommandText is the English of a slash command.
type CommandText struct {
	Description, ArgHint, Prompt string
	Aliases                      []string
}

// DataSource is one entry of dataSources: Tool (a read tool of the plugin)
// run with Args (a JSON object, or nil for {}), cached for TTL.
type DataSource struct {
	Name, Title, Tool string
	Args              map[string]any
	TTL               time.Duration
}

// UI is a widget or a screen: a genui document (docs/GENUI.md) whose
// title and description are the Chinese ones; its i18n.en must match
// EnText.
type UI struct {
	Name     string
	Document []byte
}

// Setting is a Settings row that opens Screen.
type Setting struct{ Screen, Title, Subtitle, Icon string }

// Command is a slash command: Prompt is sent to the assistant as the
// user's message with {{input}} replaced by what follows the command; or
// Run runs on the device and its text is shown to the user, never sent to
// the model; or Screen opens one of the plugin's screens.
type Command struct {
	Name, Description, ArgHint string
	Aliases                    []string
	Prompt                     string
	Screen                     string
	Run                        func(c *Context, input string) (string, error)
}

// Tool is one tool of a built-in: its user-facing title (Chinese), the
// description for the model, the effect and flags, and the function, made
// with Func from a typed Go function whose input struct gives the JSON
// Schema.
type Tool struct {
	Name        string // ^[a-z][a-zA-Z0-9]{0,39}$
	Title       string // ≤ 60 characters, Chinese
	Description string // for the model only
	Effect      plugin.Effect
	Untrusted   bool // results carry third-party text
	UserOnly    bool // only a person's own tap may run it; hidden from the model
	OnDemand    bool // offered to the model only after plugins.use
	// Private marks the results as the person's private data (memories,
	// to-dos, the timetable): an agent turn that read one asks before a call
	// that can reach a third party (host.Builtin.PrivateTools).
	Private bool
	// Reaching marks a tool whose input can reach a website the person did not
	// review (host.Builtin.ReachingTools).
	Reaching bool
	// ReachingFields are input fields with which the call's input can later
	// reach another plugin's tool (host.Builtin.ReachingFields).
	ReachingFields []string
	Run            Handler
}

// Compiled is a built-in as the host registers it, with the Plugin it was
// made from (for the UI, i18n and commands).
type Compiled struct {
	*host.Builtin
	Def *Plugin
}

var (
	idRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,40}$`)
	nameRE = regexp.MustCompile(`^[a-z][a-zA-Z0-9]{0,39}$`)
	cmdRE  = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// Compile checks p and returns the host's value for it: a *plugin.Plugin
// with the manifest, tools (input fields derived from each input struct),
// data sources, widgets, screens, settings, commands and English text a
// PLUGIN.md would have, the content hash over all of it, and the Go
// functions. It fails, naming the field, on a bad id or name, a tool
// without a function or effect, a data source naming a missing or non-read
// tool, a genui document with errors, a settings row or command opening a
// missing screen, an input struct outside the plain subset, or a Cloud
// declaration without its disclosure.
func Compile(p *Plugin) (*Compiled, error) {
	if p == nil {
		return nil, fmt.Errorf("builtin: nil plugin")
	}
	errf := func(format string, args ...any) error {
		return fmt.Errorf("builtin %s: %s", p.ID, fmt.Sprintf(format, args...))
	}
	if !idRE.MatchString(p.ID) {
		return nil, fmt.Errorf("builtin: id %q must match %s", p.ID, idRE)
	}
	if p.Name == "" || p.Description == "" || p.Version == "" {
		return nil, errf("name, description and version are required")
	}
	author := p.Author
	if author == "" {
		author = "pkuinfo"
	}
	m := &plugin.Manifest{
		Spec: 1, ID: p.ID, Name: p.Name, Description: p.Description, Version: p.Version, Author: author, Icon: p.Icon,
		Campus: slices.Clone(p.Campus), Network: slices.Clone(p.Network), Abilities: slices.Clone(p.Abilities),
		Cloud: p.Cloud, Pos: plugin.Positions{},
	}
	if p.Cloud != nil && len(p.Cloud.Uses) > 0 && (len(p.Cloud.DisclosureZh) == 0 || len(p.Cloud.DisclosureEn) != len(p.Cloud.DisclosureZh)) {
		return nil, errf("cloud: disclosure (zh, and en line by line) is required when uses is set")
	}
	for _, e := range plugin.Effects {
		if mode, ok := p.DefaultModes[e]; ok {
			m.DefaultModes = append(m.DefaultModes, &plugin.DefaultMode{Effect: e, Mode: string(mode)})
		}
	}
	env := stdlib.NewEnv()
	pp := &plugin.Plugin{Source: host.BuiltinSource + p.ID, Manifest: m, Instructions: p.Instructions,
		Shared: &plugin.Shared{}, Files: map[string][]byte{}}
	funcs := map[string]host.BuiltinFunc{}
	gtools := map[string]genui.Tool{}
	seen := map[string]bool{}
	for _, t := range p.Tools {
		if t == nil || !nameRE.MatchString(t.Name) {
			return nil, errf("tool name %q must match %s", toolName(t), nameRE)
		}
		if seen[t.Name] {
			return nil, errf("tool %s is defined twice", t.Name)
		}
		seen[t.Name] = true
		if t.Title == "" || len([]rune(t.Title)) > 60 {
			return nil, errf("tool %s: title is required, at most 60 characters", t.Name)
		}
		if t.Effect == 0 {
			return nil, errf("tool %s: effect is required (read, write, money or public)", t.Name)
		}
		if t.Run == nil {
			return nil, errf("tool %s: Run is required (builtin.Func)", t.Name)
		}
		fields, err := t.Run.fields()
		if err != nil {
			return nil, errf("tool %s: input: %v", t.Name, err)
		}
		pt := &plugin.Tool{
			Name: t.Name, Title: t.Title, Description: t.Description, Effect: t.Effect,
			Input: fields, Untrusted: t.Untrusted, UserOnly: t.UserOnly, OnDemand: t.OnDemand,
			Constants: expr.NewObject(0), AllConstants: expr.NewObject(0), Env: env, Pos: plugin.Positions{},
		}
		pp.Tools = append(pp.Tools, pt)
		m.Tools = append(m.Tools, &plugin.ToolRef{Name: t.Name})
		funcs[t.Name] = t.Run.hostFunc(p)
		gt := genui.Tool{Effect: t.Effect.String(), UserOnly: t.UserOnly}
		for _, f := range fields {
			gt.Input = append(gt.Input, f.Name)
			if !f.Optional && !f.HasDefault {
				gt.Required = append(gt.Required, f.Name)
			}
		}
		gtools[t.Name] = gt
	}
	var dsNames []string
	for _, d := range p.DataSources {
		t := pp.Tool(d.Tool)
		if t == nil {
			return nil, errf("data source %s: no tool %q", d.Name, d.Tool)
		}
		if t.Effect != plugin.EffectRead {
			return nil, errf("data source %s: tool %s must be a read tool", d.Name, d.Tool)
		}
		if d.TTL <= 0 {
			return nil, errf("data source %s: ttl is required", d.Name)
		}
		var args any
		if d.Args != nil {
			b, err := json.Marshal(d.Args)
			if err != nil {
				return nil, errf("data source %s: args: %v", d.Name, err)
			}
			if args, err = expr.FromJSON(b); err != nil {
				return nil, errf("data source %s: args: %v", d.Name, err)
			}
		}
		m.DataSources = append(m.DataSources, &plugin.DataSource{Name: d.Name, Tool: d.Tool, Args: args, TTL: d.TTL, Title: d.Title})
		dsNames = append(dsNames, d.Name)
	}
	screens := map[string]bool{}
	for kind, list := range map[string][]UI{"widget": p.Widgets, "screen": p.Screens} {
		for _, u := range list {
			if !nameRE.MatchString(u.Name) {
				return nil, errf("%s name %q must match %s", kind, u.Name, nameRE)
			}
			file := kind + "s/" + u.Name + ".json"
			diags := genui.Validate(file, u.Document, genui.Context{Kind: kind, DataSources: dsNames, Tools: gtools, Functions: m.CloudFunctions()})
			for _, d := range diags {
				if d.Severity == diag.Error {
					return nil, errf("%s", d.String())
				}
			}
			pp.Files[file] = u.Document
			ref := &plugin.FileRef{Name: u.Name, File: file}
			if kind == "widget" {
				m.Widgets = append(m.Widgets, ref)
			} else {
				m.Screens = append(m.Screens, ref)
				screens[u.Name] = true
			}
		}
	}
	slices.SortFunc(m.Widgets, func(a, b *plugin.FileRef) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(m.Screens, func(a, b *plugin.FileRef) int { return strings.Compare(a.Name, b.Name) })
	for _, s := range p.Settings {
		if !screens[s.Screen] || s.Title == "" {
			return nil, errf("settings row %q: needs a title and one of the plugin's screens (got %q)", s.Title, s.Screen)
		}
		m.Settings = append(m.Settings, &plugin.Setting{Screen: s.Screen, Title: s.Title, Subtitle: s.Subtitle, Icon: s.Icon})
	}
	for _, c := range p.Commands {
		if !cmdRE.MatchString(c.Name) || c.Description == "" {
			return nil, errf("command %q: the name must match %s and a description is required", c.Name, cmdRE)
		}
		n := 0
		for _, set := range []bool{c.Prompt != "", c.Screen != "", c.Run != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, errf("command %s: give exactly one of Prompt, Screen or Run", c.Name)
		}
		if c.Screen != "" && !screens[c.Screen] {
			return nil, errf("command %s: no screen %q", c.Name, c.Screen)
		}
		m.Commands = append(m.Commands, &plugin.Command{Name: c.Name, Description: c.Description, Aliases: c.Aliases,
			ArgHint: c.ArgHint, Prompt: c.Prompt, Screen: c.Screen})
	}
	m.I18n = &plugin.I18n{En: p.I18n.En.locale()}
	sum, err := hashOf(pp)
	if err != nil {
		return nil, errf("%v", err)
	}
	pp.Hash = sum
	for old, cur := range p.Legacy.Tools {
		if pp.Tool(cur) == nil || pp.Tool(old) != nil {
			return nil, errf("legacy.tools: %s must be a former name (not a tool now) of a tool that exists (%s)", old, cur)
		}
	}
	for old, cur := range p.Legacy.Widgets {
		if !slices.ContainsFunc(m.Widgets, func(r *plugin.FileRef) bool { return r.Name == cur }) {
			return nil, errf("legacy.widgets: %s maps to no widget %s", old, cur)
		}
	}
	for _, old := range p.Legacy.Plugin {
		if !idRE.MatchString(old) || old == p.ID {
			return nil, errf("legacy.plugin: %q is not a former id", old)
		}
	}
	c := &Compiled{Builtin: &host.Builtin{Plugin: pp, Funcs: funcs, FormerIDs: slices.Clone(p.Legacy.Plugin),
		RenamedTools: p.Legacy.Tools}, Def: p}
	for _, t := range p.Tools {
		if t.Private || p.Private {
			c.Builtin.PrivateTools = append(c.Builtin.PrivateTools, t.Name)
		}
		if t.Reaching {
			c.Builtin.ReachingTools = append(c.Builtin.ReachingTools, t.Name)
		}
		if len(t.ReachingFields) > 0 {
			if c.Builtin.ReachingFields == nil {
				c.Builtin.ReachingFields = map[string][]string{}
			}
			c.Builtin.ReachingFields[t.Name] = t.ReachingFields
		}
	}
	c.Builtin.Value = c
	return c, nil
}

func toolName(t *Tool) string {
	if t == nil {
		return ""
	}
	return t.Name
}

// locale is the plugin.Locale of the English text (the review sheet and
// the API read it as they read a document's i18n.en).
func (e EnText) locale() *plugin.Locale {
	l := &plugin.Locale{Name: e.Name, Description: e.Description}
	for _, k := range sortedKeys(e.Tools) {
		l.Tools = append(l.Tools, &plugin.ToolText{Name: k, Title: e.Tools[k].Title, Summary: e.Tools[k].Summary})
	}
	for _, k := range sortedKeys(e.Widgets) {
		l.Widgets = append(l.Widgets, &plugin.UIText{Name: k, Title: e.Widgets[k].Title, Description: e.Widgets[k].Description})
	}
	for _, k := range sortedKeys(e.Screens) {
		l.Screens = append(l.Screens, &plugin.UIText{Name: k, Title: e.Screens[k].Title})
	}
	for _, k := range sortedKeys(e.Settings) {
		l.Settings = append(l.Settings, &plugin.UIText{Name: k, Title: e.Settings[k].Title, Subtitle: e.Settings[k].Subtitle})
	}
	for _, k := range sortedKeys(e.Commands) {
		c := e.Commands[k]
		l.Commands = append(l.Commands, &plugin.CommandText{Name: k, Description: c.Description, ArgHint: c.ArgHint, Aliases: c.Aliases, Prompt: c.Prompt})
	}
	for _, k := range sortedKeys(e.DataSources) {
		l.DataSources = append(l.DataSources, &plugin.UIText{Name: k, Title: e.DataSources[k].Title})
	}
	return l
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// hashOf is the content hash of a built-in: SHA-256 over the JSON of
// everything the review sheet, the update rules and the model see.
func hashOf(p *plugin.Plugin) (string, error) {
	type tool struct {
		Name, Title, Description string
		Effect                   string
		Untrusted, UserOnly      bool
		OnDemand                 bool
		Schema                   map[string]any
	}
	var tools []tool
	for _, t := range p.Tools {
		tools = append(tools, tool{t.Name, t.Title, t.Description, t.Effect.String(), t.Untrusted, t.UserOnly, t.OnDemand, host.InputSchema(t)})
	}
	m := p.Manifest
	type ds struct {
		Name, Tool, Title string
		Args              json.RawMessage
		TTL               time.Duration
	}
	var dss []ds
	for _, d := range m.DataSources {
		a, err := expr.ToJSON(d.Args, "")
		if err != nil {
			return "", err
		}
		dss = append(dss, ds{d.Name, d.Tool, d.Title, a, d.TTL})
	}
	b, err := json.Marshal(struct {
		ID, Name, Description, Version, Author, Icon string
		Campus, Network, Abilities                   []string
		Instructions                                 string
		Tools                                        []tool
		DataSources                                  []ds
		Settings                                     []*plugin.Setting
		Commands                                     []*plugin.Command
		DefaultModes                                 []*plugin.DefaultMode
		I18n                                         *plugin.Locale
		Cloud                                        *plugin.Cloud
		Files                                        map[string][]byte
	}{m.ID, m.Name, m.Description, m.Version, m.Author, m.Icon, m.Campus, m.Network, m.Abilities, p.Instructions,
		tools, dss, m.Settings, m.Commands, m.DefaultModes, m.I18n.En, m.Cloud, p.Files})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// MustCompile is Compile for the app's own built-ins, whose definitions
// are code: an error is a bug caught by the package's tests, so it panics.
func MustCompile(p *Plugin) *Compiled {
	c, err := Compile(p)
	if err != nil {
		panic(err)
	}
	return c
}

// RunContext runs c's Context function for query with the ContextTimeout
// cut-off; "" when there is none or it did not answer in time.
func RunContext(ctx context.Context, h *host.Host, c *Compiled, query string) (string, error) {
	s, _, err := RunContextMarked(ctx, h, c, query)
	return s, err
}

// RunContextMarked is RunContext that also says whether the text carries
// third-party text (the context() called MarkUntrusted: a to-do a document
// plugin added), so that a turn whose prompt holds it is untrusted.
func RunContextMarked(ctx context.Context, h *host.Host, c *Compiled, query string) (string, bool, error) {
	if c.Def.Context == nil {
		return "", false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ContextTimeout)
	defer cancel()
	type answer struct {
		s         string
		untrusted bool
		err       error
	}
	ch := make(chan answer, 1)
	cx := newContext(ctx, h, c.Def.ID, host.ActorAgent, "", nil)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- answer{"", false, fmt.Errorf("builtin %s: context failed: %v", c.Def.ID, r)}
			}
		}()
		s, err := c.Def.Context(cx, query)
		ch <- answer{s, cx.untrusted, err}
	}()
	select {
	case a := <-ch:
		return a.s, a.untrusted, a.err
	case <-ctx.Done():
		return "", false, fmt.Errorf("builtin %s: context took longer than %s", c.Def.ID, ContextTimeout)
	}
}
