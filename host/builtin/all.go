package builtin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/i18n"
)

// Definitions returns the app's own built-in plugins, in the order the
// settings page and the system prompt list them.
func Definitions() []*Plugin {
	return []*Plugin{Focus, Todos, Timetable, Schedule, Authenticator, CardShare}
}

// All returns the app's own built-ins, compiled once per process. It
// panics when one does not compile, which the package's tests rule out.
func All() []*Compiled { return compiled() }

var compiled = sync.OnceValue(func() []*Compiled {
	defs := Definitions()
	out := make([]*Compiled, len(defs))
	for i, p := range defs {
		out[i] = MustCompile(p)
	}
	return out
})

// Option returns host.WithBuiltins for the compiled plugins cs.
func Option(cs ...*Compiled) host.Option {
	bs := make([]*host.Builtin, len(cs))
	for i, c := range cs {
		c.Builtin.Value = c
		bs[i] = c.Builtin
	}
	return host.WithBuiltins(bs...)
}

// Of returns the compiled built-in id registered with h, or nil (a
// document, a remote plugin, or no such id).
func Of(h *host.Host, id string) *Compiled {
	b := h.Builtin(id)
	if b == nil {
		return nil
	}
	c, _ := b.Value.(*Compiled)
	return c
}

// RunCommand runs the slash command name (or one of its aliases, in either
// language) of the built-in id as the user
// with input (what follows the command) in the viewer's locale l. A Run
// command's text is returned as shown, never for the model (shown true);
// a Prompt command returns its prompt in l with {{input}} replaced, to be
// sent as the user's message (shown false). A Screen command returns the
// screen's route, /p/ID/SCREEN.
func RunCommand(ctx context.Context, h *host.Host, id, name, input string, l i18n.Locale) (text string, shown bool, err error) {
	c := Of(h, id)
	if c == nil {
		return "", false, &host.NotFound{What: fmt.Sprintf("no built-in plugin %q", id)}
	}
	for _, cmd := range c.Def.Commands {
		if cmd.Name != name && !slices.Contains(cmd.Aliases, name) && !slices.Contains(c.Def.I18n.En.Commands[cmd.Name].Aliases, name) {
			continue
		}
		name := cmd.Name
		switch {
		case cmd.Run != nil:
			cx := newContext(ctx, h, id, host.ActorUser, "", nil)
			cx.Locale = l.Or()
			s, err := runCommand(cmd.Run, cx, input)
			return s, true, err
		case cmd.Prompt != "":
			p := cmd.Prompt
			if l == i18n.En && c.Def.I18n.En.Commands[name].Prompt != "" {
				p = c.Def.I18n.En.Commands[name].Prompt
			}
			return replaceInput(p, input), false, nil
		default:
			return "/p/" + id + "/" + cmd.Screen, true, nil
		}
	}
	return "", false, &host.NotFound{What: fmt.Sprintf("plugin %s has no command %q", id, name)}
}

// runCommand runs a Run command, turning a panic into an error naming the
// plugin and command.
func runCommand(run func(*Context, string) (string, error), cx *Context, input string) (s string, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = "", fmt.Errorf("builtin %s: command failed: %v", cx.Plugin, r)
		}
	}()
	return run(cx, input)
}

func replaceInput(p, input string) string { return strings.ReplaceAll(p, "{{input}}", input) }
