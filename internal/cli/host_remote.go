package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/msg"
	"github.com/pkuinfo/harness/mcpx"
	"github.com/pkuinfo/harness/plugin"
)

func init() {
	for _, c := range []struct{ path, usage, summary string }{
		{"plugins add-remote", "[--token T] [--yes] URL", "connect to a remote plugin (an MCP server over Streamable HTTP), show its review sheet and install it as mcp-<server name>"},
		{"plugins update-remote", "[ID]", "list a remote plugin's tools again (all remote plugins without ID)"},
		{"plugins list-remote", "[--json]", "list installed remote plugins"},
		{"plugins mode-remote", "ID EFFECT auto|ask|deny", "set the permission mode of one effect of a remote plugin"},
		{"plugins remove-remote", "ID", "uninstall a remote plugin and forget its token"},
	} {
		Register(&Command{Path: c.path, Usage: "[--data DIR] " + c.usage, Summary: c.summary, Run: remoteCommand(c.path, c.usage),
			Flags: func(fs *flag.FlagSet) { new(remoteOpts).register(fs) }})
	}
}

// remoteCommand returns the Run function of one `harness plugins …-remote`
// command; flags may come anywhere. Exit codes: 0 done, 1 failed or
// declined, 2 bad usage.
func remoteCommand(path, usage string) func(env *Env) int {
	sub := strings.TrimPrefix(path, "plugins ")
	return func(env *Env) int {
		name := "harness " + path
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(env.Stderr)
		var o remoteOpts
		o.register(fs)
		hf, token, yes, asJSON := &o.hf, &o.token, &o.yes, &o.json
		args, err := parseInterleaved(fs, env.Args)
		if err != nil {
			return ExitUsage
		}
		lang, err := hf.language()
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitUsage
		}
		want := map[string][2]int{"add-remote": {1, 1}, "update-remote": {0, 1}, "list-remote": {0, 0},
			"mode-remote": {3, 3}, "remove-remote": {1, 1}}[sub]
		if len(args) < want[0] || len(args) > want[1] {
			fmt.Fprintf(env.Stderr, "usage: %s [--data DIR] %s\n", name, usage)
			return ExitUsage
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		hf.readOnly = sub == "list-remote"
		h, db, err := openHost(ctx, hf)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		defer db.Close()
		c := &remoteCmd{env: env, h: h, reg: mcpx.NewRegistry(db), ctx: ctx, token: *token, yes: *yes, json: *asJSON, lang: lang}
		err = c.run(sub, args)
		var u usageError
		switch {
		case errors.As(err, &u):
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitUsage
		case errors.Is(err, errDeclined):
			fmt.Fprintln(env.Stderr, lang.T(msg.NotInstalled))
			return ExitFail
		case err != nil:
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		return ExitOK
	}
}

// remoteOpts are the flags of the `harness plugins …-remote` commands.
type remoteOpts struct {
	hf        hostFlags
	token     string
	yes, json bool
}

func (o *remoteOpts) register(fs *flag.FlagSet) {
	o.hf.register(fs)
	fs.StringVar(&o.token, "token", "", "bearer token the server wants (kept by the host, never shown to the model)")
	fs.BoolVar(&o.yes, "yes", false, "install without asking")
	fs.BoolVar(&o.json, "json", false, "print JSON")
}

var errDeclined = errors.New("declined")

type remoteCmd struct {
	env   *Env
	h     *host.Host
	reg   *mcpx.Registry
	ctx   context.Context
	token string
	yes   bool
	json  bool
	lang  msg.Lang
}

func (c *remoteCmd) run(sub string, args []string) error {
	out := c.env.Stdout
	switch sub {
	case "add-remote":
		srv, err := (&mcpx.RemoteClient{URL: args[0], Token: c.token}).Describe(c.ctx)
		if err != nil {
			return err
		}
		if _, err := c.h.Show(c.ctx, srv.PluginID); err == nil {
			return &host.Conflict{Msg: fmt.Sprintf("plugin %s is already installed", srv.PluginID)}
		}
		if err := mcpx.WriteSheetIn(out, srv, c.token != "", c.lang); err != nil {
			return err
		}
		if !c.yes && !confirm(c.env.Stdin, out, c.lang.T(msg.Confirm, c.lang.T(msg.InstallPrompt, srv.PluginID))) {
			return errDeclined
		}
		p, err := c.reg.Add(c.ctx, srv, c.token)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, c.lang.T(msg.RemoteInstalled, p.ID, len(p.Server.Tools)))
	case "update-remote":
		list, err := c.reg.List(c.ctx)
		if err != nil {
			return err
		}
		found := false
		for _, p := range list {
			if len(args) == 1 && p.ID != args[0] {
				continue
			}
			found = true
			srv, err := p.Client().Describe(c.ctx)
			if err != nil {
				return err
			}
			ch, _ := toolChanges(c.lang, p.Server.Tools, srv.Tools)
			if apply, held := mcpx.Refresh(p.Modes, p.Server.Tools, srv.Tools); !apply {
				// The same rule as every refresh: one that would let a tool run without asking is not applied.
				return errors.New(c.lang.T(msg.RemoteLoosened, strings.Join(held, ", "), ch))
			}
			if err := c.reg.Replace(c.ctx, p.ID, srv); err != nil {
				return err
			}
			fmt.Fprintln(out, c.lang.T(msg.RemoteRefreshed, p.ID, ch))
		}
		if len(args) == 1 && !found {
			return &host.NotFound{What: fmt.Sprintf("no remote plugin %q is installed", args[0])}
		}
	case "list-remote":
		list, err := c.reg.List(c.ctx)
		if err != nil {
			return err
		}
		if c.json {
			if list == nil {
				list = []*mcpx.RemotePlugin{}
			}
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		}
		tw := newTable(out)
		fmt.Fprintln(tw, c.lang.T(msg.RemoteListHeader))
		for _, p := range list {
			fmt.Fprintf(tw, "%s\t%d\t%v\t%s\n", p.ID, len(p.Server.Tools), p.Enabled, p.Server.URL)
		}
		return tw.Flush()
	case "mode-remote":
		e, err := plugin.ParseEffect(args[1])
		if err != nil {
			return usageError{err}
		}
		m, err := host.ParseMode(args[2])
		if err != nil {
			return usageError{err}
		}
		if err := c.reg.SetMode(c.ctx, args[0], e, m); err != nil {
			return err
		}
		fmt.Fprintln(out, c.lang.T(msg.RemoteModeSet, args[0], e, m))
	case "remove-remote":
		if err := c.reg.Remove(c.ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintln(out, c.lang.T(msg.RemoteRemoved, args[0]))
	}
	return nil
}

// toolChanges says, in lang, how a refreshed tool list differs from the old one; unchanged is
// true when it does not.
func toolChanges(lang msg.Lang, old, cur []mcpx.RemoteTool) (text string, unchanged bool) {
	was := map[string]mcpx.RemoteTool{}
	for _, t := range old {
		was[t.Name] = t
	}
	var parts []string
	for _, t := range cur {
		o, ok := was[t.Name]
		switch {
		case !ok:
			parts = append(parts, lang.T(msg.RemoteNewTool, t.Name, t.Effect))
		case o.Effect != t.Effect:
			parts = append(parts, lang.T(msg.RemoteEffect, t.Name, t.Effect, o.Effect))
		}
		delete(was, t.Name)
	}
	for _, t := range old {
		if _, gone := was[t.Name]; gone {
			parts = append(parts, lang.T(msg.RemoteGoneTool, t.Name))
		}
	}
	if len(parts) == 0 {
		return lang.T(msg.RemoteUnchanged, len(cur)), true
	}
	return strings.Join(parts, "; "), false
}

// refreshRemote lists a remote plugin's tools again for `harness plugins
// update` and the refresh route: StatusCurrent when they did not change,
// StatusApplied with the changes as the note, StatusFailed when the server
// cannot be described, now names another plugin, or mcpx.Refresh holds the
// change (it would let a tool run without asking). The error is for the
// database only.
func refreshRemote(ctx context.Context, reg *mcpx.Registry, id string, lang msg.Lang) (*host.UpdateOutcome, error) {
	p, err := reg.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	o := &host.UpdateOutcome{ID: id, From: host.KindRemote}
	srv, err := p.Client().Describe(ctx)
	if err != nil {
		o.Status, o.Error = host.StatusFailed, err.Error()
		return o, nil
	}
	if apply, held := mcpx.Refresh(p.Modes, p.Server.Tools, srv.Tools); !apply {
		ch, _ := toolChanges(lang, p.Server.Tools, srv.Tools)
		o.Status, o.Error = host.StatusFailed, lang.T(msg.RemoteLoosened, strings.Join(held, ", "), ch)
		return o, nil
	}
	var c *host.Conflict
	if err := reg.Replace(ctx, id, srv); errors.As(err, &c) {
		o.Status, o.Error = host.StatusFailed, err.Error()
		return o, nil
	} else if err != nil {
		return nil, err
	}
	o.Status = host.StatusCurrent
	if ch, unchanged := toolChanges(lang, p.Server.Tools, srv.Tools); !unchanged {
		o.Status, o.Note = host.StatusApplied, ch
	}
	return o, nil
}
