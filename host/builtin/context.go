package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// Context is what a built-in tool, command or context function gets (seed
// 003 "内置插件": ctx with kv and services). It is a context.Context
// (cancelled when the caller gives up) with the actor, the host's clock
// reading for this call, the plugin's own KV, and the host services.
type Context struct {
	context.Context
	// Actor is who runs the tool: user, agent or scheduler.
	Actor host.Actor
	// Plugin is the built-in's id.
	Plugin string
	// Turn is the assistant's turn, "" outside one.
	Turn string
	// Now is the host's clock at the start of the call (WithClock makes it
	// fixed in tests). Use it, never time.Now.
	Now time.Time
	// KV is the plugin's key-value storage (256 KB, as a document's).
	KV *KV
	// Host is the host the tool runs in.
	Host *host.Host
	// Locale is the viewer's language for text a command shows (zh-Hans
	// when unknown); tool results are data and never translated.
	Locale i18n.Locale

	call *host.BuiltinCall
	// untrusted is set by MarkUntrusted, for a context() that has no call.
	untrusted bool
}

func newContext(ctx context.Context, h *host.Host, id string, actor host.Actor, turn string, call *host.BuiltinCall) *Context {
	if call == nil && h != nil {
		call = h.BuiltinEnv(id, actor, turn)
	}
	c := &Context{Context: ctx, Actor: actor, Plugin: id, Turn: turn, Host: h, Locale: i18n.Zh, call: call}
	var kv interp.KV
	if call != nil {
		c.Now, kv = call.Now, call.KV
	} else if h != nil {
		c.Now, kv = h.Now(), h.Store().KV()
	} else {
		c.Now = time.Now()
	}
	c.KV = &KV{ctx: ctx, kv: kv, plugin: id}
	return c
}

// Store returns the host's database, for a built-in's own tables
// (migrations 300–399, registered with store.Register).
func (c *Context) Store() *store.DB { return c.Host.Store() }

// Ability runs a host ability operation ("todos.add", "scheduler.create",
// "otp.code", "browser.open", …) as this tool: the same catalogue, effect
// check and store a document's ability step uses, so a to-do a built-in
// adds is the one every other face lists. args is any JSON-able value (nil
// for none); the result is decoded into out when out is not nil. The
// plugin must declare the group in Abilities.
func (c *Context) Ability(op string, args any, out any) error {
	if c.call == nil || c.call.Abilities == nil {
		return fmt.Errorf("ability %s: the host has no abilities", op)
	}
	group, name, ok := strings.Cut(op, ".")
	if !ok {
		return fmt.Errorf("ability %q: name it GROUP.OP", op)
	}
	var a any
	if args != nil {
		v, err := toValue(args)
		if err != nil {
			return fmt.Errorf("ability %s: args: %w", op, err)
		}
		a = v
	}
	eff := plugin.EffectRead
	if c.call.Tool != nil {
		eff = c.call.Tool.Effect
	}
	v, err := c.call.Abilities.Call(c, interp.AbilityCall{Plugin: c.Plugin, Tool: c.toolName(), Group: group, Op: name, Args: a, ToolEffect: eff})
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	b, err := expr.ToJSON(v, "")
	if err != nil {
		return fmt.Errorf("ability %s: result: %w", op, err)
	}
	return json.Unmarshal(b, out)
}

func (c *Context) toolName() string {
	if c.call == nil || c.call.Tool == nil {
		return ""
	}
	return c.call.Tool.Name
}

// MarkUntrusted marks this call's result as third-party data (seed 003
// "工具与 schema": untrusted), for a tool whose result carries text of
// someone other than the user on this call only: the host marks it and
// taints the agent's turn, as for a tool declared Untrusted.
func (c *Context) MarkUntrusted() {
	if c.call != nil {
		c.call.Untrusted = true
	}
	c.untrusted = true
}

// textBy marks the result untrusted when it carries text that plugin
// wrote and plugin is not a built-in (a document's to-do or course is
// its text, which may come from any web page); "" is the user's own.
func (c *Context) textBy(plugin string) {
	if plugin != "" && (c.Host == nil || c.Host.Builtin(plugin) == nil) {
		c.MarkUntrusted()
	}
}

// Campus returns the client that signs campus requests with the user's
// session (ctx.services.campus in the seed), nil when the host has none.
// The plugin's Campus declaration lists the services it may reach.
func (c *Context) Campus() interp.CampusClient {
	if c.call == nil {
		return nil
	}
	return c.call.Campus
}

// Cloud returns the plugin's PKU harness Cloud handle (seed 003 "插件指南":
// ctx.cloud): Store, OpenChannel/ResumeChannel (SecretLink, mailbox and kick
// on the channel), Call and Status, each gated by the person's consent
// (cloud.CodeConsentRequired until it is given) and by the manifest's Cloud
// declaration. It is an error for a built-in whose manifest has no Cloud.
func (c *Context) Cloud() (*cloud.Plugin, error) {
	if c.Host == nil {
		return nil, fmt.Errorf("cloud: %s: no host", c.Plugin)
	}
	b := c.Host.Builtin(c.Plugin)
	if b == nil || b.Plugin == nil {
		return nil, fmt.Errorf("cloud: %s: not a built-in plugin", c.Plugin)
	}
	d := cloud.DeclOfPlugin(b.Plugin)
	if d == nil {
		return nil, fmt.Errorf("cloud: %s: the plugin declares no Cloud use (Plugin.Cloud is nil)", c.Plugin)
	}
	return cloud.For(c.Host.Store()).Plugin(d)
}

// KV is a built-in's own key-value storage: values are JSON, keys are
// scoped by plugin id, 256 KB in all (interp.KVQuota).
type KV struct {
	ctx    context.Context
	kv     interp.KV
	plugin string
}

// Get reads key into out; ok is false when there is none.
func (k *KV) Get(key string, out any) (ok bool, err error) {
	if k.kv == nil {
		return false, fmt.Errorf("kv: no storage")
	}
	e, ok, err := k.kv.Get(k.ctx, k.plugin, key)
	if err != nil || !ok {
		return false, err
	}
	b, err := expr.ToJSON(e.Value, "")
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(b, out)
}

// Set stores v (any JSON-able value) under key; a write over the quota is
// an error wrapping interp.ErrQuota and keeps the old value.
func (k *KV) Set(key string, v any) error {
	if k.kv == nil {
		return fmt.Errorf("kv: no storage")
	}
	x, err := toValue(v)
	if err != nil {
		return err
	}
	return k.kv.Set(k.ctx, k.plugin, key, interp.Entry{Value: x})
}

// Delete removes key.
func (k *KV) Delete(key string) error {
	if k.kv == nil {
		return fmt.Errorf("kv: no storage")
	}
	return k.kv.Delete(k.ctx, k.plugin, key)
}

// CallTool calls a tool through Host.Call as c's actor, in c's turn: the
// same rules, confirmation and audit as any call (a call that needs the
// user's confirmation is a *host.Refusal with NeedsConfirmation). args is
// any JSON-able value (nil for {}); the result is decoded into out when
// out is not nil.
func (c *Context) CallTool(pluginID, tool string, args any, out any) error {
	var in any
	if args != nil {
		v, err := toValue(args)
		if err != nil {
			return fmt.Errorf("%s.%s: args: %w", pluginID, tool, err)
		}
		in = v
	}
	res, err := c.Host.Call(c, host.CallRequest{Actor: c.Actor, Plugin: pluginID, Tool: tool, Input: in, Turn: c.Turn})
	if err != nil {
		return err
	}
	if res.Confirmation != nil {
		return &host.Refusal{Actor: c.Actor, Plugin: pluginID, Tool: tool, NeedsConfirmation: true,
			Reason: fmt.Sprintf("%s.%s needs the user's confirmation (%s)", pluginID, tool, res.Confirmation.Reason)}
	}
	if out == nil {
		return nil
	}
	b, err := expr.ToJSON(res.Value, "")
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
