package agent

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/expr"
)

// SlashCommand is one entry of the chat's / menu (seed 003 "快捷指令"):
// a plugin's command under its menu name (the plugin id is prefixed,
// "/plugin:name", when two plugins use one name), with its aliases and
// argument hint, and what it does: Prompt is sent as the person's message
// with {{input}} filled; Tool runs a tool as the user and shows its
// result; Screen opens a screen (in the web app).
type SlashCommand struct {
	Name        string   `json:"name"`
	Plugin      string   `json:"plugin"`
	Command     string   `json:"command"`
	Description string   `json:"description"`
	Aliases     []string `json:"aliases,omitempty"`
	ArgHint     string   `json:"argHint,omitempty"`
	Prompt      string   `json:"prompt,omitempty"`
	Tool        string   `json:"tool,omitempty"`
	Screen      string   `json:"screen,omitempty"`
	args        any
}

// Commands returns every enabled plugin's commands as one menu, sorted by
// name; two plugins with one name both become "plugin:name", and an alias
// two commands share is dropped from both.
func Commands(ctx context.Context, h *host.Host) ([]SlashCommand, error) {
	list, err := h.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []SlashCommand
	count := map[string]int{}
	for _, in := range list {
		if !in.Enabled || in.Kind == host.KindRemote {
			continue
		}
		p, err := h.Plugin(ctx, in.ID)
		if err != nil || p.Manifest == nil {
			continue
		}
		for _, c := range p.Manifest.Commands {
			out = append(out, SlashCommand{Name: c.Name, Plugin: in.ID, Command: c.Name, Description: c.Description,
				Aliases: slices.Clone(c.Aliases), ArgHint: c.ArgHint, Prompt: c.Prompt, Tool: c.Tool, Screen: c.Screen, args: c.Args})
			count[c.Name]++
		}
	}
	aliases := map[string]int{}
	for i := range out {
		if count[out[i].Command] > 1 {
			out[i].Name = out[i].Plugin + ":" + out[i].Command
		}
		for _, a := range out[i].Aliases {
			aliases[a]++
		}
	}
	for i := range out {
		out[i].Aliases = slices.DeleteFunc(out[i].Aliases, func(a string) bool { return aliases[a] > 1 || count[a] > 0 })
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FindCommand resolves a line starting with "/" against cmds: the command
// named by the first word (by name, plugin:name or alias) and the rest of
// the line as its input. ok is false when no command has that name.
func FindCommand(cmds []SlashCommand, line string) (c *SlashCommand, input string, ok bool) {
	line = strings.TrimPrefix(strings.TrimSpace(line), "/")
	word, rest, _ := strings.Cut(line, " ")
	for i := range cmds {
		if cmds[i].Name == word || cmds[i].Plugin+":"+cmds[i].Command == word || slices.Contains(cmds[i].Aliases, word) {
			return &cmds[i], strings.TrimSpace(rest), true
		}
	}
	return nil, "", false
}

// Complete returns the menu names (with "/") that start with prefix
// (which starts with "/"), aliases included, sorted.
func Complete(cmds []SlashCommand, prefix string) []string {
	p := strings.TrimPrefix(prefix, "/")
	var out []string
	for _, c := range cmds {
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if strings.HasPrefix(n, p) {
				out = append(out, "/"+n)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// PromptText is a prompt command's message: Prompt with every {{input}}
// replaced by input.
func (c *SlashCommand) PromptText(input string) string {
	return strings.ReplaceAll(c.Prompt, "{{input}}", input)
}

// Run runs a tool command as the user (a person's own act, seed 003
// "快捷指令": run commands are not sent to the model) and returns the
// result as JSON text. It is an error for a prompt or screen command.
func (c *SlashCommand) Run(ctx context.Context, h *host.Host) (string, error) {
	if c.Tool == "" {
		return "", fmt.Errorf("/%s is not a run command", c.Name)
	}
	pluginID, tool := c.Plugin, c.Tool
	if p, t, ok := host.SplitToolName(c.Tool); ok {
		pluginID, tool = p, t
	}
	res, err := h.Call(ctx, host.CallRequest{Actor: host.ActorUser, Plugin: pluginID, Tool: tool, Input: c.args})
	if err != nil {
		return "", err
	}
	b, err := expr.ToJSON(res.Value, "  ")
	return string(b), err
}
