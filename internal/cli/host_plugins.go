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
	"github.com/pkuinfo/harness/mcpx"
	"github.com/pkuinfo/harness/plugin"
)

func init() {
	for _, c := range []struct{ path, usage, summary string }{
		{"plugins review", "[--lang zh-Hans|en] [--json] LINK|DIR", "print the review sheet of a plugin: Official or Community, what it can reach, every tool and its effect"},
		{"plugins install", "[--yes] [--lang zh-Hans|en] LINK|DIR", "show the review sheet and install exactly the reviewed content after confirmation"},
		{"plugins update", "[--json] [ID]", "check installed plugins for updates: apply unchanged declarations, hold wider ones"},
		{"plugins accept", "[--yes] [--lang zh-Hans|en] ID", "show the review sheet of a held update (its declarations are wider) and apply it after confirmation"},
		{"plugins rollback", "ID", "restore the previous version of a plugin"},
		{"plugins enable", "ID", "let a plugin's tools run again"},
		{"plugins disable", "ID", "stop a plugin's tools from running"},
		{"plugins remove", "ID", "uninstall a plugin with its storage"},
		{"plugins list", "[--json]", "list installed plugins"},
		{"plugins show", "[--json] ID", "show one installed plugin: versions, modes, reach, held update"},
		{"plugins autoupdate", "ID on|off", "switch automatic updates of one plugin on or off"},
		{"plugins mode", "ID EFFECT auto|ask|deny", "set the permission mode of one effect of a plugin"},
	} {
		Register(&Command{Path: c.path, Usage: "[--data DIR] " + c.usage, Summary: c.summary, Run: pluginsCommand(c.path, c.usage)})
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
		var hf hostFlags
		hf.register(fs)
		lang := fs.String("lang", host.LangZh, "language of the review sheet: zh-Hans or en")
		asJSON := fs.Bool("json", false, "print JSON")
		yes := fs.Bool("yes", false, "install without asking")
		args, err := parseInterleaved(fs, env.Args)
		if err != nil {
			return ExitUsage
		}
		want, ok := map[string][2]int{"update": {0, 1}, "list": {0, 0}, "autoupdate": {2, 2}, "mode": {3, 3}}[sub]
		if !ok {
			want = [2]int{1, 1}
		}
		if len(args) < want[0] || len(args) > want[1] || (*lang != host.LangZh && *lang != host.LangEn) {
			if *lang != host.LangZh && *lang != host.LangEn {
				fmt.Fprintf(env.Stderr, "%s: --lang %q: use zh-Hans or en\n", name, *lang)
			}
			fmt.Fprintf(env.Stderr, "usage: %s [--data DIR] %s\n", name, usage)
			return ExitUsage
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		h, db, err := openHost(ctx, &hf)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		defer db.Close()
		c := &pluginsCmd{env: env, h: h, ctx: ctx, name: name, lang: *lang, json: *asJSON, yes: *yes}
		err = c.run(sub, args)
		var u usageError
		switch {
		case errors.As(err, &u):
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitUsage
		case err != nil:
			fmt.Fprintf(env.Stderr, "%s: %s\n", name, strings.TrimPrefix(err.Error(), "host: "))
			return ExitFail
		}
		return ExitOK
	}
}

type usageError struct{ error }

type pluginsCmd struct {
	env        *Env
	h          *host.Host
	ctx        context.Context
	name, lang string
	json, yes  bool
}

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
		fmt.Fprint(c.out(), rv.Sheet(c.lang))
		if sub == "review" {
			return nil
		}
		if rv.Installed != "" {
			return fmt.Errorf("plugin %s is already installed (%s); use harness plugins update %s", rv.ID, rv.Installed, rv.ID)
		}
		q := "Install " + rv.ID + "?"
		if c.lang == host.LangZh {
			q = "安装 " + rv.ID + "?"
		}
		if !c.yes && !confirm(c.env.Stdin, c.out(), q) {
			fmt.Fprintln(c.out(), "not installed")
			return errors.New("the install was not confirmed")
		}
		in, err := h.Install(ctx, args[0], rv.Hash)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.out(), "installed %s %s (%s)\n", in.ID, in.Version, kind(in.Official))
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
				o, err = refreshRemote(ctx, mcpx.NewRegistry(h.Store()), in.ID)
			} else {
				o, err = h.Update(ctx, in.ID)
			}
			if err != nil {
				return err
			}
			outs = append(outs, o)
			failed = failed || o.Status == host.StatusFailed || o.Status == host.StatusMismatch
			if !c.json {
				fmt.Fprintln(c.out(), describe(o))
			}
		}
		if c.json {
			if err := c.printJSON(outs); err != nil {
				return err
			}
		}
		if failed {
			return errors.New("some updates could not be checked")
		}
		return nil
	case "accept":
		rv, widened, err := h.HeldReview(ctx, args[0])
		if err != nil {
			return err
		}
		fmt.Fprint(c.out(), rv.Sheet(c.lang))
		fmt.Fprintf(c.out(), "\n%s %s → %s widens: %s\n", rv.ID, rv.Installed, rv.Version, strings.Join(widened, "; "))
		if !c.yes && !confirm(c.env.Stdin, c.out(), "Accept the update?") {
			fmt.Fprintln(c.out(), "not updated")
			return errors.New("the update was not accepted")
		}
		o, err := h.AcceptUpdate(ctx, args[0], rv.Hash)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.out(), describe(o))
		return nil
	case "rollback":
		o, err := h.Rollback(ctx, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(c.out(), describe(o))
		return nil
	case "enable", "disable":
		if err := h.SetEnabled(ctx, args[0], sub == "enable"); err != nil {
			return err
		}
		fmt.Fprintf(c.out(), "%s: %sd\n", args[0], sub)
		return nil
	case "remove":
		if err := h.Remove(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(c.out(), "%s: removed\n", args[0])
		return nil
	case "autoupdate":
		on, ok := map[string]bool{"on": true, "off": false}[args[1]]
		if !ok {
			return usageError{fmt.Errorf("%q: use on or off", args[1])}
		}
		if err := h.SetAutoUpdate(ctx, args[0], on); err != nil {
			return err
		}
		fmt.Fprintf(c.out(), "%s: automatic updates %s\n", args[0], args[1])
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
		fmt.Fprintf(c.out(), "%s: %s tools %s\n", args[0], e, m)
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
			state := ""
			if !in.Enabled {
				state += " disabled"
			}
			if in.Held != nil {
				state += " update-held:" + in.Held.Version
			}
			version := in.Version
			if in.Kind == host.KindRemote {
				version = "-"
			}
			fmt.Fprintf(c.out(), "%-16s %-8s %-9s %-8s %s%s\n", in.ID, version, kind(in.Official), pluginKind(in.Kind), in.Name, state)
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

func modeNames(m map[plugin.Effect]host.Mode) map[string]host.Mode {
	out := map[string]host.Mode{}
	for e, mode := range m {
		out[e.String()] = mode
	}
	return out
}

func (c *pluginsCmd) show(in *host.Installed, modes map[plugin.Effect]host.Mode) error {
	w := c.out()
	fmt.Fprintf(w, "%s %s (%s)\n", in.ID, in.Version, in.Name)
	if in.Kind == host.KindRemote {
		fmt.Fprintf(w, "  kind:        %s, remote\n", kind(in.Official))
	} else {
		fmt.Fprintf(w, "  kind:        %s\n", kind(in.Official))
	}
	fmt.Fprintf(w, "  source:      %s\n", in.Source)
	fmt.Fprintf(w, "  hash:        %s\n", in.Hash)
	fmt.Fprintf(w, "  enabled:     %v\n", in.Enabled)
	fmt.Fprintf(w, "  auto-update: %v\n", in.AutoUpdate)
	if in.Note != "" {
		fmt.Fprintf(w, "  note:        %s\n", in.Note)
	}
	if in.Previous != "" {
		fmt.Fprintf(w, "  previous:    %s (harness plugins rollback %s)\n", in.Previous, in.ID)
	}
	if in.Held != nil {
		fmt.Fprintf(w, "  held update: %s: %s (harness plugins accept %s)\n", in.Held.Version, strings.Join(in.Held.Widened, "; "), in.ID)
	}
	d := in.Declarations
	fmt.Fprintf(w, "  campus:      %s\n", orNone(d.Campus))
	fmt.Fprintf(w, "  network:     %s\n", orNone(d.Network))
	fmt.Fprintf(w, "  abilities:   %s\n", orNone(d.Abilities))
	var ms []string
	for _, e := range plugin.Effects {
		ms = append(ms, fmt.Sprintf("%s=%s", e, modes[e]))
	}
	fmt.Fprintf(w, "  modes:       %s\n", strings.Join(ms, " "))
	fmt.Fprintln(w, "  tools:")
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

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// pluginKind names Installed.Kind for people: document, builtin or remote.
func pluginKind(k string) string {
	if k == "" {
		return "document"
	}
	return k
}

func kind(official bool) string {
	if official {
		return "Official"
	}
	return "Community"
}

// describe is one line saying what an update check did.
func describe(o *host.UpdateOutcome) string {
	switch o.Status {
	case host.StatusCurrent:
		return fmt.Sprintf("%s: up to date (%s)", o.ID, o.From)
	case host.StatusApplied, host.StatusInstalled:
		return fmt.Sprintf("%s: %s", o.ID, o.Note)
	case host.StatusHeld:
		return fmt.Sprintf("%s: update to %s held for review: %s (harness plugins accept %s)", o.ID, o.To, strings.Join(o.Widened, "; "), o.ID)
	case host.StatusSkipped:
		return fmt.Sprintf("%s: not checked (%s)", o.ID, o.From)
	}
	return fmt.Sprintf("%s: update check failed: %s", o.ID, strings.TrimPrefix(o.Error, "host: "))
}
