package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
		{"plugins review", "[--lang zh-Hans|en] [--json] LINK|DIR", "print the review sheet of a plugin: Official or Community, what it can reach, every tool and its effect"},
		{"plugins install", "[--yes] [--lang zh-Hans|en] LINK|DIR", "show the review sheet and install exactly the reviewed content after confirmation"},
		{"plugins update", "[--json] [ID]", "check installed plugins for updates: apply unchanged declarations, hold wider ones"},
		{"plugins accept", "[--yes] [--lang zh-Hans|en] ID", "show the review sheet of a held update (its declarations are wider) and apply it after confirmation"},
		{"plugins rollback", "ID", "restore the previous version of a plugin (one is kept; the version it replaces stays for rollforward)"},
		{"plugins rollforward", "ID", "undo a rollback: the newer version it replaced runs again"},
		{"plugins versions", "[--json] ID", "list the versions kept of a plugin: current, previous (rollback), newer (rollforward), held (accept)"},
		{"plugins enable", "ID", "let a plugin's tools run again"},
		{"plugins disable", "ID", "stop a plugin's tools from running"},
		{"plugins remove", "[--delete-cloud-data] ID", "uninstall a plugin with its storage, Cloud consent and channels (--delete-cloud-data: what it stored with the Cloud provider too)"},
		{"plugins list", "[--json]", "list installed plugins"},
		{"plugins show", "[--json] ID", "show one installed plugin: versions, modes, reach, held update"},
		{"plugins autoupdate", "ID on|off", "switch automatic updates of one plugin on or off"},
		{"plugins mode", "ID EFFECT auto|ask|deny", "set the permission mode of one effect of a plugin"},
	} {
		Register(&Command{Path: c.path, Usage: "[--data DIR] " + c.usage, Summary: c.summary, Run: pluginsCommand(c.path, c.usage),
			Flags: func(fs *flag.FlagSet) { new(pluginsOpts).register(fs) }})
	}
}

// pluginsCommand returns the Run function of one `harness plugins …`
// command: flags (--data, --ca, --lang, --json, --yes) may come anywhere.
func pluginsCommand(path, usage string) func(env *Env) int {
	sub := strings.TrimPrefix(path, "plugins ")
	return func(env *Env) int {
		name := "harness " + path
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(env.Stderr)
		var o pluginsOpts
		o.register(fs)
		hf, asJSON, yes := &o.hf, &o.json, &o.yes
		args, err := parseInterleaved(fs, env.Args)
		if err != nil {
			return ExitUsage
		}
		lang, err := hf.language()
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitUsage
		}
		want, ok := map[string][2]int{"update": {0, 1}, "list": {0, 0}, "autoupdate": {2, 2}, "mode": {3, 3}}[sub]
		if !ok {
			want = [2]int{1, 1}
		}
		if len(args) < want[0] || len(args) > want[1] {
			fmt.Fprintf(env.Stderr, "usage: %s [--data DIR] %s\n", name, usage)
			return ExitUsage
		}
		if o.deleteCloudData && sub != "remove" {
			fmt.Fprintf(env.Stderr, "%s: --delete-cloud-data is a flag of harness plugins remove\n", name)
			return ExitUsage
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		hf.readOnly = readOnlyPlugins[sub]
		h, db, err := openHost(ctx, hf)
		var none *noDataDir
		if sub == "review" && errors.As(err, &none) {
			// A review reads the plugin, not the host: without a data directory it runs on a
			// host in memory that knows nothing is installed.
			h, db, err = openMemoryHost(ctx, hf)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		defer db.Close()
		c := &pluginsCmd{env: env, h: h, ctx: ctx, name: name, lang: lang, json: *asJSON, yes: *yes, deleteCloudData: o.deleteCloudData}
		err = c.run(sub, args)
		var u usageError
		switch {
		case errors.As(err, &u):
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitUsage
		case err != nil:
			fmt.Fprintf(env.Stderr, "%s: %s\n", name, hostError(lang, err))
			return ExitFail
		}
		return ExitOK
	}
}

// readOnlyPlugins are the `harness plugins …` commands that only read: they create no data
// directory where there is none (openDataDir).
var readOnlyPlugins = map[string]bool{"review": true, "list": true, "show": true, "versions": true}

// hostError is an error of the host in lang: the conflicts and absences the host names
// (host.Conflict.Reason, host.NotFound.Plugin) from the catalogue, anything else as it is,
// without its "host: " prefix.
func hostError(lang msg.Lang, err error) string {
	var c *host.Conflict
	var nf *host.NotFound
	switch {
	case errors.As(err, &c) && c.Reason == host.ConflictNoPrevious && c.Newer != "":
		return lang.T(msg.ErrNoPreviousNewr, c.Plugin, c.Current, c.Newer)
	case errors.As(err, &c) && c.Reason == host.ConflictNoPrevious:
		return lang.T(msg.ErrNoPrevious, c.Plugin, c.Current)
	case errors.As(err, &c) && c.Reason == host.ConflictNoNewer:
		return lang.T(msg.ErrNoNewer, c.Plugin, c.Current)
	case errors.As(err, &c) && c.Reason == host.ConflictNoHeld:
		return lang.T(msg.ErrNoHeld, c.Plugin)
	case errors.As(err, &nf) && nf.Plugin != "":
		return lang.T(msg.ErrNotInstalled, nf.Plugin)
	}
	return strings.TrimPrefix(err.Error(), "host: ")
}

// pluginsOpts are the flags of the `harness plugins …` commands.
type pluginsOpts struct {
	hf              hostFlags
	json, yes       bool
	deleteCloudData bool
}

func (o *pluginsOpts) register(fs *flag.FlagSet) {
	o.hf.register(fs)
	fs.BoolVar(&o.json, "json", false, "print JSON")
	fs.BoolVar(&o.yes, "yes", false, "answer yes to the install or accept question (the review sheet is still printed)")
	fs.BoolVar(&o.deleteCloudData, "delete-cloud-data", false, "plugins remove: also delete what the plugin stored with the Cloud provider (it must answer)")
}

type usageError struct{ error }

type pluginsCmd struct {
	env             *Env
	h               *host.Host
	ctx             context.Context
	name            string
	lang            msg.Lang
	json, yes       bool
	deleteCloudData bool
}

// t is the message k in the run's language.
func (c *pluginsCmd) t(k msg.Key, args ...any) string { return c.lang.T(k, args...) }

func (c *pluginsCmd) out() io.Writer { return c.env.Stdout }

func (c *pluginsCmd) printJSON(v any) error {
	enc := json.NewEncoder(c.out())
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (c *pluginsCmd) run(sub string, args []string) error {
	ctx, h := c.ctx, c.h
	switch sub {
	case "review", "install":
		rv, err := h.Review(ctx, args[0])
		if err != nil {
			return err
		}
		if c.json && sub == "review" {
			return c.printJSON(rv)
		}
		fmt.Fprint(c.out(), rv.Sheet(string(c.lang)))
		if sub == "review" {
			return nil
		}
		if rv.Installed != "" {
			return errors.New(c.t(msg.AlreadyInstalled, rv.ID, rv.Installed))
		}
		if !c.yes && !confirm(c.env.Stdin, c.out(), c.t(msg.Confirm, c.t(msg.InstallPrompt, rv.ID))) {
			fmt.Fprintln(c.out(), c.t(msg.NotInstalled))
			return errors.New(c.t(msg.InstallNotConfirmed))
		}
		in, err := h.Install(ctx, args[0], rv.Hash)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.out(), c.t(msg.Installed, in.ID, in.Version, c.kind(in.Official)))
		return nil
	case "update":
		var list []*host.Installed
		if len(args) == 1 {
			in, err := h.Show(ctx, args[0])
			if err != nil {
				return err
			}
			list = []*host.Installed{in}
		} else {
			var err error
			if list, err = h.List(ctx); err != nil {
				return err
			}
		}
		var outs []*host.UpdateOutcome
		failed := false
		for _, in := range list {
			var o *host.UpdateOutcome
			var err error
			if in.Kind == host.KindRemote {
				o, err = refreshRemote(ctx, mcpx.NewRegistry(h.Store()), in.ID, c.lang)
			} else {
				o, err = h.Update(ctx, in.ID)
			}
			if err != nil {
				return err
			}
			outs = append(outs, o)
			failed = failed || o.Status == host.StatusFailed || o.Status == host.StatusMismatch
			if !c.json {
				fmt.Fprintln(c.out(), describe(c.lang, o, "update"))
			}
		}
		if c.json {
			if err := c.printJSON(outs); err != nil {
				return err
			}
		}
		if failed {
			return errors.New(c.t(msg.SomeUpdatesFailed))
		}
		return nil
	case "accept":
		rv, _, err := h.HeldReview(ctx, args[0])
		if err != nil {
			return err
		}
		in, err := h.Show(ctx, args[0])
		if err != nil {
			return err
		}
		var widened []host.Widening
		if in.Held != nil {
			widened = in.Held.Widenings
		}
		fmt.Fprint(c.out(), rv.Sheet(string(c.lang)))
		fmt.Fprintf(c.out(), "\n%s\n", c.t(msg.Widens, rv.ID, rv.Installed, rv.Version, widenText(c.lang, widened)))
		if !c.yes && !confirm(c.env.Stdin, c.out(), c.t(msg.Confirm, c.t(msg.AcceptPrompt))) {
			fmt.Fprintln(c.out(), c.t(msg.NotUpdated))
			return errors.New(c.t(msg.UpdateNotAccepted))
		}
		o, err := h.AcceptUpdate(ctx, args[0], rv.Hash)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.out(), describe(c.lang, o, "update"))
		return nil
	case "rollback", "rollforward":
		roll := h.Rollback
		if sub == "rollforward" {
			roll = h.Rollforward
		}
		o, err := roll(ctx, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(c.out(), describe(c.lang, o, sub))
		return nil
	case "versions":
		vs, err := h.Versions(ctx, args[0])
		if err != nil {
			return err
		}
		if c.json {
			if vs == nil {
				vs = []host.KeptVersion{}
			}
			return c.printJSON(vs)
		}
		hint := map[string]string{"previous": "harness plugins rollback " + args[0], "newer": "harness plugins rollforward " + args[0],
			"held": "harness plugins accept " + args[0]}
		role := map[string]msg.Key{"current": msg.RoleCurrent, "previous": msg.RolePrevious, "newer": msg.RoleNewer, "held": msg.RoleHeld}
		tw := newTable(c.out())
		fmt.Fprintln(tw, c.t(msg.VersionsHeader))
		for _, v := range vs {
			line := fmt.Sprintf("%s\t%s\t%s\t%s", c.t(role[v.Role]), v.Version, v.Hash, v.FetchedAt.Local().Format("2006-01-02 15:04"))
			if hint[v.Role] != "" {
				line += "\t" + hint[v.Role]
			}
			fmt.Fprintln(tw, line)
		}
		return tw.Flush()
	case "enable", "disable":
		if err := h.SetEnabled(ctx, args[0], sub == "enable"); err != nil {
			return err
		}
		done := msg.Enabled
		if sub == "disable" {
			done = msg.Disabled
		}
		fmt.Fprintln(c.out(), c.t(done, args[0]))
		return nil
	case "remove":
		out, err := h.RemoveWith(ctx, args[0], host.RemoveOptions{DeleteCloudData: c.deleteCloudData})
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(out)
		}
		fmt.Fprintln(c.out(), c.t(msg.Removed, args[0]))
		switch out.CloudData {
		case host.CloudDataKept:
			fmt.Fprintln(c.out(), c.t(msg.CloudDataKept, args[0]))
		case host.CloudDataDeleted:
			fmt.Fprintln(c.out(), c.t(msg.CloudDataDeleted, args[0]))
		}
		if out.Closing > 0 {
			fmt.Fprintln(c.out(), c.t(msg.CloudClosing, out.Closing, args[0]))
		}
		return nil
	case "autoupdate":
		on, ok := map[string]bool{"on": true, "off": false}[args[1]]
		if !ok {
			return usageError{fmt.Errorf("%q: use on or off", args[1])}
		}
		if err := h.SetAutoUpdate(ctx, args[0], on); err != nil {
			return err
		}
		done := msg.AutoUpdateOff
		if on {
			done = msg.AutoUpdateOn
		}
		fmt.Fprintln(c.out(), c.t(done, args[0]))
		return nil
	case "mode":
		e, err := plugin.ParseEffect(args[1])
		if err != nil {
			return usageError{err}
		}
		m, err := host.ParseMode(args[2])
		if err != nil {
			return usageError{err}
		}
		if err := h.SetMode(ctx, args[0], e, m); err != nil {
			return err
		}
		fmt.Fprintln(c.out(), c.t(msg.ModeSet, args[0], e, m))
		return nil
	case "list":
		list, err := h.List(ctx)
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(list)
		}
		for _, in := range list {
			tags := []string{c.nameOf(in)}
			if !in.Enabled {
				tags = append(tags, c.t(msg.ListDisabled))
			}
			if in.Held != nil {
				tags = append(tags, c.t(msg.ListHeld, in.Held.Version))
			}
			version := in.Version
			if in.Kind == host.KindRemote {
				version = c.t(msg.ListRemote)
			}
			// The third column is the kind: Official or Community for a document or a remote
			// plugin (which says remote for its version), Built-in for the app's own.
			k := c.kind(in.Official)
			if in.Kind == host.KindBuiltin {
				k = c.t(msg.ListBuiltin)
			}
			fmt.Fprintf(c.out(), "%-16s %-8s %-9s %s\n", in.ID, version, k, strings.Join(tags, " "))
		}
		return nil
	case "show":
		in, err := h.Show(ctx, args[0])
		if err != nil {
			return err
		}
		modes, err := h.Modes(ctx, args[0])
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(struct {
				*host.Installed
				Modes map[string]host.Mode `json:"modes"`
			}{in, modeNames(modes)})
		}
		return c.show(in, modes)
	}
	return usageError{fmt.Errorf("unknown command %q", sub)}
}

// nameOf is an installed plugin's name in the command's language: its i18n.en name in English
// when the manifest has one, else its name.
func (c *pluginsCmd) nameOf(in *host.Installed) string {
	if c.lang == msg.En && in.NameEn != "" {
		return in.NameEn
	}
	return in.Name
}

func modeNames(m map[plugin.Effect]host.Mode) map[string]host.Mode {
	out := map[string]host.Mode{}
	for e, mode := range m {
		out[e.String()] = mode
	}
	return out
}

func (c *pluginsCmd) show(in *host.Installed, modes map[plugin.Effect]host.Mode) error {
	w := c.out()
	line := func(k msg.Key, args ...any) { fmt.Fprintln(w, c.t(k, args...)) }
	yes := func(b bool) string {
		if b {
			return c.t(msg.Yes)
		}
		return c.t(msg.No)
	}
	fmt.Fprintf(w, "%s %s (%s)\n", in.ID, in.Version, c.nameOf(in))
	switch in.Kind {
	case host.KindRemote:
		line(msg.ShowKindRmt, c.kind(in.Official))
	case host.KindBuiltin:
		line(msg.ShowKindBuiltin, c.kind(in.Official))
	default:
		line(msg.ShowKind, c.kind(in.Official))
	}
	line(msg.ShowSource, in.Source)
	line(msg.ShowHash, in.Hash)
	line(msg.ShowEnabled, yes(in.Enabled))
	line(msg.ShowAuto, yes(in.AutoUpdate))
	if in.Note != "" {
		line(msg.ShowNote, in.Note)
	}
	if in.Previous != "" {
		line(msg.ShowPrevious, in.ID, in.Previous)
	}
	if in.Forward != "" {
		line(msg.ShowNewer, in.ID, in.Forward)
	}
	if in.Held != nil {
		line(msg.ShowHeld, in.ID, in.Held.Version, widenText(c.lang, in.Held.Widenings))
	}
	d := in.Declarations
	line(msg.ShowCampus, c.orNone(d.Campus))
	line(msg.ShowNetwork, c.orNone(d.Network))
	line(msg.ShowAbilities, c.orNone(d.Abilities))
	var ms []string
	for _, e := range plugin.Effects {
		ms = append(ms, fmt.Sprintf("%s=%s", e, modes[e]))
	}
	line(msg.ShowModes, strings.Join(ms, " "))
	line(msg.ShowTools)
	for _, t := range d.Tools {
		flags := ""
		if t.UserOnly {
			flags += " userOnly"
		}
		if t.Untrusted {
			flags += " untrusted"
		}
		fmt.Fprintf(w, "    %s [%s]%s\n", t.Name, t.Effect, flags)
	}
	return nil
}

func (c *pluginsCmd) orNone(s []string) string {
	if len(s) == 0 {
		return c.t(msg.None)
	}
	return strings.Join(s, ", ")
}

func (c *pluginsCmd) kind(official bool) string { return kindName(c.lang, official) }

// kindName is "Official" or "Community" in lang.
func kindName(lang msg.Lang, official bool) string {
	if official {
		return lang.T(msg.Official)
	}
	return lang.T(msg.Community)
}

// describe is one line saying what an update check (action "update"), a rollback or a
// rollforward did, in lang.
func describe(lang msg.Lang, o *host.UpdateOutcome, action string) string {
	switch o.Status {
	case host.StatusCurrent:
		return lang.T(msg.UpToDate, o.ID, o.From)
	case host.StatusApplied, host.StatusInstalled:
		switch {
		case action == "rollback":
			return lang.T(msg.RolledBack, o.ID, o.From, o.To)
		case action == "rollforward":
			return lang.T(msg.RolledForward, o.ID, o.From, o.To)
		case o.From == host.KindRemote:
			return lang.T(msg.RemoteRefreshed, o.ID, o.Note)
		case o.From == o.To:
			return lang.T(msg.SameVersion, o.ID, o.To)
		case o.Status == host.StatusInstalled:
			return lang.T(msg.Installed, o.ID, o.To, kindName(lang, true))
		}
		return lang.T(msg.Updated, o.ID, o.From, o.To)
	case host.StatusHeld:
		w := widenText(lang, o.Widenings)
		if len(o.Widenings) == 0 { // an outcome from elsewhere (JSON): its English words
			w = strings.Join(o.Widened, "; ")
		}
		return lang.T(msg.UpdateHeld, o.ID, o.To, w)
	case host.StatusSkipped:
		return lang.T(msg.NotChecked, o.ID, o.From)
	}
	return lang.T(msg.UpdateFailed, o.ID, strings.TrimPrefix(o.Error, "host: "))
}

// widenText says, in lang, how an update widens a plugin (host.Widening), the items joined.
func widenText(lang msg.Lang, ws []host.Widening) string {
	effect := func(e plugin.Effect) string {
		k, ok := map[plugin.Effect]msg.Key{plugin.EffectRead: msg.EffectRead, plugin.EffectWrite: msg.EffectWrite,
			plugin.EffectMoney: msg.EffectMoney, plugin.EffectPublic: msg.EffectPublic}[e]
		if !ok {
			return e.String()
		}
		return lang.T(k)
	}
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		switch w.Kind {
		case host.WidenCampus:
			parts = append(parts, lang.T(msg.WidenCampus, w.Name))
		case host.WidenWebsite:
			parts = append(parts, lang.T(msg.WidenWebsite, w.Name))
		case host.WidenAbility:
			parts = append(parts, lang.T(msg.WidenAbility, w.Name))
		case host.WidenCloud:
			parts = append(parts, lang.T(msg.WidenCloud, w.Name))
		case host.WidenRemote:
			parts = append(parts, lang.T(msg.WidenRemote, w.Name))
		case host.WidenNewTool:
			parts = append(parts, lang.T(msg.WidenNewTool, w.Name, effect(w.To)))
		case host.WidenEffect:
			parts = append(parts, lang.T(msg.WidenEffect, w.Name, effect(w.From), effect(w.To)))
		case host.WidenUserOnly:
			parts = append(parts, lang.T(msg.WidenUserOnly, w.Name))
		case host.WidenCallsUserOnly:
			parts = append(parts, lang.T(msg.WidenCallsUserOnly, w.Name, w.Callee))
		default:
			parts = append(parts, w.String())
		}
	}
	return strings.Join(parts, lang.T(msg.WidenSep))
}
