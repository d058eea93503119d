package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/pkuinfo/harness/agent"
	"github.com/pkuinfo/harness/agent/agentapi"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/i18n"
)

func init() {
	Register(&Command{
		Path:    "chat",
		Usage:   "[--data DIR] [--resume ID] [--once MESSAGE] [--json] [--yes]",
		Summary: "talk to the assistant over every plugin's tools (interactive, or one message with --once)",
		Run:     chat,
		Flags:   func(fs *flag.FlagSet) { chatFlags(fs) },
	})
	Register(&Command{
		Path:    "chat list",
		Usage:   "[--data DIR] [--json]",
		Summary: "list the stored conversations, newest first",
		Run:     chatList,
		Flags:   func(fs *flag.FlagSet) { hostJSONFlags(fs) },
	})
	Register(&Command{
		Path:    "chat show",
		Usage:   "[--data DIR] [--json] ID",
		Summary: "print a stored conversation",
		Run:     chatShow,
		Flags:   func(fs *flag.FlagSet) { hostJSONFlags(fs) },
	})
	Register(&Command{
		Path:    "chat delete",
		Usage:   "[--data DIR] ID",
		Summary: "delete a stored conversation",
		Run:     chatDelete,
		Flags:   hostFlagsOnly,
	})
	RegisterServeSetup(func(ctx context.Context, h *host.Host, s *api.Server) error {
		a, err := newAgent(h, h.Store())
		if err != nil {
			return err
		}
		agentapi.Register(s, a)
		return nil
	})
}

// newAgent is the assistant on h with the model configured in the data
// directory (environment overrides applied). The provider follows the
// configuration (agent.Reloading): a model chosen later, in the web app's
// Settings or with harness model set, is used from the next round on,
// without a restart. Without a model the agent still lists and stores
// conversations; each turn fails with a message that says how to set one.
// A malformed configuration is an error at start.
func newAgent(h *host.Host, db *store.DB) (*agent.Agent, error) {
	p := &agent.Reloading{Dir: db.Dir(), Getenv: os.Getenv}
	if _, err := p.Current(); err != nil {
		return nil, err
	}
	return &agent.Agent{Host: h, Conversations: agent.NewConversations(db, h.Now), Contexts: agent.BuiltinContexts(h), Provider: p}, nil
}

// chat is `harness chat`: one message with --once (exit 0, or 1 with the
// provider's error), else an interactive session on the terminal. Without
// a terminal nothing is approved unless --yes is given (docs/DECISIONS.md §11).
func chat(env *Env) int {
	const name = "harness chat"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf, once, asJSON, yes, resume := chatFlags(fs)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: unexpected argument %q (give one message with --once \"MESSAGE\")\n", name, fs.Arg(0))
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	h, db, err := openHost(ctx, hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	a, err := newAgent(h, db)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	c := &chatSession{env: env, a: a, yes: *yes, json: *asJSON, in: bufio.NewReader(env.Stdin)}
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		c.tty = f
	}
	if *resume != "" {
		if _, err := a.Conversations.Get(ctx, *resume); err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		c.conv = *resume
	}
	if *once != "" {
		return c.send(ctx, *once)
	}
	if c.tty == nil && !*asJSON {
		fmt.Fprintf(env.Stderr, "%s: stdin is not a terminal; give one message with --once \"MESSAGE\" (lines from stdin are read as messages)\n", name)
	}
	return c.interactive(ctx)
}

// chatSession is one terminal chat.
type chatSession struct {
	env  *Env
	a    *agent.Agent
	conv string
	yes  bool
	json bool
	tty  *os.File
	in   *bufio.Reader
	term *term.Terminal
	cmds []agent.SlashCommand

	mu        sync.Mutex
	midLine   bool // text was printed without a newline
	lastError string
}

// send runs one turn; exit 0 when it ended normally, 1 when not.
func (c *chatSession) send(ctx context.Context, text string) int {
	if c.conv == "" {
		conv, err := c.a.Conversations.Create(ctx, text)
		if err != nil {
			fmt.Fprintf(c.env.Stderr, "harness chat: %v\n", err)
			return ExitFail
		}
		c.conv = conv.ID
	}
	// Ctrl-C cancels this turn, not the program.
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-tctx.Done():
		}
	}()
	c.lastError = ""
	err := c.a.Turn(tctx, c.conv, text, c, c.show)
	if err != nil {
		var te *agent.TurnError
		if !errors.As(err, &te) {
			fmt.Fprintf(c.env.Stderr, "harness chat: %v\n", err)
		}
		return ExitFail
	}
	return ExitOK
}

func (c *chatSession) out() io.Writer {
	if c.term != nil {
		return c.term
	}
	return c.env.Stdout
}

// show prints one event: text as it streams, a line per tool call and
// result, errors on stderr; with --json, the event as one JSON line.
func (c *chatSession) show(ev agent.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.out()
	if c.json {
		b, _ := json.Marshal(ev)
		fmt.Fprintln(w, string(b))
		if ev.Type == "error" {
			c.lastError = ev.Message
			fmt.Fprintf(c.env.Stderr, "harness chat: %s\n", ev.Message)
		}
		return
	}
	nl := func() {
		if c.midLine {
			fmt.Fprintln(w)
			c.midLine = false
		}
	}
	switch ev.Type {
	case "text":
		fmt.Fprint(w, ev.Text)
		c.midLine = !strings.HasSuffix(ev.Text, "\n")
	case "tool_call":
		nl()
		in := string(ev.Input)
		if r := []rune(in); len(r) > 120 {
			in = string(r[:117]) + "…"
		}
		effect := ev.Effect
		if effect == "" {
			effect = "?"
		}
		fmt.Fprintf(w, "→ %s %s [%s]\n", ev.Tool, in, effect)
	case "tool_result":
		nl()
		switch {
		case ev.Error != "":
			fmt.Fprintf(w, "  ✗ %s: %s\n", ev.Tool, ev.Error)
		default:
			note := ""
			if ev.Untrusted {
				note = " (untrusted data)"
			}
			fmt.Fprintf(w, "  ✓ %s %d ms%s\n", ev.Tool, ev.DurationMs, note)
		}
	case "error":
		nl()
		c.lastError = ev.Message
		fmt.Fprintf(c.env.Stderr, "harness chat: %s\n", ev.Message)
	case "done":
		nl()
	}
}

// Confirm asks about a confirmation: --yes approves, a terminal asks y/n,
// anything else declines.
func (c *chatSession) Confirm(ctx context.Context, ev *agent.Event) (bool, error) {
	c.mu.Lock()
	w := c.out()
	if c.midLine {
		fmt.Fprintln(w)
		c.midLine = false
	}
	c.mu.Unlock()
	if c.json {
		if c.yes {
			return true, nil
		}
		return false, nil
	}
	fmt.Fprintf(w, "? %s (%s) wants to run with %s: %s\n", ev.Tool, ev.Effect, ev.Input, ev.Reason)
	switch {
	case c.yes:
		fmt.Fprintln(w, "  approved (--yes)")
		return true, nil
	case c.tty == nil:
		fmt.Fprintln(w, "  declined: there is no terminal to ask (--yes approves)")
		return false, nil
	}
	a, err := c.readLine(ctx, "  allow? [y/N] ")
	if err != nil {
		return false, err
	}
	a = strings.ToLower(strings.TrimSpace(a))
	return a == "y" || a == "yes", nil
}

// Answer asks for a question's fields on the terminal; without one it
// declines.
func (c *chatSession) Answer(ctx context.Context, ev *agent.Event) (map[string]any, error) {
	w := c.out()
	if c.tty == nil || c.json {
		if !c.json {
			fmt.Fprintf(w, "? %s: %s — declined: there is no terminal to ask\n", ev.Tool, ev.Message)
		}
		return nil, nil
	}
	fmt.Fprintf(w, "? %s: %s\n", ev.Tool, ev.Message)
	var fields []struct{ Name, Label string }
	_ = json.Unmarshal(ev.Fields, &fields)
	out := map[string]any{}
	for _, f := range fields {
		label := f.Label
		if label == "" {
			label = f.Name
		}
		v, err := c.readLine(ctx, "  "+label+": ")
		if err != nil {
			return nil, err
		}
		if v = strings.TrimSpace(v); v == "" {
			return nil, nil
		}
		out[f.Name] = v
	}
	return out, nil
}

// readLine reads one line: from the raw-mode terminal with line editing
// and completion, or from stdin.
func (c *chatSession) readLine(ctx context.Context, prompt string) (string, error) {
	if c.tty == nil {
		fmt.Fprint(c.env.Stdout, prompt)
		line, err := c.in.ReadString('\n')
		if err != nil && line == "" {
			return "", err
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	fd := int(c.tty.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return "", err
	}
	defer term.Restore(fd, old)
	if c.term == nil {
		c.term = term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{c.tty, c.env.Stdout}, "")
		c.term.AutoCompleteCallback = c.complete
	}
	c.term.SetPrompt(prompt)
	line, err := c.term.ReadLine()
	c.term.SetPrompt("")
	return line, err
}

// complete completes a "/" word on Tab: the only match, or the longest
// common prefix and the list.
func (c *chatSession) complete(line string, pos int, key rune) (string, int, bool) {
	if key != '\t' || !strings.HasPrefix(line, "/") || strings.Contains(line[:pos], " ") {
		return "", 0, false
	}
	names := append(agent.Complete(c.cmds, line[:pos]), builtinCompletions(line[:pos])...)
	sort.Strings(names)
	switch len(names) {
	case 0:
		return "", 0, false
	case 1:
		return names[0] + " ", len(names[0]) + 1, true
	}
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	fmt.Fprintf(c.term, "\n%s\n", strings.Join(names, "  "))
	return p, len(p), true
}

var chatCommands = []struct{ name, help string }{
	{"/help", "this list and the plugins' commands"},
	{"/new", "start a new conversation"},
	{"/list", "list the stored conversations"},
	{"/resume", "ID: continue a stored conversation"},
	{"/tools", "the tools the assistant is offered"},
	{"/exit", "leave (also Ctrl-D)"},
}

func builtinCompletions(prefix string) []string {
	var out []string
	for _, c := range chatCommands {
		if strings.HasPrefix(c.name, prefix) {
			out = append(out, c.name)
		}
	}
	return out
}

// interactive reads messages until /exit or end of input.
func (c *chatSession) interactive(ctx context.Context) int {
	var err error
	if c.cmds, err = agent.Commands(ctx, c.a.Host); err != nil {
		fmt.Fprintf(c.env.Stderr, "harness chat: %v\n", err)
		return ExitFail
	}
	if c.tty != nil {
		fmt.Fprintln(c.env.Stdout, "PKU harness — type a message, / for commands (Tab completes), Ctrl-C cancels a turn, Ctrl-D leaves.")
	}
	code := ExitOK
	for {
		line, err := c.readLine(ctx, "> ")
		if err != nil {
			return code
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/") {
			text, quit := c.slash(ctx, line)
			if quit {
				return code
			}
			if text == "" {
				continue
			}
			line = text
		}
		code = c.send(ctx, line)
	}
}

// slash handles a / command: text is a prompt command's message to send.
func (c *chatSession) slash(ctx context.Context, line string) (text string, quit bool) {
	w := c.out()
	word, rest, _ := strings.Cut(line, " ")
	switch word {
	case "/exit", "/quit":
		return "", true
	case "/help":
		for _, b := range chatCommands {
			fmt.Fprintf(w, "  %-10s %s\n", b.name, b.help)
		}
		for _, cmd := range c.cmds {
			hint := ""
			if cmd.ArgHint != "" {
				hint = " [" + cmd.ArgHint + "]"
			}
			alias := ""
			if len(cmd.Aliases) > 0 {
				alias = " (/" + strings.Join(cmd.Aliases, ", /") + ")"
			}
			fmt.Fprintf(w, "  /%-9s %s%s%s\n", cmd.Name, cmd.Description, hint, alias)
		}
		return "", false
	case "/new":
		c.conv = ""
		fmt.Fprintln(w, "  a new conversation starts with your next message")
		return "", false
	case "/list":
		cs, err := c.a.Conversations.List(ctx, 20)
		if err != nil {
			fmt.Fprintf(c.env.Stderr, "harness chat: %v\n", err)
		}
		for _, cv := range cs {
			fmt.Fprintf(w, "  %s  %s  %s\n", cv.ID, cv.Updated.Format("2006-01-02 15:04"), cv.Title)
		}
		return "", false
	case "/resume":
		id := strings.TrimSpace(rest)
		if _, err := c.a.Conversations.Get(ctx, id); err != nil {
			fmt.Fprintf(c.env.Stderr, "harness chat: %v\n", err)
			return "", false
		}
		c.conv = id
		fmt.Fprintf(w, "  continuing %s\n", id)
		return "", false
	case "/tools":
		tools, err := c.a.Host.AgentTools(ctx)
		if err != nil {
			fmt.Fprintf(c.env.Stderr, "harness chat: %v\n", err)
		}
		for _, t := range tools {
			note := ""
			if t.OnDemand {
				note = " (after plugins__use)"
			}
			fmt.Fprintf(w, "  %s [%s, %s]%s\n", host.ModelName(t.Plugin, t.Tool), t.Effect, t.Mode, note)
		}
		return "", false
	}
	cmd, input, ok := agent.FindCommand(c.cmds, line)
	if !ok {
		fmt.Fprintf(c.env.Stderr, "harness chat: unknown command %s (/help lists them)\n", word)
		return "", false
	}
	if builtin.Of(c.a.Host, cmd.Plugin) != nil {
		// A built-in's command: Run shows its text, Prompt is sent, Screen names the page.
		text, shown, err := builtin.RunCommand(ctx, c.a.Host, cmd.Plugin, cmd.Command, input, i18n.Zh)
		if err != nil {
			fmt.Fprintf(c.env.Stderr, "harness chat: /%s: %v\n", cmd.Name, err)
			return "", false
		}
		if !shown {
			return text, false
		}
		fmt.Fprintln(w, text)
		return "", false
	}
	switch {
	case cmd.Prompt != "":
		return cmd.PromptText(input), false
	case cmd.Tool != "":
		out, err := cmd.Run(ctx, c.a.Host)
		if err != nil {
			fmt.Fprintf(c.env.Stderr, "harness chat: /%s: %v\n", cmd.Name, err)
			return "", false
		}
		fmt.Fprintln(w, out)
	default:
		fmt.Fprintf(w, "  /%s opens a screen of %s; open it in the web app (harness serve)\n", cmd.Name, cmd.Plugin)
	}
	return "", false
}

func chatList(env *Env) int {
	const name = "harness chat list"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf, asJSON := hostJSONFlags(fs)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	hf.readOnly = true
	ctx := context.Background()
	h, db, err := openHost(ctx, hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	cs, err := agent.NewConversations(db, h.Now).List(ctx, 0)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"conversations": cs})
		fmt.Fprintln(env.Stdout, string(b))
		return ExitOK
	}
	tw := newTable(env.Stdout)
	fmt.Fprintln(tw, "ID\tUPDATED\tTOKENS\tTITLE")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.ID, c.Updated.Format("2006-01-02 15:04"), c.Usage.Total(), c.Title)
	}
	tw.Flush()
	return ExitOK
}

func chatShow(env *Env) int {
	const name = "harness chat show"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf, asJSON := hostJSONFlags(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	if len(args) != 1 {
		fmt.Fprintf(env.Stderr, "usage: %s [--data DIR] [--json] ID\n", name)
		return ExitUsage
	}
	hf.readOnly = true
	ctx := context.Background()
	h, db, err := openHost(ctx, hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	c, err := agent.NewConversations(db, h.Now).Get(ctx, args[0])
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if *asJSON {
		b, _ := json.Marshal(c)
		fmt.Fprintln(env.Stdout, string(b))
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "%s  %s\n", c.ID, c.Title)
	for _, m := range c.Messages {
		switch m.Role {
		case agent.RoleUser:
			fmt.Fprintf(env.Stdout, "\n> %s\n", m.Content)
		case agent.RoleAssistant:
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(env.Stdout, "→ %s %s\n", tc.Name, tc.Arguments)
			}
			if m.Content != "" {
				fmt.Fprintln(env.Stdout, m.Content)
			}
		case agent.RoleTool:
			mark := "✓"
			if m.Failed {
				mark = "✗"
			}
			content := m.Content
			if r := []rune(content); len(r) > 200 {
				content = string(r[:197]) + "…"
			}
			fmt.Fprintf(env.Stdout, "  %s %s %s\n", mark, m.Tool, content)
		}
	}
	return ExitOK
}

func chatDelete(env *Env) int {
	const name = "harness chat delete"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf := new(hostFlags)
	hf.register(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	if len(args) != 1 {
		fmt.Fprintf(env.Stderr, "usage: %s [--data DIR] ID\n", name)
		return ExitUsage
	}
	ctx := context.Background()
	h, db, err := openHost(ctx, hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	if err := agent.NewConversations(db, h.Now).Delete(ctx, args[0]); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	fmt.Fprintf(env.Stdout, "deleted %s\n", args[0])
	return ExitOK
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// chatFlags defines the flags of `harness chat` on fs.
func chatFlags(fs *flag.FlagSet) (hf *hostFlags, once *string, asJSON, yes *bool, resume *string) {
	hf = new(hostFlags)
	hf.register(fs)
	once = fs.String("once", "", "answer this one message and exit")
	asJSON = fs.Bool("json", false, "print one JSON event per line (docs/HOST-API.md \"Conversations\")")
	yes = fs.Bool("yes", false, "approve every confirmation (for scripts)")
	resume = fs.String("resume", "", "continue the stored conversation ID")
	return hf, once, asJSON, yes, resume
}

// hostJSONFlags defines the host flags and --json on fs, for commands with no others.
func hostJSONFlags(fs *flag.FlagSet) (hf *hostFlags, asJSON *bool) {
	hf = new(hostFlags)
	hf.register(fs)
	return hf, fs.Bool("json", false, "print JSON")
}
