package plugin

import (
	"context"
	"fmt"
	"github.com/pkuinfo/harness/i18n"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"

	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
)

// Patterns of docs/DECISIONS.md §7 and the seeds.
var (
	idRe        = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,40}$`)
	toolNameRe  = regexp.MustCompile(`^[a-z][a-zA-Z0-9]{0,39}$`)
	commandRe   = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	identRe     = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
	secretRe    = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	semverRe    = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	hostLabelRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// Text limits of the seed ("description (4 to 200 characters)", "title … At most 60
// characters", "summary … at most 80 characters").
const (
	MinDescription = 4
	MaxDescription = 200
	MaxTitle       = 60
	MaxSummary     = 80
)

// Icons are the host icon names the seeds list ("card, wifi, book, …"); another name is a
// warning, since the host's set may be larger.
var Icons = []string{
	"card", "wifi", "book", "bell", "clock", "location", "sparkles", "key", "person", "qr", "warning",
	"check", "calendar", "bus", "food", "wallet", "library", "room", "school", "ticket", "medal",
	"chart", "search", "globe", "lock",
}

// CloudServices are the Cloud services a manifest may list in cloud.uses (seed 003 "PKU harness
// Cloud": store, channels, mailbox, push, files, and server functions).
var CloudServices = []string{"store", "channels", "mailbox", "push", "files", "functions"}

// ServerAbilities are the abilities of server-function steps (seed "Server functions": KV,
// crypto.sha256, hmacSha256 and randomId).
var ServerAbilities = []AbilityOp{
	{Group: "kv", Op: "get", Effect: EffectRead, Summary: "reads the caller's server-side KV"},
	{Group: "kv", Op: "set", Effect: EffectWrite, Summary: "writes the caller's server-side KV"},
	{Group: "kv", Op: "delete", Effect: EffectWrite, Summary: "deletes from the caller's server-side KV"},
	{Group: "crypto", Op: "sha256", Effect: EffectRead, Summary: "SHA-256 of a text"},
	{Group: "crypto", Op: "hmacSha256", Effect: EffectRead, Summary: "HMAC-SHA-256 with a named secret"},
	{Group: "crypto", Op: "randomId", Effect: EffectRead, Summary: "a random identifier"},
}

// Modes are the permission modes defaultModes may set: auto (run without asking), ask (confirm
// each call) and deny (refuse); "off" is accepted as another word for deny.
var Modes = []string{"auto", "ask", "deny", "off"}

// languageNames are bound by the language in every step of a tool or server function
// (docs/DECISIONS.md §4); a constant or function may not take them. item, index, error, page,
// pageIndex and items are bound only in their places; a let there may not hide them.
var languageNames = []string{"input", "constants", "now", "secrets", "caller"}

var reservedWords = map[string]bool{
	"true": true, "false": true, "null": true, "undefined": true, "new": true, "this": true,
	"function": true, "class": true, "delete": true, "typeof": true, "instanceof": true, "in": true,
	"void": true, "var": true, "let": true, "const": true, "return": true, "if": true, "else": true,
	"for": true, "while": true, "do": true, "switch": true, "case": true, "break": true,
	"continue": true, "try": true, "catch": true, "finally": true, "throw": true, "yield": true,
	"await": true, "async": true, "import": true, "export": true, "super": true, "extends": true,
	"with": true, "debugger": true, "default": true, "eval": true, "of": true, "static": true,
}

// Validate checks a loaded plugin against every rule of the seed and docs/DECISIONS.md §7 and the
// names in scope of every expression and template (§4). It returns all problems at once, sorted,
// warnings included (see HasErrors). Shape problems found while decoding (unknown fields, wrong
// YAML types, parse errors) are reported by the loader, not here.
func Validate(p *Plugin) []diag.Diagnostic {
	v := &validator{p: p, d: &diagList{}, m: p.Manifest, toolCalls: map[*Tool][]*Step{}}
	if v.m == nil {
		v.m = &Manifest{Pos: Positions{}}
	}
	v.builtins = map[string]bool{}
	if p.Env != nil {
		for _, b := range p.Env.Builtins() {
			v.builtins[b] = true
		}
	}
	v.manifest()
	v.shared()
	// Tools are checked in parallel, each with its own diagnostics; they share only what is
	// read-only here (the manifest, the builtins) and their Envs, which are safe for concurrent
	// use.
	perTool := make([]*validator, len(p.Tools))
	runParallel(len(p.Tools), func(i int) {
		tv := *v
		tv.d = &diagList{}
		tv.toolCalls = map[*Tool][]*Step{}
		tv.tool(p.Tools[i], nil)
		perTool[i] = &tv
	})
	for i, tv := range perTool {
		for _, d := range tv.d.ds {
			v.d.add(d)
		}
		v.toolCalls[p.Tools[i]] = tv.toolCalls[p.Tools[i]]
	}
	if v.m.Server != nil {
		v.server()
	}
	v.calls()
	v.dataSources()
	v.ui()
	v.i18n()
	return v.d.result()
}

type validator struct {
	p         *Plugin
	m         *Manifest
	d         *diagList
	builtins  map[string]bool
	toolCalls map[*Tool][]*Step
}

func (v *validator) merr(path, format string, args ...any) {
	v.d.errorf(ManifestFile, v.m.Pos.At(path), "", format, args...)
}

func (v *validator) mwarn(path, format string, args ...any) {
	v.d.warnf(ManifestFile, v.m.Pos.At(path), "", format, args...)
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// decoded reports whether there is a manifest to check: one decoded from a frontmatter (which
// records positions) or built in Go (which has an id).
func (v *validator) decoded() bool { return len(v.m.Pos) > 0 || v.m.ID != "" }

func (v *validator) manifest() {
	m := v.m
	if !v.decoded() {
		return // the frontmatter did not decode; the loader said why
	}
	required := func(key, val string) bool {
		if strings.TrimSpace(val) != "" {
			return true
		}
		if _, ok := m.Pos[key]; !ok {
			v.merr(key, "missing required field %s", key)
		} else {
			v.merr(key, "%s must not be empty", key)
		}
		return false
	}
	if _, ok := m.Pos["spec"]; !ok && m.Spec == 0 {
		v.merr("spec", "missing required field spec (write spec: 1)")
	} else if m.Spec != 1 {
		v.merr("spec", "spec must be 1 (this is spec version 1 of the plugin language)")
	}
	if required("id", m.ID) && !idRe.MatchString(m.ID) {
		v.merr("id", "id %q must match ^[a-z0-9][a-z0-9-]{1,40}$ (lower-case letters, digits and -)", m.ID)
	}
	required("name", m.Name)
	if required("description", m.Description) {
		if n := runes(m.Description); n < MinDescription || n > MaxDescription {
			v.merr("description", "description has %s; it must have %d to %d", characters(n), MinDescription, MaxDescription)
		}
	}
	if required("version", m.Version) && !semverRe.MatchString(m.Version) {
		v.merr("version", "version %q is not a semantic version such as 1.2.0", m.Version)
	}
	required("author", m.Author)
	if m.Icon != "" && !contains(Icons, m.Icon) {
		v.mwarn("icon", "icon %q is not one of the host's icons (%s)", m.Icon, strings.Join(Icons, ", "))
	}
	seen := map[string]bool{}
	for i, s := range m.Campus {
		path := fmt.Sprintf("campus[%d]", i)
		switch {
		case !IsCampusService(s):
			v.merr(path, "unknown campus service %q (known: %s)", s, strings.Join(CampusServices, ", "))
		case seen["c:"+s]:
			v.merr(path, "campus service %q is listed twice", s)
		}
		seen["c:"+s] = true
	}
	for i, h := range m.Network {
		path := fmt.Sprintf("network[%d]", i)
		if err := CheckHost(h); err != nil {
			v.merr(path, "network: %v", err)
		} else if seen["n:"+h] {
			v.merr(path, "network host %q is listed twice", h)
		}
		seen["n:"+h] = true
	}
	for i, a := range m.Abilities {
		path := fmt.Sprintf("abilities[%d]", i)
		switch {
		case AbilityGroup(a) == nil:
			var names []string
			for _, g := range Abilities {
				names = append(names, g.Group)
			}
			v.merr(path, "unknown ability %q (known: %s)%s", a, strings.Join(names, ", "), suggest(a, names))
		case seen["a:"+a]:
			v.merr(path, "ability %q is listed twice", a)
		}
		seen["a:"+a] = true
	}
	if len(m.Tools) == 0 && m.Remote == nil {
		if _, ok := m.Pos["tools"]; ok {
			v.merr("tools", "tools is empty; a plugin needs at least one tool")
		} else {
			v.merr("tools", "missing required field tools (a map from tool name to its file)")
		}
	}
	for _, t := range m.Tools {
		if !toolNameRe.MatchString(t.Name) {
			v.merr("tools."+t.Name, "tool name %q must be ASCII lowerCamel: ^[a-z][a-zA-Z0-9]{0,39}$", t.Name)
		}
	}
	for _, list := range [][]*FileRef{m.Widgets, m.Screens} {
		for _, f := range list {
			if !identRe.MatchString(f.Name) {
				v.d.errorf(ManifestFile, f.Pos, "", "name %q must be letters, digits and _", f.Name)
			}
		}
	}
	for i, s := range m.Settings {
		path := fmt.Sprintf("settings[%d]", i)
		if s.Screen == "" {
			v.merr(path, "%s needs screen: the screen the row opens", path)
		} else if findFile(m.Screens, s.Screen) == nil {
			v.merr(path+".screen", "%s.screen: no screen %q in screens", path, s.Screen)
		}
		if s.Title == "" {
			v.merr(path, "%s needs title", path)
		}
	}
	for _, c := range m.Commands {
		path := "commands." + c.Name
		if !commandRe.MatchString(c.Name) {
			v.merr(path, "command name %q must match ^[a-z][a-z0-9-]*$", c.Name)
		}
		if c.Description == "" {
			v.merr(path, "command %s needs description: the line shown in the / menu", c.Name)
		}
		actions := 0
		for _, s := range []string{c.Prompt, c.Screen, c.Tool} {
			if s != "" {
				actions++
			}
		}
		if actions != 1 {
			v.merr(path, "command %s needs exactly one of prompt, screen and tool", c.Name)
		}
		if c.Screen != "" && findFile(m.Screens, c.Screen) == nil {
			v.merr(path+".screen", "command %s: no screen %q in screens", c.Name, c.Screen)
		}
		if c.Tool != "" && findRef(m.Tools, c.Tool) == nil {
			v.merr(path+".tool", "command %s: no tool %q in tools", c.Name, c.Tool)
		}
		if c.Args != nil && c.Tool == "" {
			v.merr(path+".args", "command %s: args go with tool", c.Name)
		}
		if t := v.p.Tool(c.Tool); t != nil {
			for _, problem := range argProblems(t, c.Args) {
				v.merr(path+".args", "command %s: %s", c.Name, problem)
			}
		}
	}
	seenMode := map[Effect]bool{}
	for _, dm := range m.DefaultModes {
		path := "defaultModes." + dm.Effect.String()
		if !contains(Modes, dm.Mode) {
			v.merr(path, "defaultModes.%s must be auto, ask or deny, not %q", dm.Effect, dm.Mode)
		}
		seenMode[dm.Effect] = true
	}
	if r := m.Remote; r != nil {
		if r.MCP == "" {
			v.merr("remote", "remote needs mcp: the https URL of the MCP endpoint")
		} else if u, err := url.Parse(r.MCP); err != nil || u.Scheme != "https" || u.Host == "" {
			v.merr("remote.mcp", "remote.mcp must be an https URL")
		}
		if r.Auth != "" && r.Auth != "none" && r.Auth != "bearer" {
			v.merr("remote.auth", "remote.auth must be none or bearer, not %q", r.Auth)
		}
	}
	if c := m.Cloud; c != nil {
		if _, ok := m.Pos["cloud.protocol"]; ok && c.Protocol != 1 {
			v.merr("cloud.protocol", "cloud.protocol must be 1")
		}
		for _, u := range c.Uses {
			if !contains(CloudServices, u) {
				v.merr("cloud.uses", "cloud.uses: unknown service %q (known: %s)", u, strings.Join(CloudServices, ", "))
			}
		}
		v.cloudFunctions()
		if (len(c.Uses) > 0 || m.Server != nil || len(c.Functions) > 0) && len(c.DisclosureZh) == 0 {
			v.merr("cloud.disclosure", "cloud.disclosure.zh is required: say in plain words what data leaves the device")
		}
		if len(c.DisclosureEn) > 0 && len(c.DisclosureEn) != len(c.DisclosureZh) {
			v.merr("cloud.disclosure.en", "cloud.disclosure.en has %d and zh has %d lines; they must match line by line", len(c.DisclosureEn), len(c.DisclosureZh))
		}
		switch c.BackendKind {
		case "":
			if c.BackendURL != "" {
				v.merr("cloud.backend", "cloud.backend needs kind: external")
			}
		case "external":
			if u, err := url.Parse(c.BackendURL); err != nil || u.Scheme != "https" || u.Host == "" {
				v.merr("cloud.backend.url", "cloud.backend.url must be an https URL")
			}
		default:
			v.merr("cloud.backend.kind", "cloud.backend.kind must be external, not %q", c.BackendKind)
		}
	}
	if m.Server != nil && m.Cloud == nil {
		v.merr("server", "a plugin with server: must declare cloud.disclosure: what data leaves the device")
	}
}

// CheckHost checks a network entry: "example.com" or "*.example.com", lower case, no scheme,
// port or path (seed "network lists the public hosts … written as example.com or
// *.example.com").
func CheckHost(h string) error {
	switch {
	case h == "":
		return fmt.Errorf("empty host")
	case strings.Contains(h, "://"):
		return fmt.Errorf("%q: write the host only, without the scheme (only https is used)", h)
	case strings.ContainsAny(h, "/?#"):
		return fmt.Errorf("%q: write the host only, without a path", h)
	case strings.Contains(h, ":"):
		return fmt.Errorf("%q: write the host only, without a port", h)
	case strings.ToLower(h) != h:
		return fmt.Errorf("%q: write host names in lower case", h)
	}
	name := strings.TrimPrefix(h, "*.")
	if strings.Contains(name, "*") {
		return fmt.Errorf("%q: a wildcard must be the whole first label, as in *.example.com", h)
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return fmt.Errorf("%q is not a public host name (write example.com or *.example.com)", h)
	}
	for _, l := range labels {
		if !hostLabelRe.MatchString(l) {
			return fmt.Errorf("%q is not a valid host name", h)
		}
	}
	if tld := labels[len(labels)-1]; tld[0] >= '0' && tld[0] <= '9' {
		return fmt.Errorf("%q: write a host name, not an IP address", h)
	}
	return nil
}

// HostAllowed reports whether host matches one of the network entries: an exact name, or a
// subdomain of a "*." entry (not its apex; docs/DECISIONS.md §6).
func HostAllowed(host string, network []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, n := range network {
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
		} else if host == n {
			return true
		}
	}
	return false
}

func findFile(list []*FileRef, name string) *FileRef {
	for _, f := range list {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func findRef(list []*ToolRef, name string) *ToolRef {
	for _, r := range list {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// toolCtx is what checking one tool's steps needs.
type toolCtx struct {
	t      *Tool
	server bool
	base   map[string]string // names always in scope → what they are
	calls  []*Step
}

func (v *validator) terr(t *Tool, path, step, format string, args ...any) {
	v.d.errorf(t.File, t.Pos.At(path), step, format, args...)
}

func (v *validator) terrAt(t *Tool, p diag.Pos, step, format string, args ...any) {
	v.d.errorf(t.File, p, step, format, args...)
}

func (v *validator) tool(t *Tool, sf *ServerFunction) {
	tc := &toolCtx{t: t, server: sf != nil, base: map[string]string{}}
	for _, n := range []string{"input", "constants", "now"} {
		tc.base[n] = "a name the language binds"
	}
	if tc.server {
		tc.base["secrets"] = "a name the language binds"
		tc.base["caller"] = "a name the language binds"
	}
	if t.AllConstants != nil {
		for _, k := range t.AllConstants.Keys() {
			if !contains(languageNames, k) {
				tc.base[k] = "a constant"
			}
		}
	}
	if t.Constants != nil {
		for _, k := range t.Constants.Keys() {
			if contains(languageNames, k) {
				v.terr(t, "constants."+k, "", "constant %q clashes with a name the language binds; rename it", k)
			}
		}
	}
	if t.Env != nil {
		for _, fn := range t.Env.Functions() {
			tc.base[fn] = "a function"
		}
	}
	if !tc.server {
		if t.Title == "" {
			v.terr(t, "title", "", "tool %s needs title: its name shown to users", t.Name)
		} else if n := runes(t.Title); n > MaxTitle {
			v.terr(t, "title", "", "title has %s; the limit is %d", characters(n), MaxTitle)
		}
		if n := runes(t.Summary); n > MaxSummary {
			v.terr(t, "summary", "", "summary has %s; the limit is %d", characters(n), MaxSummary)
		}
		if t.Description == "" {
			v.terr(t, "description", "", "tool %s needs description: what the model should know to use it", t.Name)
		}
	}
	if _, written := t.Pos["effect"]; !written && !t.Effect.valid() {
		v.terr(t, "", "", "tool %s needs effect: read, write, money or public", t.Name)
	}
	for _, in := range t.Input {
		v.input(t, in, "input."+in.Name)
	}
	for _, fn := range t.Functions {
		v.function(t.Env, tc.base, fn)
	}
	sc := newScope()
	sc = v.steps(tc, t.Steps, sc)
	if t.Return != nil {
		v.checkExpr(tc, t.Return, "", "return", sc)
	}
	if sf != nil {
		if sf.Access != "user" && sf.Access != "public" {
			v.terr(t, "access", "", "access must be user or public (peer, group and webhook are not supported), not %q", sf.Access)
		}
	}
	v.toolCalls[t] = tc.calls
}

// function checks one function body as it was defined in env, so that it sees only the
// functions defined before it. A function runs with its caller's variables; statically it may
// rely on input, constants (each by name) and now, besides its parameters.
func (v *validator) function(env *expr.Env, base map[string]string, fn *Function) {
	if fn.Body == nil || fn.Body.Expr == nil || env == nil {
		return
	}
	if contains(languageNames, fn.Name) {
		v.d.errorf(fn.Body.File, fn.Body.Pos, "", "function name %q clashes with a name the language binds", fn.Name)
	}
	x := env.Function(fn.Name)
	if x == nil || x.Source() != fn.Body.Src {
		return // Define refused it; the loader said why
	}
	inScope := func(name string) bool {
		if name == "input" || name == "constants" || name == "now" {
			return true
		}
		return base[name] == "a constant"
	}
	for _, e := range x.Check(inScope) {
		v.d.errorf(fn.Body.File, fn.Body.FilePos(e.Pos), "", "functions.%s: %s", fn.Name, e.Msg)
	}
}

// shared checks the shared constants and functions once, in their own file.
func (v *validator) shared() {
	sh := v.p.Shared
	if sh == nil {
		return
	}
	base := map[string]string{}
	if sh.Constants != nil {
		for _, k := range sh.Constants.Keys() {
			if contains(languageNames, k) {
				v.d.errorf(sh.src, sh.Pos.At("constants."+k), "", "constant %q clashes with a name the language binds; rename it", k)
				continue
			}
			base[k] = "a constant"
		}
	}
	for _, fn := range sh.Functions {
		v.function(v.p.Env, base, fn)
	}
}

func (v *validator) input(t *Tool, in *InputField, path string) {
	if in == nil {
		return
	}
	at := func(sub string) string { return path + "." + sub }
	if in.Type == "" {
		switch _, typed := t.Pos[at("type")]; {
		case typed:
		case len(in.Enum) > 0:
			hint := ""
			for _, e := range in.Enum {
				if _, ok := e.(bool); ok {
					for _, e := range in.Enum {
						if hint == "" {
							hint = boolHint("boolean", e)
						}
					}
					break
				}
			}
			if hint == "" {
				hint = "; write type"
			}
			v.terr(t, at("enum"), "", "%s.enum mixes types%s", path, hint)
		default:
			v.terr(t, path, "", "%s needs type (string, number, integer, boolean, array or object) or an enum", path)
		}
		return
	}
	if !contains(InputTypes, in.Type) {
		v.terr(t, at("type"), "", "%s.type must be one of %s, not %q", path, strings.Join(InputTypes, ", "), in.Type)
		return
	}
	for i, e := range in.Enum {
		if !typeMatches(in.Type, e) {
			v.terr(t, at("enum"), "", "%s.enum[%d] (%s) is not a %s%s", path, i, expr.TypeOf(e), in.Type, boolHint(in.Type, e))
		}
	}
	if in.HasDefault {
		switch {
		case !typeMatches(in.Type, in.Default):
			v.terr(t, at("default"), "", "%s.default (%s) is not a %s%s", path, expr.TypeOf(in.Default), in.Type, boolHint(in.Type, in.Default))
		case len(in.Enum) > 0 && !enumHas(in.Enum, in.Default):
			v.terr(t, at("default"), "", "%s.default is not one of the enum values", path)
		}
	}
	bounded := in.Type == "number" || in.Type == "integer" || in.Type == "string" || in.Type == "array"
	if (in.Min != nil || in.Max != nil) && !bounded {
		v.terr(t, path, "", "%s: min and max apply to numbers, integers, strings and arrays, not %s", path, in.Type)
	}
	if in.Min != nil && in.Max != nil && *in.Min > *in.Max {
		v.terr(t, at("min"), "", "%s.min (%g) is greater than max (%g)", path, *in.Min, *in.Max)
	}
	if in.Type == "string" || in.Type == "array" {
		for _, b := range []*float64{in.Min, in.Max} {
			if b != nil && (*b < 0 || *b != float64(int64(*b))) {
				v.terr(t, path, "", "%s: a length bound must be a whole number ≥ 0", path)
			}
		}
	}
	if in.HasDefault && bounded {
		if n, ok := measure(in.Type, in.Default); ok {
			if (in.Min != nil && n < *in.Min) || (in.Max != nil && n > *in.Max) {
				v.terr(t, at("default"), "", "%s.default is outside min/max", path)
			}
		}
	}
	if in.Pattern != "" {
		if in.Type != "string" {
			v.terr(t, at("pattern"), "", "%s.pattern applies to strings only", path)
		} else if t.Env != nil {
			if re, err := t.Env.Regexp(in.Pattern); err != nil {
				v.terr(t, at("pattern"), "", "%s.pattern: %v", path, err)
			} else if in.HasDefault {
				if s, ok := in.Default.(string); ok && !re.MatchString(s) {
					v.terr(t, at("default"), "", "%s.default does not match pattern", path)
				}
			}
		}
	}
	if in.Trim && in.Type != "string" {
		v.terr(t, at("trim"), "", "%s.trim applies to strings only", path)
	}
	if in.Items != nil {
		if in.Type != "array" {
			v.terr(t, at("items"), "", "%s.items applies to arrays only", path)
		}
		v.input(t, in.Items, at("items"))
	}
}

// boolHint is the hint of fileDec.boolean for a value where typ asks for a boolean: YAML 1.2 reads
// yes, no, on and off as strings. It is "" for any other value or type.
func boolHint(typ string, v any) string {
	s, ok := v.(string)
	if typ != "boolean" || !ok {
		return ""
	}
	switch strings.ToLower(s) {
	case "yes", "no", "on", "off", "y", "n":
		return fmt.Sprintf("; %q is a string in YAML 1.2 (write true or false)", s)
	}
	return ""
}

func typeMatches(typ string, v any) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(*expr.Object)
		return ok
	}
	return false
}

func enumHas(enum []any, v any) bool {
	for _, e := range enum {
		if expr.Equal(e, v) {
			return true
		}
	}
	return false
}

func measure(typ string, v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, typ == "number" || typ == "integer"
	case string:
		return float64(utf8.RuneCountInString(x)), typ == "string"
	case []any:
		return float64(len(x)), typ == "array"
	}
	return 0, false
}

// scope is the set of names a step may use besides the tool's base names: lets bound so far
// (name → the step that bound it) and names the language binds in this place (item, error …).
// Scopes form a chain: a branch or body is a child that sees its parents' names; copying is
// free, so checking stays linear in the number of steps.
type scope struct {
	parent *scope
	bound  []binding // a step binds a handful of names: a slice beats a map
	extra  []string
}

// binding is a name bound in a scope and where it was bound.
type binding struct{ name, where string }

func newScope() *scope { return &scope{} }

// child returns a scope that sees s's names and binds its own.
func (s *scope) child(extra ...string) *scope { return &scope{parent: s, extra: extra} }

// lookup returns where name was bound (or "here" for a language name) and whether it is in
// scope.
func (s *scope) lookup(name string) (string, bool) {
	for x := s; x != nil; x = x.parent {
		for i := range x.bound {
			if x.bound[i].name == name {
				return x.bound[i].where, true
			}
		}
		for _, e := range x.extra {
			if e == name {
				return "", true
			}
		}
	}
	return "", false
}

func (s *scope) isExtra(name string) bool {
	for x := s; x != nil; x = x.parent {
		if contains(x.extra, name) {
			return true
		}
	}
	return false
}

func (s *scope) bind(name, where string) {
	for i := range s.bound {
		if s.bound[i].name == name {
			s.bound[i].where = where
			return
		}
	}
	s.bound = append(s.bound, binding{name, where})
}

// union adds the names bound in branch (a child of s) to s.
func (s *scope) union(branch *scope) {
	for _, b := range branch.bound {
		if _, ok := s.lookup(b.name); !ok {
			s.bind(b.name, b.where)
		}
	}
}

func (v *validator) inScope(tc *toolCtx, sc *scope) func(string) bool {
	return func(name string) bool {
		if _, ok := tc.base[name]; ok {
			return true
		}
		_, ok := sc.lookup(name)
		return ok
	}
}

func (v *validator) checkExpr(tc *toolCtx, f *ExprField, step, what string, sc *scope) {
	if f == nil || f.Expr == nil {
		return
	}
	for _, e := range f.Expr.Check(v.inScope(tc, sc)) {
		v.d.errorf(f.File, f.FilePos(e.Pos), step, "%s: %s", what, e.Msg)
	}
}

func (v *validator) checkTemplate(tc *toolCtx, f *TemplateField, step, what string, sc *scope) {
	if f == nil || f.Tmpl == nil {
		return
	}
	for _, e := range f.Tmpl.Check(v.inScope(tc, sc)) {
		v.d.errorf(f.File, f.FilePos(e.Pos), step, "%s: %s", what, e.Msg)
	}
}

// steps checks a list of steps in order and returns the scope after them.
func (v *validator) steps(tc *toolCtx, steps []*Step, sc *scope) *scope {
	for _, s := range steps {
		sc = v.step(tc, s, sc)
	}
	return sc
}

// needsLet lists the step kinds whose result must be bound.
var needsLet = map[StepKind]bool{
	StepValue: true, StepRequest: true, StepEach: true, StepPaginate: true, StepExtract: true, StepCache: true,
}

func (v *validator) step(tc *toolCtx, s *Step, sc *scope) *scope {
	t, path := tc.t, s.Path
	errf := func(format string, args ...any) { v.terrAt(t, s.Pos, path, format, args...) }
	if needsLet[s.Kind] && s.Let == "" {
		errf("%s step needs let: the name of its result", article(s.Kind))
	}
	if s.Kind == StepKV && s.KV == "get" && s.Let == "" {
		v.d.warnf(t.File, s.Pos, path, "kv: get without let discards the value")
	}
	switch s.As {
	case "", "json", "text", "html", "response":
	default:
		v.terrAt(t, s.at("as"), path, "as must be json, text, html or response, not %q", s.As)
	}
	switch s.Kind {
	case StepValue:
		v.checkExpr(tc, s.Value, path, "value", sc)
	case StepRequest:
		v.request(tc, s, s.Request, "request", sc)
	case StepEach:
		v.checkExpr(tc, s.Each, path, "each", sc)
		if n, ok := constantLen(tc.t, s.Each); ok && n > MaxEachItems {
			v.terrAt(t, s.Each.Pos, path, "each: %d items, the limit is %d", n, MaxEachItems)
		}
		if s.Concurrency < 1 || s.Concurrency > MaxConcurrency {
			v.terrAt(t, s.at("concurrency"), path, "concurrency must be 1 to %d, not %d", MaxConcurrency, s.Concurrency)
		}
		body := sc.child("item", "index")
		if s.Request != nil {
			v.request(tc, s, s.Request, "request", body)
		}
		v.checkExpr(tc, s.Value, path, "value", body)
		if len(s.Steps) > 0 {
			inner := v.steps(tc, s.Steps, body.child())
			v.checkExpr(tc, s.Return, path, "return", inner)
		}
	case StepPaginate:
		if pg := s.Paginate; pg != nil {
			v.request(tc, s, pg.Request, "paginate.request", sc)
			pageScope := sc.child("page", "pageIndex", "items")
			v.checkExpr(tc, pg.Next, path, "paginate.next", pageScope)
			v.checkExpr(tc, pg.Items, path, "paginate.items", pageScope)
			v.nextMethod(t, pg.Next, path)
			if pg.Max < 1 || pg.Max > MaxPages {
				v.terrAt(t, s.at("paginate"), path, "paginate.max must be 1 to %d, not %d", MaxPages, pg.Max)
			}
		}
	case StepExtract:
		if ex := s.Extract; ex != nil {
			v.checkExpr(tc, ex.From, path, "extract.from", sc)
			v.extract(tc, s, ex)
		}
		if s.Limit < 0 {
			v.terrAt(t, s.at("limit"), path, "limit must be 0 (no cap) or more")
		}
	case StepIf:
		v.checkExpr(tc, s.If, path, "if", sc)
		thenScope := v.steps(tc, s.Then, sc.child())
		elseScope := v.steps(tc, s.Else, sc.child())
		sc.union(thenScope)
		sc.union(elseScope)
	case StepCheck:
		v.checkExpr(tc, s.Check, path, "check", sc)
		v.checkTemplate(tc, s.Error, path, "error", sc)
	case StepTry:
		tryScope := v.steps(tc, s.Try, sc.child())
		catchScope := v.steps(tc, s.Catch, sc.child("error"))
		sc.union(tryScope)
		sc.union(catchScope)
	case StepKV:
		v.checkTemplate(tc, s.Key, path, "key", sc)
		v.checkExpr(tc, s.Value, path, "value", sc)
	case StepCache:
		if c := s.Cache; c != nil {
			v.checkTemplate(tc, c.Key, path, "cache.key", sc)
		}
		inner := v.steps(tc, s.Steps, sc.child())
		v.checkExpr(tc, s.Return, path, "return", inner)
	case StepCall:
		v.checkExpr(tc, s.Input, path, "input", sc)
		if tc.server {
			errf("server functions cannot call tools")
		} else if s.Call != "" {
			tc.calls = append(tc.calls, s)
		}
	case StepAbility:
		v.checkExpr(tc, s.Args, path, "args", sc)
		v.ability(tc, s)
	}
	if s.Let != "" {
		v.bind(tc, s, sc)
	}
	return sc
}

// bind adds a step's let to the scope, refusing names that are taken (docs/DECISIONS.md §4).
func (v *validator) bind(tc *toolCtx, s *Step, sc *scope) {
	name := s.Let
	errf := func(format string, args ...any) { v.terrAt(tc.t, s.Pos, s.Path, format, args...) }
	switch {
	case !identRe.MatchString(name) || reservedWords[name]:
		errf("let %q is not a valid name (letters, digits, _ and $, not a keyword)", name)
		return
	case sc.isExtra(name):
		errf("let %s would hide %s, which the language binds here; choose another name", name, name)
		return
	}
	if what, ok := tc.base[name]; ok {
		errf("let %s: %s is already %s; choose another name", name, name, what)
		return
	}
	if where, ok := sc.lookup(name); ok && where != "" {
		errf("let %s: %s is already bound by %s (a name may be bound once, except in then/else and try/catch)", name, name, where)
		return
	}
	if v.builtins[name] {
		v.d.warnf(tc.t.File, s.Pos, s.Path, "let %s hides the standard-library function %s", name, name)
	}
	sc.bind(name, s.Path)
}

// request checks a request's templates and, where they are literal, its URL against campus and
// network (docs/DECISIONS.md §6).
func (v *validator) request(tc *toolCtx, s *Step, r *Request, what string, sc *scope) {
	if r == nil {
		return
	}
	t, path := tc.t, s.Path
	v.checkTemplate(tc, r.URL, path, what+".url", sc)
	for _, tv := range []struct {
		name string
		v    *TemplateValue
	}{{"query", r.Query}, {"headers", r.Headers}, {"json", r.JSON}, {"form", r.Form}} {
		tv.v.templates(func(f *TemplateField) { v.checkTemplate(tc, f, path, what+"."+tv.name, sc) })
	}
	v.checkTemplate(tc, r.Body, path, what+".body", sc)
	if r.Timeout > MaxTimeoutSeconds*1e9 {
		v.terrAt(t, r.Pos, path, "%s.timeout is more than the run's %d s", what, MaxTimeoutSeconds)
	}
	network := v.m.Network
	if tc.server && v.m.Server != nil {
		network = v.m.Server.Network
	}
	if r.Campus != "" {
		switch {
		case tc.server:
			v.terrAt(t, r.Pos, path, "server functions never get campus access")
		case !IsCampusService(r.Campus):
			v.terrAt(t, r.Pos, path, "%s.campus: unknown campus service %q", what, r.Campus)
		case !contains(v.m.Campus, r.Campus):
			v.terrAt(t, r.Pos, path, "%s.campus: %s is not in the manifest's campus list", what, r.Campus)
		}
	}
	if r.URL == nil {
		return
	}
	lit := r.URL.Src
	if i := strings.Index(lit, "${"); i >= 0 {
		lit = lit[:i]
	}
	at := r.URL.Pos
	switch {
	case r.Campus != "":
		if lit != "" && !strings.HasPrefix(lit, "/") {
			v.terrAt(t, at, path, "%s.url: with campus, url is a path on that service starting with /", what)
		}
	case strings.HasPrefix(lit, "http://"):
		v.terrAt(t, at, path, "%s.url: only https is allowed", what)
	case lit == r.URL.Src || strings.Count(lit, "/") >= 3:
		// The host is literal: check it.
		u, err := url.Parse(r.URL.Src[:len(lit)])
		if err != nil || u.Scheme != "https" || u.Host == "" {
			switch {
			case strings.HasPrefix(lit, "/"):
				v.terrAt(t, at, path, "%s.url: a path needs campus: <service>; otherwise write an https URL", what)
			case !strings.Contains(lit, "/"):
				v.terrAt(t, at, path, "%s.url must be an absolute https URL on a network host (url is a template: write ${%s} to use an expression)", what, lit)
			default:
				v.terrAt(t, at, path, "%s.url must be an absolute https URL on a network host", what)
			}
			return
		}
		if !HostAllowed(u.Hostname(), network) {
			list := "network"
			if tc.server {
				list = "server.network"
			}
			v.terrAt(t, at, path, "%s.url: host %s is not in %s", what, u.Hostname(), list)
		}
	}
}

// Pipes are the extract pipes and whether each takes an argument (docs/DECISIONS.md §6).
var Pipes = map[string]string{
	"text": "none", "html": "none", "attr": "required", "url": "none", "num": "none", "int": "none",
	"date": "optional", "match": "required", "trim": "none", "lower": "none", "upper": "none",
}

func (v *validator) extract(tc *toolCtx, s *Step, ex *Extract) {
	t := tc.t
	if ex.Each != "" {
		if _, err := cascadia.ParseGroup(ex.Each); err != nil {
			v.terrAt(t, s.at("extract.each"), s.Path, "extract.each: bad CSS selector %q: %v", ex.Each, err)
		}
	}
	for _, f := range ex.Fields {
		if f.Selector != "" && f.Selector != "." {
			if _, err := cascadia.ParseGroup(f.Selector); err != nil {
				v.terrAt(t, f.Pos, s.Path, "extract.fields.%s: bad CSS selector %q: %v", f.Name, f.Selector, err)
			}
		}
		for _, p := range f.Pipes {
			arg, ok := Pipes[p.Name]
			switch {
			case !ok:
				v.terrAt(t, f.Pos, s.Path, "extract.fields.%s: unknown pipe %q (known: text, html, attr NAME, url, num, int, date [LAYOUT], match REGEX, trim, lower, upper)", f.Name, p.Name)
			case arg == "required" && p.Arg == "":
				v.terrAt(t, f.Pos, s.Path, "extract.fields.%s: pipe %s needs an argument", f.Name, p.Name)
			case arg == "none" && p.Arg != "":
				v.terrAt(t, f.Pos, s.Path, "extract.fields.%s: pipe %s takes no argument", f.Name, p.Name)
			case p.Name == "match" && t.Env != nil:
				if _, err := t.Env.Regexp(p.Arg); err != nil {
					v.terrAt(t, f.Pos, s.Path, "extract.fields.%s: match: %v", f.Name, err)
				}
			}
		}
	}
}

func (v *validator) ability(tc *toolCtx, s *Step) {
	t := tc.t
	errf := func(format string, args ...any) { v.terrAt(t, s.Pos, s.Path, format, args...) }
	if s.Ability == "" {
		return
	}
	if !tc.server && s.Ability == "cloud.call" {
		v.cloudCallFn(t, s)
	}
	if s.Op == "" {
		errf("ability must be written group.op, such as todos.add")
		return
	}
	var op AbilityOp
	found := false
	if tc.server {
		for _, o := range ServerAbilities {
			if o.Name() == s.Ability {
				op, found = o, true
			}
		}
		if !found {
			errf("unknown server ability %q (server functions have kv.get, kv.set, kv.delete, crypto.sha256, crypto.hmacSha256, crypto.randomId)", s.Ability)
			return
		}
	} else {
		g := AbilityGroup(s.Group)
		if g == nil {
			errf("unknown ability %q", s.Ability)
			return
		}
		op, found = LookupAbility(s.Ability)
		if !found {
			var ops []string
			for _, o := range g.Ops {
				ops = append(ops, o.Op)
			}
			errf("%s has no operation %q (it has %s)%s", s.Group, s.Op, strings.Join(ops, ", "), suggest(s.Op, ops))
			return
		}
		if !contains(v.m.Abilities, s.Group) {
			errf("ability %s: add %s to the manifest's abilities", s.Ability, s.Group)
		}
	}
	if t.Effect != 0 && !t.Effect.AtLeast(op.Effect) {
		errf("ability %s is a %s operation; a %s tool cannot call it (declare effect: %s or stronger)", s.Ability, op.Effect, t.Effect, op.Effect)
	}
}

// calls checks call steps: the callee exists, its effect is not stronger than the caller's, and
// calls form no cycle (docs/DECISIONS.md §6).
func (v *validator) calls() {
	byName := map[string]*Tool{}
	for _, t := range v.p.Tools {
		byName[t.Name] = t
	}
	for _, t := range v.p.Tools {
		for _, s := range v.toolCalls[t] {
			callee := byName[s.Call]
			switch {
			case callee == nil && findRef(v.m.Tools, s.Call) != nil:
				// The callee did not load; the loader said why.
			case callee == nil:
				names := make([]string, 0, len(byName))
				for _, x := range v.p.Tools {
					names = append(names, x.Name)
				}
				v.terrAt(t, s.Pos, s.Path, "call: no tool %q in this plugin%s", s.Call, suggest(s.Call, names))
			case callee.Effect != 0 && t.Effect != 0 && !t.Effect.AtLeast(callee.Effect):
				v.terrAt(t, s.Pos, s.Path, "call: %s is a %s tool; a %s tool cannot call it", s.Call, callee.Effect, t.Effect)
			case callee.UserOnly && !t.UserOnly:
				// A call runs as the caller's actor, so this call fails whenever the agent or the
				// scheduler runs t; mark t userOnly too, or call something else.
				v.d.warnf(t.File, s.Pos, s.Path, "call: %s is userOnly but %s is not: when the assistant or a scheduled task runs %s, this call is refused (make %s userOnly too)", s.Call, t.Name, t.Name, t.Name)
			}
		}
	}
	// Cycles: depth-first search; report each cycle once, at the call that closes it.
	const (
		white = iota
		grey
		black
	)
	color := map[*Tool]int{}
	var stack []*Tool
	var visit func(t *Tool)
	visit = func(t *Tool) {
		color[t] = grey
		stack = append(stack, t)
		for _, s := range v.toolCalls[t] {
			callee := byName[s.Call]
			if callee == nil {
				continue
			}
			switch color[callee] {
			case grey:
				var names []string
				start := 0
				for i, x := range stack {
					if x == callee {
						start = i
					}
				}
				for _, x := range stack[start:] {
					names = append(names, x.Name)
				}
				names = append(names, callee.Name)
				v.terrAt(t, s.Pos, s.Path, "call: calls form a cycle: %s", strings.Join(names, " → "))
			case white:
				visit(callee)
			}
		}
		stack = stack[:len(stack)-1]
		color[t] = black
	}
	for _, t := range v.p.Tools {
		if color[t] == white {
			visit(t)
		}
	}
}

func (v *validator) dataSources() {
	for _, ds := range v.m.DataSources {
		path := "dataSources." + ds.Name
		switch {
		case ds.Tool != "" && ds.Fn != "":
			v.merr(path, "data source %s takes tool or fn, not both", ds.Name)
		case ds.Tool == "" && ds.Fn == "":
			v.merr(path, "data source %s needs tool: the read tool that provides its data", ds.Name)
		case ds.Tool != "":
			t := v.p.Tool(ds.Tool)
			if t == nil {
				if findRef(v.m.Tools, ds.Tool) == nil {
					v.merr(path+".tool", "data source %s: no tool %q in tools", ds.Name, ds.Tool)
				}
				continue
			}
			if t.Effect != 0 && t.Effect != EffectRead {
				v.merr(path+".tool", "data source %s: tool %s is a %s tool; data sources read through read tools", ds.Name, ds.Tool, t.Effect)
			}
			for _, problem := range argProblems(t, ds.Args) {
				v.merr(path+".args", "data source %s: %s", ds.Name, problem)
			}
		case ds.Fn != "":
			switch {
			case v.m.Server != nil && serverFunction(v.m.Server, ds.Fn) == nil,
				v.m.Server == nil && (v.m.Cloud == nil || v.m.Cloud.Functions == nil):
				v.merr(path+".fn", "data source %s: no server function %q", ds.Name, ds.Fn)
			case !contains(v.m.CloudFunctions(), ds.Fn):
				v.merr(path+".fn", "data source %s: server function %q is not in cloud.functions", ds.Name, ds.Fn)
			}
		}
		if ds.TTL < 0 {
			v.merr(path+".ttl", "data source %s: ttl must not be negative", ds.Name)
		}
	}
}

// argProblems checks constant args (a data source's or command's) against a tool's input: a map
// naming only input fields, each of the field's type and among its enum, with every required
// field given.
func argProblems(t *Tool, args any) []string {
	var out []string
	obj, ok := args.(*expr.Object)
	if args != nil && !ok {
		return []string{fmt.Sprintf("args must be a map of tool %s's input", t.Name)}
	}
	if obj != nil {
		for _, k := range obj.Keys() {
			in := inputField(t, k)
			if in == nil {
				out = append(out, fmt.Sprintf("tool %s has no input %q", t.Name, k))
				continue
			}
			val, _ := obj.Get(k)
			switch {
			case val == nil:
			case in.Type != "" && contains(InputTypes, in.Type) && !typeMatches(in.Type, val):
				out = append(out, fmt.Sprintf("input %s of tool %s must be %s, not %s", k, t.Name, withArticle(in.Type), withArticle(expr.TypeOf(val))))
			case len(in.Enum) > 0 && !enumHas(in.Enum, val):
				out = append(out, fmt.Sprintf("input %s of tool %s must be one of its enum values", k, t.Name))
			}
		}
	}
	for _, in := range t.Input {
		given := false
		if obj != nil {
			v, ok := obj.Get(in.Name)
			given = ok && v != nil
		}
		if !given && !in.Optional && !in.HasDefault {
			out = append(out, fmt.Sprintf("tool %s needs input %s", t.Name, in.Name))
		}
	}
	return out
}

func inputField(t *Tool, name string) *InputField {
	for _, in := range t.Input {
		if in.Name == name {
			return in
		}
	}
	return nil
}

// cloudCallFn checks a cloud.call whose args name nothing (a constant such as
// "{ fn: 'stats', input: {} }"): its fn must be one of the plugin's callable server functions
// (Manifest.CloudFunctions), since the host refuses any other. Args that depend on the run are
// checked when the call is made.
func (v *validator) cloudCallFn(t *Tool, s *Step) {
	if s.Args == nil || s.Args.Expr == nil || len(s.Args.Expr.FreeNames()) > 0 {
		return
	}
	val, err := s.Args.Expr.Eval(context.Background(), expr.MapVars{}, expr.NewBudget(10_000))
	if err != nil {
		return
	}
	obj, ok := val.(*expr.Object)
	if !ok {
		return
	}
	fn, ok := obj.Get("fn")
	name, isStr := fn.(string)
	if !ok || !isStr {
		return
	}
	declared := v.m.CloudFunctions()
	if !contains(declared, name) {
		var uniq []string
		for _, d := range declared {
			if !contains(uniq, d) {
				uniq = append(uniq, d)
			}
		}
		list := "none"
		if len(uniq) > 0 {
			list = strings.Join(uniq, ", ")
		}
		v.terrAt(t, s.Args.Pos, s.Path, "ability cloud.call: fn %q is not a server function this plugin declares (cloud.functions or server.functions: %s)", name, list)
	}
}

// functionNameRe is the protocol's FunctionName (seed 003 API reference).
var functionNameRe = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]{0,63}$`)

// cloudFunctions checks cloud.functions (seed 003 "插件指南" §1): FunctionNames, each once;
// with a `server:` section each names one of its functions, and a server function left out of
// the list is reported (the host never calls it).
func (v *validator) cloudFunctions() {
	c, s := v.m.Cloud, v.m.Server
	if c.Functions == nil {
		return
	}
	seen := map[string]bool{}
	for i, name := range c.Functions {
		path := fmt.Sprintf("cloud.functions[%d]", i)
		switch {
		case !functionNameRe.MatchString(name):
			v.merr(path, "cloud.functions: %q is not a function name (^[a-zA-Z][a-zA-Z0-9_]{0,63}$)", name)
		case seen[name]:
			v.merr(path, "cloud.functions: %q is listed twice", name)
		case s != nil && serverFunction(s, name) == nil:
			have := make([]string, 0, len(s.Functions))
			for _, f := range s.Functions {
				have = append(have, f.Name)
			}
			v.merr(path, "cloud.functions: no server function %q in server.functions (it declares: %s)", name, strings.Join(have, ", "))
		}
		seen[name] = true
	}
	if s == nil {
		return
	}
	for _, f := range s.Functions {
		if !seen[f.Name] {
			v.mwarn("server.functions."+f.Name, "server function %s is not in cloud.functions: the host never calls it and a consent does not cover it", f.Name)
		}
	}
}

func serverFunction(s *Server, name string) *ServerFunction {
	for _, f := range s.Functions {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (v *validator) server() {
	s := v.m.Server
	for i, h := range s.Network {
		if err := CheckHost(h); err != nil {
			v.merr(fmt.Sprintf("server.network[%d]", i), "server.network: %v", err)
		}
	}
	for _, sec := range s.Secrets {
		if !secretRe.MatchString(sec) {
			v.merr("server.secrets", "secret name %q must be upper case: ^[A-Z][A-Z0-9_]*$", sec)
		}
	}
	for _, f := range s.Functions {
		if !toolNameRe.MatchString(f.Name) {
			v.merr("server.functions."+f.Name, "server function name %q must be ASCII lowerCamel", f.Name)
		}
		v.tool(f.Tool, f)
	}
}

// ui validates each widget and screen file with genui.Validate against the plugin's tools and
// data sources.
func (v *validator) ui() {
	ctx := genui.Context{Tools: map[string]genui.Tool{}, Functions: v.m.CloudFunctions()}
	for _, ds := range v.m.DataSources {
		ctx.DataSources = append(ctx.DataSources, ds.Name)
	}
	for _, t := range v.p.Tools {
		gt := genui.Tool{Effect: t.Effect.String(), UserOnly: t.UserOnly}
		for _, in := range t.Input {
			gt.Input = append(gt.Input, in.Name)
			if !in.Optional && !in.HasDefault {
				gt.Required = append(gt.Required, in.Name)
			}
		}
		ctx.Tools[t.Name] = gt
	}
	check := func(kind string, refs []*FileRef) {
		for _, ref := range refs {
			clean, err := checkRelPath(ref.File)
			if err != nil {
				continue
			}
			src, ok := v.p.Files[clean]
			if !ok {
				continue
			}
			if !utf8.Valid(src) {
				v.d.errorf(clean, newSource(clean, src).pos(firstInvalidUTF8(src)), "", "file is not UTF-8 text")
				continue
			}
			c := ctx
			c.Kind = kind
			for _, d := range genui.Validate(clean, src, c) {
				v.d.add(d)
			}
		}
	}
	check("widget", v.m.Widgets)
	check("screen", v.m.Screens)
}

// i18n checks i18n.en: it may only name existing tools (and widgets, screens, commands, data
// sources, settings); a missing English title or summary is a warning (docs/DECISIONS.md §7).
func (v *validator) i18n() {
	m := v.m
	if !v.decoded() {
		return
	}
	var en *Locale
	if m.I18n != nil {
		en = m.I18n.En
	}
	if en == nil {
		en = &Locale{}
	}
	texts := map[string]*ToolText{}
	for _, tt := range en.Tools {
		texts[tt.Name] = tt
		if findRef(m.Tools, tt.Name) == nil {
			v.d.errorf(ManifestFile, tt.Pos, "", "i18n.en.tools: no tool %q in tools", tt.Name)
		}
	}
	namesOf := func(refs []*FileRef) []string {
		var out []string
		for _, r := range refs {
			out = append(out, r.Name)
		}
		return out
	}
	checkNames := func(what string, list []*UIText, names []string) {
		for _, u := range list {
			if !contains(names, u.Name) {
				v.d.errorf(ManifestFile, u.Pos, "", "i18n.en.%s: no %s %q", what, strings.TrimSuffix(what, "s"), u.Name)
			}
		}
	}
	checkNames("widgets", en.Widgets, namesOf(m.Widgets))
	checkNames("screens", en.Screens, namesOf(m.Screens))
	var dsNames, settingNames []string
	for _, ds := range m.DataSources {
		dsNames = append(dsNames, ds.Name)
	}
	for _, s := range m.Settings {
		settingNames = append(settingNames, s.Screen)
	}
	checkNames("dataSources", en.DataSources, dsNames)
	checkNames("settings", en.Settings, settingNames)
	for _, c := range en.Commands {
		found := false
		for _, mc := range m.Commands {
			found = found || mc.Name == c.Name
		}
		if !found {
			v.d.errorf(ManifestFile, c.Pos, "", "i18n.en.commands: no command %q", c.Name)
		}
	}
	where := func(tool string) string {
		for _, p := range []string{"i18n.en.tools." + tool, "i18n.en.tools", "i18n.en", "i18n"} {
			if _, ok := m.Pos[p]; ok {
				return p
			}
		}
		return "tools." + tool
	}
	if m.I18n == nil || m.I18n.En == nil || en.Name == "" {
		v.mwarn(whereFirst(m.Pos, "i18n.en", "i18n", "name"), "i18n.en.name is missing: English users see the Chinese name")
	}
	if m.I18n == nil || m.I18n.En == nil || en.Description == "" {
		v.mwarn(whereFirst(m.Pos, "i18n.en", "i18n", "description"), "i18n.en.description is missing: English users see the Chinese description")
	}
	for _, t := range v.p.Tools {
		tt := texts[t.Name]
		if tt == nil || tt.Title == "" {
			v.mwarn(where(t.Name), "i18n.en.tools.%s.title is missing: English users see the Chinese title", t.Name)
		}
		if t.Summary != "" && (tt == nil || tt.Summary == "") {
			v.mwarn(where(t.Name), "i18n.en.tools.%s.summary is missing: English users see no summary line", t.Name)
		}
		if tt != nil {
			if n := runes(tt.Title); n > MaxTitle {
				v.merr("i18n.en.tools."+t.Name+".title", "i18n.en.tools.%s.title has %s; the limit is %d", t.Name, characters(n), MaxTitle)
			}
			if n := runes(tt.Summary); n > MaxSummary {
				v.merr("i18n.en.tools."+t.Name+".summary", "i18n.en.tools.%s.summary has %s; the limit is %d", t.Name, characters(n), MaxSummary)
			}
		}
	}
	if n := runes(en.Description); en.Description != "" && (n < MinDescription || n > MaxDescription) {
		v.merr("i18n.en.description", "i18n.en.description has %s; it must have %d to %d", characters(n), MinDescription, MaxDescription)
	}
	v.copyRules(en)
}

// copyRules warns about English text of i18n.en that breaks the English
// copy rules (seed 003 "英文文案规范", i18n.CheckEnglish). Instructions are
// for the model and are not checked.
func (v *validator) copyRules(en *Locale) {
	check := func(path, text string) {
		for _, p := range i18n.CheckEnglish(text) {
			v.mwarn(path, "%s: %s", path, p)
		}
	}
	check("i18n.en.name", en.Name)
	check("i18n.en.description", en.Description)
	for _, t := range en.Tools {
		check("i18n.en.tools."+t.Name+".title", t.Title)
		check("i18n.en.tools."+t.Name+".summary", t.Summary)
	}
	for what, list := range map[string][]*UIText{"widgets": en.Widgets, "screens": en.Screens, "settings": en.Settings, "dataSources": en.DataSources} {
		for _, u := range list {
			base := "i18n.en." + what + "." + u.Name
			check(base+".title", u.Title)
			check(base+".description", u.Description)
			check(base+".subtitle", u.Subtitle)
		}
	}
	for _, c := range en.Commands {
		base := "i18n.en.commands." + c.Name
		check(base+".description", c.Description)
		check(base+".argHint", c.ArgHint)
		for _, a := range c.Aliases {
			check(base+".aliases", a)
		}
	}
}

func whereFirst(pos Positions, paths ...string) string {
	for _, p := range paths {
		if _, ok := pos[p]; ok {
			return p
		}
	}
	return paths[len(paths)-1]
}

func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return fmt.Sprintf("%d characters", n)
}

// withArticle returns "a string", "an object", "an array", "an integer".
func withArticle(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// constantLen evaluates an each list that depends on constants only (a literal list, or a table
// in constants such as SOURCES) and returns its length. ok is false when the expression reads
// anything else, fails, or is not a list; the run then checks the limit.
func constantLen(t *Tool, f *ExprField) (int, bool) {
	if f == nil || f.Expr == nil || t.AllConstants == nil {
		return 0, false
	}
	vars := expr.MapVars{"constants": t.AllConstants}
	for _, name := range f.Expr.FreeNames() {
		if name == "constants" {
			continue
		}
		val, ok := t.AllConstants.Get(name)
		if !ok {
			return 0, false
		}
		vars[name] = val
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	val, err := f.Expr.Eval(ctx, vars, expr.NewBudget(10000))
	list, isList := val.([]any)
	if err != nil || !isList {
		return 0, false
	}
	return len(list), true
}

// noVars is the scope of an expression that names nothing.
type noVars struct{}

func (noVars) Lookup(string) (any, bool) { return nil, false }

// nextMethod checks a paginate next that names nothing (its value is known
// now): its method must be one of RequestMethods. A next computed from the
// page or the input is checked when it runs.
func (v *validator) nextMethod(t *Tool, f *ExprField, step string) {
	if f == nil || f.Expr == nil || len(f.Expr.FreeNames()) > 0 {
		return
	}
	val, err := f.Expr.Eval(context.Background(), noVars{}, expr.NewBudget(1000))
	o, ok := val.(*expr.Object)
	if err != nil || !ok {
		return // a failure shows when it runs, as for any expression
	}
	m, has := o.Get("method")
	if !has {
		return
	}
	if s, ok := m.(string); ok {
		if _, ok := RequestMethod(s); ok {
			return
		}
	}
	what := expr.Describe(m)
	if s, ok := m.(string); ok {
		what = strconv.Quote(s)
	}
	v.terrAt(t, f.Pos, step, "paginate.next.method must be GET, POST, PUT, PATCH, DELETE or HEAD, not %s", what)
}
