package host

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// KindBuiltin is Installed.Kind for a built-in plugin: Go code compiled
// into the app (seed 003 "内置插件", the definePlugin counterpart).
const KindBuiltin = "builtin"

// BuiltinSource is the source recorded for a built-in plugin and the prefix
// Review accepts for one ("builtin:focus").
const BuiltinSource = "builtin:"

// Builtin is one built-in plugin as the host runs it. Plugin describes it
// exactly as a loaded PLUGIN.md would (Manifest, Tools with their Input
// fields and flags, Instructions, Hash), so that listing, review, the
// permission rules, data sources, the agent's tool list and the audit log
// treat both kinds alike; its tools have no steps. Funcs holds the Go
// function of every tool, by tool name. Package host/builtin builds these
// values from typed Go definitions; Value is that package's own value (the
// UI contributions, i18n), which the host keeps but does not read.
type Builtin struct {
	Plugin *plugin.Plugin
	Funcs  map[string]BuiltinFunc
	Value  any
	// FormerIDs are ids this plugin had before a rename, and RenamedTools
	// maps its former tool names to current ones (seed 003 "改名或合并":
	// PluginDef.legacy), so that saved schedules, widgets and settings
	// that name the old ones keep working: Call runs the current tool.
	FormerIDs    []string
	RenamedTools map[string]string
	// PrivateTools names the tools whose results are the person's private data
	// (memories, to-dos, the timetable): an agent turn that read one asks
	// before a call that can reach a third party (Decide, TurnState.Private).
	PrivateTools []string
	// ReachingTools names the tools whose input can reach a website the
	// person did not review (plugins.tryTool runs a draft that may name any):
	// after untrusted or private data they ask (Reach.ThirdParty).
	ReachingTools []string
	// ReachingFields names, by tool, the input fields with which a call's
	// input can later reach any plugin's tool (a dashboard card bound to a tool
	// with its args): a call that sets one of them counts as reaching.
	ReachingFields map[string][]string
}

// privateTools is the PrivateTools of p when it is a built-in, nil otherwise.
func (h *Host) privateTools(p *plugin.Plugin) []string {
	if b := h.builtins[p.Manifest.ID]; b != nil && b.Plugin == p {
		return b.PrivateTools
	}
	return nil
}

// reaching reports whether a call of tool t of p with input in reaches out: a
// built-in tool in ReachingTools, or one whose input sets a ReachingFields
// field.
func (h *Host) reaching(p *plugin.Plugin, t *plugin.Tool, in any) bool {
	b := h.builtins[p.Manifest.ID]
	if b == nil || b.Plugin != p {
		return false
	}
	if slices.Contains(b.ReachingTools, t.Name) {
		return true
	}
	o, _ := in.(*expr.Object)
	for _, f := range b.ReachingFields[t.Name] {
		if v, ok := o.Get(f); ok && v != nil {
			return true
		}
	}
	return false
}

// BuiltinFunc runs one built-in tool. c.Input has been validated against
// the tool's Input fields (defaults filled in, strings trimmed) before it
// runs. The result is an expr value (nil, bool, float64, string, []any,
// *expr.Object). An error that is not an *interp.Error is reported as one
// of kind "tool".
type BuiltinFunc func(ctx context.Context, c *BuiltinCall) (any, error)

// KindTool is the interp.Error kind of a built-in tool's own failure.
const KindTool = "tool"

// BuiltinCall is what a built-in tool receives (seed 003 "内置插件": the
// tool context): who calls, the validated input, the host's clock reading
// for this call, the plugin's KV, the host abilities (to-dos, timetable,
// scheduler, notifications, open URL), the campus client and the Host.
type BuiltinCall struct {
	Actor     Actor
	Plugin    string
	Tool      *plugin.Tool
	Turn      string
	Input     *expr.Object
	Now       time.Time
	KV        interp.KV
	Abilities interp.Abilities
	Campus    interp.CampusClient
	Host      *Host
	// Untrusted is set by the function when this result carries text a
	// plugin other than a built-in wrote (a to-do a document added): the
	// result is then third-party data, marked and tainting the agent's
	// turn, as an untrusted tool's is.
	Untrusted bool
}

// WithBuiltins registers built-in plugins. New refuses two with one id, a
// built-in without a hash, and a tool without a function.
// InstallOfficial installs them (Official, source "builtin:ID").
func WithBuiltins(bs ...*Builtin) Option {
	return func(h *Host) { h.builtinList = append(h.builtinList, bs...) }
}

// registerBuiltins indexes the built-ins given to New.
func (h *Host) registerBuiltins() error {
	h.builtins = map[string]*Builtin{}
	for _, b := range h.builtinList {
		if b == nil || b.Plugin == nil || b.Plugin.Manifest == nil {
			return errors.New("host: a built-in plugin without a manifest")
		}
		id := b.Plugin.Manifest.ID
		if h.builtins[id] != nil {
			return fmt.Errorf("host: built-in plugin %s is registered twice", id)
		}
		if b.Plugin.Hash == "" {
			return fmt.Errorf("host: built-in plugin %s has no hash", id)
		}
		for _, t := range b.Plugin.Tools {
			if b.Funcs[t.Name] == nil {
				return fmt.Errorf("host: built-in tool %s.%s has no function", id, t.Name)
			}
		}
		h.builtins[id] = b
		h.loaded[b.Plugin.Hash] = b.Plugin
	}
	h.formerIDs = map[string]string{}
	for _, b := range h.builtinList {
		for _, old := range b.FormerIDs {
			if h.builtins[old] != nil || h.formerIDs[old] != "" {
				return fmt.Errorf("host: built-in plugin %s: former id %s is taken", b.Plugin.Manifest.ID, old)
			}
			h.formerIDs[old] = b.Plugin.Manifest.ID
		}
		for old, cur := range b.RenamedTools {
			if b.Plugin.Tool(cur) == nil || b.Plugin.Tool(old) != nil {
				return fmt.Errorf("host: built-in plugin %s: legacy tool %s must name a removed tool and map to one that exists (%s)", b.Plugin.Manifest.ID, old, cur)
			}
		}
	}
	return nil
}

// legacy maps a call of a built-in's former id or tool name to the
// current ones (Builtin.FormerIDs, RenamedTools); other calls are as
// they are.
func (h *Host) legacy(req CallRequest) CallRequest {
	if len(h.formerIDs) == 0 && len(h.builtins) == 0 {
		return req
	}
	if cur, ok := h.formerIDs[req.Plugin]; ok {
		req.Plugin = cur
	}
	if b := h.builtins[req.Plugin]; b != nil && b.RenamedTools != nil {
		if cur, ok := b.RenamedTools[req.Tool]; ok {
			req.Tool = cur
		}
	}
	return req
}

// Builtin returns the registered built-in plugin id, or nil.
func (h *Host) Builtin(id string) *Builtin { return h.builtins[id] }

// Builtins returns the registered built-in plugins in registration order.
func (h *Host) Builtins() []*Builtin {
	out := make([]*Builtin, 0, len(h.builtinList))
	return append(out, h.builtinList...)
}

// builtinParsed is parsed for a built-in id: the registered plugin when
// hash is its hash, else an error saying the stored version is not the
// app's (a built-in's code is the app's; an older one cannot run).
func (h *Host) builtinParsed(b *Builtin, hash string) (*plugin.Plugin, error) {
	if b.Plugin.Hash == hash {
		return b.Plugin, nil
	}
	return nil, &Conflict{Msg: fmt.Sprintf("built-in plugin %s: the stored version is not the one in this app (%s); restart the host to install it",
		b.Plugin.Manifest.ID, b.Plugin.Manifest.Version)}
}

// runTool runs an allowed call's tool: a built-in's Go function after the
// input check every document's tool gets, or the interpreter. untrusted
// is a built-in's BuiltinCall.Untrusted.
func (h *Host) runTool(ctx context.Context, req CallRequest, p *plugin.Plugin, t *plugin.Tool, input any) (v any, untrusted bool, err error) {
	if strings.HasPrefix(t.Name, FunctionPrefix) {
		v, err := h.runFunction(ctx, p, t, input)
		return v, false, err
	}
	b := h.builtins[p.Manifest.ID]
	if b == nil || b.Plugin != p {
		v, err := interp.Run(ctx, p, t.Name, input, h.options())
		return v, false, err
	}
	in, err := interp.CheckInput(t, input)
	if err != nil {
		var ie *interp.Error
		if errors.As(err, &ie) {
			// A built-in has no file to point at: the error names the tool instead.
			named := *ie
			named.Msg, named.Pos = p.Manifest.ID+"."+t.Name+": "+ie.Msg, diag.Pos{}
			return nil, false, &named
		}
		return nil, false, err
	}
	c := &BuiltinCall{
		Actor: req.Actor, Plugin: p.Manifest.ID, Tool: t, Turn: req.Turn, Input: in, Now: h.now(),
		KV: h.db.KV(), Abilities: h.abilities, Campus: h.campus, Host: h,
	}
	v, err = runBuiltinFunc(ctx, b.Funcs[t.Name], c)
	if err != nil {
		var ie *interp.Error
		if errors.As(err, &ie) {
			return nil, false, ie
		}
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		msg := fmt.Sprintf("%s.%s: %v", p.Manifest.ID, t.Name, err)
		if ce := (*cloud.Error)(nil); errors.As(err, &ce) {
			// A Cloud refusal stays reachable: its consent request becomes the consent panel.
			return nil, false, interp.Wrap(KindTool, msg, err)
		}
		if se := interp.SessionError(nil); errors.As(err, &se) {
			// So does a missing campus session: the faces point to the sign-in.
			return nil, false, interp.Wrap(interp.KindSession, msg, err)
		}
		return nil, false, &interp.Error{Kind: KindTool, Msg: msg}
	}
	return v, c.Untrusted, nil
}

// runBuiltinFunc runs fn, turning a panic (a bug in the built-in's Go
// code) into a tool error naming the tool, so that one broken built-in
// fails its call instead of ending harness serve, the scheduler or MCP.
func runBuiltinFunc(ctx context.Context, fn BuiltinFunc, c *BuiltinCall) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, &interp.Error{Kind: KindTool, Msg: fmt.Sprintf("%s.%s: internal error in the built-in: %v", c.Plugin, c.Tool.Name, r)}
		}
	}()
	return fn(ctx, c)
}

// loadBuiltin is load for "builtin:ID".
func (h *Host) loadBuiltin(src string) (*reviewed, error) {
	id := strings.TrimPrefix(src, BuiltinSource)
	b := h.builtins[id]
	if b == nil {
		return nil, &Unreadable{Source: src, Err: fmt.Errorf("this app has no built-in plugin %q", id)}
	}
	return &reviewed{p: b.Plugin, source: src, official: true, at: h.now()}, nil
}

// installBuiltins installs the registered built-ins that are not installed
// (Official, source "builtin:ID"), unless the user removed them, and offers
// a changed built-in as an update by the rules of Update. It is part of
// InstallOfficial.
func (h *Host) installBuiltins(ctx context.Context) ([]*UpdateOutcome, error) {
	var out []*UpdateOutcome
	for _, b := range h.builtinList {
		id := b.Plugin.Manifest.ID
		var removed int
		if err := h.db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM settings WHERE key = ?`, removedKey(id)).Scan(&removed); err != nil {
			return out, fmt.Errorf("host: built-in %s: %w", id, err)
		}
		if removed > 0 {
			continue
		}
		var hash string
		err := h.db.SQL.QueryRowContext(ctx, `SELECT v.hash FROM plugins p JOIN plugin_versions v
			ON v.plugin = p.id AND v.seq = p.current WHERE p.id = ?`, id).Scan(&hash)
		switch {
		case err == nil && hash == b.Plugin.Hash:
			continue
		case err == nil:
			o, err := h.applyBuiltin(ctx, b)
			if err != nil {
				return out, err
			}
			out = append(out, o)
			continue
		case !errors.Is(err, sql.ErrNoRows):
			return out, fmt.Errorf("host: built-in %s: %w", id, err)
		}
		r := &reviewed{p: b.Plugin, source: BuiltinSource + id, official: true, at: h.now()}
		if err := h.insertNew(ctx, r); err != nil {
			var c *Conflict
			if errors.As(err, &c) {
				continue // installed by another process just now, or a document holds the id
			}
			return out, err
		}
		out = append(out, &UpdateOutcome{ID: id, Status: StatusInstalled, To: b.Plugin.Manifest.Version, Note: "installed " + b.Plugin.Manifest.Version})
	}
	return out, nil
}

// applyBuiltin makes the app's version of an installed built-in current:
// its code is the app's, so the old version cannot run any more and there is
// nothing to hold or roll back to (the app's own update was the review).
func (h *Host) applyBuiltin(ctx context.Context, b *Builtin) (*UpdateOutcome, error) {
	id := b.Plugin.Manifest.ID
	var out *UpdateOutcome
	err := h.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := h.record(ctx, tx, id)
		if err != nil {
			return err
		}
		cur, err := h.version(ctx, tx, id, r.current)
		if err != nil {
			return err
		}
		seq, err := nextSeq(ctx, tx, id)
		if err != nil {
			return err
		}
		now := h.now().UnixMilli()
		if err := insertVersion(ctx, tx, id, seq, b.Plugin, now); err != nil {
			return err
		}
		out = &UpdateOutcome{ID: id, Status: StatusApplied, From: cur.version, To: b.Plugin.Manifest.Version,
			Note: "updated to " + b.Plugin.Manifest.Version + " with the app"}
		if _, err := tx.ExecContext(ctx, `UPDATE plugins SET current = ?, previous = NULL, held = NULL, checked_at = ?, note = ?, source = ? WHERE id = ?`,
			seq, now, out.Note, BuiltinSource+id, id); err != nil {
			return fmt.Errorf("host: update %s: %w", id, err)
		}
		return prune(ctx, tx, id)
	})
	return out, err
}

// BuiltinEnv returns the services a built-in's code outside a tool (a
// slash command, a context function) runs with: a BuiltinCall without
// Tool and Input, at the host's clock now. Its ability calls are read
// ones (the effect of no tool); writes go through Call, as a tool's.
func (h *Host) BuiltinEnv(pluginID string, actor Actor, turn string) *BuiltinCall {
	return &BuiltinCall{Actor: actor, Plugin: pluginID, Turn: turn, Input: expr.NewObject(0), Now: h.now(),
		KV: h.db.KV(), Abilities: h.abilities, Campus: h.campus, Host: h}
}

// builtinID refuses to install p under id when id is, or was, a built-in
// plugin's and p is not that built-in: the id (and calls saved under it)
// belongs to the app, even after the user removed the built-in.
func (h *Host) builtinID(id string, p *plugin.Plugin) error {
	if b := h.builtins[id]; b != nil && b.Plugin != p {
		return &Conflict{Msg: fmt.Sprintf("the id %s belongs to a built-in plugin of the app; a plugin of another kind cannot take it", id)}
	}
	if cur, ok := h.formerIDs[id]; ok {
		return &Conflict{Msg: fmt.Sprintf("the id %s was the built-in plugin %s's; a plugin of another kind cannot take it", id, cur)}
	}
	return nil
}
