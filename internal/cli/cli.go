// Package cli implements the harness command line. Main dispatches to one subcommand per
// concept (plugin, serve, mcp, cloud, …); every command writes through the writers it is given
// and returns an exit code instead of calling os.Exit, so tests can drive it in-process.
//
// Exit codes follow SPEC-DECISIONS §9: 0 when all is well, 1 when a check or test failed, 2 on
// bad usage.
package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// Exit codes shared by every command (SPEC-DECISIONS §9).
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

// Main runs the command named by args and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	mu.Lock()
	// Longest matching path wins: "plugin validate" before "plugin".
	var best *Command
	bestLen := 0
	for path, c := range commands {
		words := strings.Fields(path)
		if len(words) <= len(args) && len(words) > bestLen && equalWords(words, args[:len(words)]) {
			best, bestLen = c, len(words)
		}
	}
	mu.Unlock()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(stdout, "")
		return ExitOK
	}
	if best == nil {
		fmt.Fprintf(stderr, "harness: unknown command %q\n", strings.Join(args, " "))
		printHelp(stderr, args[0])
		return ExitUsage
	}
	return best.Run(&Env{Args: args[bestLen:], Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func printHelp(w io.Writer, prefix string) {
	mu.Lock()
	defer mu.Unlock()
	var paths []string
	for p := range commands {
		if prefix == "" || strings.HasPrefix(p, prefix) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		for p := range commands {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	fmt.Fprintln(w, "usage: harness COMMAND [ARGS]")
	fmt.Fprintln(w)
	for _, p := range paths {
		c := commands[p]
		fmt.Fprintf(w, "  harness %s %s\n      %s\n", c.Path, c.Usage, c.Summary)
	}
}
