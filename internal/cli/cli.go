// Package cli implements the harness command line. Main dispatches to one subcommand per
// concept (plugin, serve, mcp, cloud, …); every command writes through the writers it is given
// and returns an exit code instead of calling os.Exit, so tests can drive it in-process.
//
// Help comes from the registry: `harness PATH --help` (or -h, or `harness help PATH`) prints the
// command's usage line, summary and flags to stdout and exits 0 for every registered command,
// and for every group of them (`harness plugins --help`); an unknown command exits 2 and names
// the nearest registered one by edit distance ("did you mean `plugins install`?").
//
// Exit codes follow docs/DECISIONS.md §9: 0 when all is well, 1 when a check or test failed, 2 on
// bad usage.
package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/internal/msg"
)

// Exit codes shared by every command (docs/DECISIONS.md §9).
const (
	ExitOK    = 0 // all is well
	ExitFail  = 1 // a check, test or run failed
	ExitUsage = 2 // bad usage
)

// Env is what a command receives: its arguments (after the command words) and its streams.
type Env struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Command is one subcommand, registered with Register under a path such as "plugin validate".
type Command struct {
	// Path is the space-separated command words, e.g. "plugin validate".
	Path string
	// Usage is one line: the arguments after the path, e.g. "DIR…".
	Usage string
	// Summary is one line shown in help.
	Summary string
	// Flags, when not nil, defines the command's flags on fs (the same definitions its Run
	// parses), so that --help lists them with their defaults. A command whose Usage names a
	// flag (--x) must set it; TestEveryCommandHasHelp checks that each one it names is defined.
	Flags func(fs *flag.FlagSet)
	// Run executes the command and returns an exit code.
	Run func(env *Env) int
}

var (
	mu       sync.Mutex
	commands = map[string]*Command{}
)

// Register adds a command. It panics on a duplicate path, which is a programming error found at
// start-up.
func Register(c *Command) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := commands[c.Path]; dup {
		panic("cli: duplicate command " + c.Path)
	}
	commands[c.Path] = c
}

// Commands returns the registered commands sorted by path.
func Commands() []*Command {
	mu.Lock()
	defer mu.Unlock()
	out := make([]*Command, 0, len(commands))
	for _, c := range commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// isHelp reports whether a is a request for help.
func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// wantsHelp reports whether args, before a "--", ask for help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// Main runs the command named by args and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		printHelp(stdout, nil)
		return ExitOK
	case args[0] == "--version" || args[0] == "-version":
		args = []string{"version"}
	case isHelp(args[0]):
		printHelp(stdout, nil)
		return ExitOK
	case args[0] == "help":
		return help(args[1:], stdout, stderr)
	}
	args, err := moveGlobalLang(args)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return ExitUsage
	}
	if args[0] == "help" {
		return help(args[1:], stdout, stderr)
	}
	best, n := lookup(args)
	if best == nil {
		return unknown(args, stdout, stderr)
	}
	if wantsHelp(args[n:]) {
		printCommandHelp(stdout, best)
		return ExitOK
	}
	if bad, near := unknownFlag(best, args[n:]); bad != "" {
		if near != "" {
			fmt.Fprintf(stderr, "harness %s: unknown flag %s (did you mean --%s?)\n", best.Path, bad, near)
		} else {
			fmt.Fprintf(stderr, "harness %s: unknown flag %s\n", best.Path, bad)
		}
		fmt.Fprintf(stderr, "usage: harness %s\n(`harness %s --help` for its flags)\n", strings.TrimSpace(best.Path+" "+best.Usage), best.Path)
		return ExitUsage
	}
	return best.Run(&Env{Args: args[n:], Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// unknownFlag returns the first word of args (before a "--") that is a flag c.Flags does not
// define, as typed, with the nearest defined flag's name when one is within a third of its
// length (at least 1 edit); "" when every flag is defined or c has no Flags. The value after a
// flag that takes one is skipped, so `--once -x` is not a flag. Commands parse their own flags
// after this; it only replaces the flag package's "flag provided but not defined" and its
// dump of every default with the command's usage line.
func unknownFlag(c *Command, args []string) (bad, near string) {
	if c.Flags == nil {
		return "", ""
	}
	fs := flag.NewFlagSet("harness "+c.Path, flag.ContinueOnError)
	c.Flags(fs)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return "", ""
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			best, bestD := "", 1<<30
			fs.VisitAll(func(f *flag.Flag) {
				if d := editDistance(name, f.Name); d <= max(len(f.Name)/3, 1) && d < bestD {
					best, bestD = f.Name, d
				}
			})
			return a, best
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); (!ok || !b.IsBoolFlag()) && !hasValue {
			i++ // the flag's value
		}
	}
	return "", ""
}

// moveGlobalLang lets --lang come before the command (`harness --lang en plugins list`): it
// moves a leading --lang X (or --lang=X) after the command words, where the host commands
// parse it. Where no command follows to parse it (help, a group), an unknown language is an
// error here.
func moveGlobalLang(args []string) ([]string, error) {
	var lang []string
	var value string
	switch {
	case len(args) >= 2 && (args[0] == "--lang" || args[0] == "-lang"):
		lang, value, args = args[:2], args[1], args[2:]
	case len(args) >= 1 && (strings.HasPrefix(args[0], "--lang=") || strings.HasPrefix(args[0], "-lang=")):
		_, value, _ = strings.Cut(args[0], "=")
		lang, args = args[:1], args[1:]
	default:
		return args, nil
	}
	_, n := lookup(args)
	if len(args) == 0 || isHelp(args[0]) || n == 0 {
		if _, ok := msg.Parse(value); !ok {
			return nil, fmt.Errorf("--lang %q: use zh-Hans or en", value)
		}
	}
	if len(args) == 0 || isHelp(args[0]) { // `harness --lang en` alone, or with --help
		return []string{"help"}, nil
	}
	if n == 0 { // a group or an unknown command: nothing there parses --lang
		return args, nil
	}
	out := append([]string{}, args[:n]...)
	out = append(out, lang...)
	return append(out, args[n:]...), nil
}

// lookup finds the command with the longest path that args start with ("plugin validate"
// before "plugin") and returns it with the number of words of its path.
func lookup(args []string) (*Command, int) {
	mu.Lock()
	defer mu.Unlock()
	var best *Command
	bestLen := 0
	for path, c := range commands {
		words := strings.Fields(path)
		if len(words) <= len(args) && len(words) > bestLen && equalWords(words, args[:len(words)]) {
			best, bestLen = c, len(words)
		}
	}
	return best, bestLen
}

// help is `harness help [PATH…]`.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printHelp(stdout, nil)
		return ExitOK
	}
	if c, n := lookup(args); c != nil && n == len(args) {
		printCommandHelp(stdout, c)
		return ExitOK
	}
	if g := group(args); len(g) > 0 {
		printHelp(stdout, g)
		return ExitOK
	}
	return unknown(args, stdout, stderr)
}

// group returns the commands whose path starts with the words of prefix ("plugins" → every
// "plugins …" command).
func group(prefix []string) []*Command {
	var out []*Command
	for _, c := range Commands() {
		words := strings.Fields(c.Path)
		if len(words) > len(prefix) && equalWords(prefix, words[:len(prefix)]) {
			out = append(out, c)
		}
	}
	return out
}

// unknown handles args that name no command: the words of a group alone (`harness plugins`)
// or with --help list the group; anything else is an unknown command with the nearest
// registered path suggested. Exit 0 for help, else 2.
func unknown(args []string, stdout, stderr io.Writer) int {
	// The longest prefix of args that is a group.
	var g []*Command
	n := 0
	for i := len(args); i > 0; i-- {
		if g = group(args[:i]); len(g) > 0 {
			n = i
			break
		}
	}
	if g != nil && wantsHelp(args[n:]) {
		printHelp(stdout, g)
		return ExitOK
	}
	if g != nil && onlyFlags(args[n:]) { // `harness plugins` or `harness plugins --json`
		fmt.Fprintf(stderr, "harness %s: a command is missing\n", strings.Join(args[:n], " "))
		printHelp(stderr, g)
		return ExitUsage
	}
	fmt.Fprintf(stderr, "harness: unknown command %q\n", strings.Join(args, " "))
	s := Suggest(args)
	switch {
	case s != "":
		fmt.Fprintf(stderr, "did you mean `harness %s`? (`harness %s --help` for its usage)\n", s, s)
	case g != nil:
		printHelp(stderr, g)
	default:
		fmt.Fprintln(stderr, "run `harness --help` for the list of commands")
	}
	return ExitUsage
}

// onlyFlags reports whether every word of args is a flag (starts with "-"); true for none.
// A value after a flag (--lang en) counts as a flag's.
func onlyFlags(args []string) bool {
	for i := 0; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			return false
		}
		if !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && (args[i] == "--lang" || args[i] == "-lang" || args[i] == "--data" || args[i] == "-data") {
			i++
		}
	}
	return true
}

// Suggest returns the registered command path nearest to the start of args by Levenshtein
// distance over the words (for each path of k words, args' first k words are compared with
// it), or "" when none is within a third of the path's length (at least 1 edit, at most 4);
// failing a command, a group whose words all of args nearly spell ("plugns" → "plugins").
func Suggest(args []string) string {
	best, bestD := "", 1<<30
	for _, c := range Commands() {
		k := len(strings.Fields(c.Path))
		if k > len(args) {
			k = len(args)
		}
		typed := strings.Join(args[:k], " ")
		d := editDistance(typed, c.Path)
		limit := min(max(len(c.Path)/3, 1), 4)
		if d <= limit && d < bestD {
			best, bestD = c.Path, d
		}
	}
	// A group named by all the words typed (`harness plugns` → `plugins`), when no command is
	// nearer: `harness GROUP --help` lists it.
	for _, c := range Commands() {
		words := strings.Fields(c.Path)
		if len(words) <= len(args) {
			continue
		}
		g := strings.Join(words[:len(args)], " ")
		d := editDistance(strings.Join(args, " "), g)
		if d <= min(max(len(g)/3, 1), 4) && d < bestD {
			best, bestD = g, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// printHelp lists cmds (every command when nil).
func printHelp(w io.Writer, cmds []*Command) {
	top := cmds == nil
	if top {
		cmds = Commands()
		fmt.Fprintln(w, "usage: harness COMMAND [ARGS]")
		fmt.Fprintln(w, "       harness COMMAND --help     (one command's flags)")
		fmt.Fprintln(w, "       harness --version")
	} else {
		words := strings.Fields(cmds[0].Path)
		fmt.Fprintf(w, "usage: harness %s COMMAND [ARGS]\n", strings.Join(words[:min(commonWords(cmds), len(words)-1)], " "))
	}
	fmt.Fprintln(w)
	for _, c := range cmds {
		fmt.Fprintf(w, "  harness %s\n      %s\n", strings.TrimSpace(c.Path+" "+c.Usage), c.Summary)
	}
}

// printFlags lists fs's flags as the flag package's PrintDefaults does, but spelled with two
// dashes as the usage lines and the README write them: "  --name TYPE", then the usage and a
// default that is not the zero value.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && d != "[]" {
			if typ == "string" {
				d = strconv.Quote(d)
			}
			line += " (default " + d + ")"
		}
		fmt.Fprintln(w, line)
	})
}

// commonWords is how many leading words every path of cmds shares.
func commonWords(cmds []*Command) int {
	first := strings.Fields(cmds[0].Path)
	n := len(first)
	for _, c := range cmds[1:] {
		w := strings.Fields(c.Path)
		i := 0
		for i < n && i < len(w) && w[i] == first[i] {
			i++
		}
		n = i
	}
	return n
}

// printCommandHelp is one command's help: usage, summary and flags.
func printCommandHelp(w io.Writer, c *Command) {
	fmt.Fprintf(w, "usage: harness %s\n\n%s\n", strings.TrimSpace(c.Path+" "+c.Usage), c.Summary)
	if c.Flags != nil {
		fs := flag.NewFlagSet("harness "+c.Path, flag.ContinueOnError)
		c.Flags(fs)
		has := false
		fs.VisitAll(func(*flag.Flag) { has = true })
		if has {
			fmt.Fprintln(w, "\nflags:")
			printFlags(w, fs)
		}
	}
	// A command that is also a group (`chat`, with `chat list`): its subcommands too.
	var subs []*Command
	for _, s := range Commands() {
		if strings.HasPrefix(s.Path, c.Path+" ") {
			subs = append(subs, s)
		}
	}
	if len(subs) > 0 {
		fmt.Fprintln(w, "\ncommands:")
		for _, s := range subs {
			fmt.Fprintf(w, "  harness %s\n      %s\n", strings.TrimSpace(s.Path+" "+s.Usage), s.Summary)
		}
	}
}
