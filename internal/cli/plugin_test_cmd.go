package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pkuinfo/harness/replay"
)

func init() {
	Register(&Command{
		Path:    "plugin test",
		Usage:   "[--json] [--run REGEX] DIR…",
		Summary: "replay each plugin's recorded tests (tests/*.yaml) offline",
		Run:     pluginTest,
		Flags: func(fs *flag.FlagSet) {
			fs.Bool("json", false, "print the results as JSON")
			fs.String("run", "", "run only the tests whose label (PLUGIN/FILE: NAME) matches this regular expression")
		},
	})
}

const pluginTestUsage = "usage: harness plugin test [--json] [--run REGEX] DIR…"

// replayArgs removes --json (or -json) from args and reports whether it was there. Any other
// argument that starts with "-" (before a "--") is returned as bad.
func replayArgs(args []string) (rest []string, asJSON bool, bad string) {
	for i, a := range args {
		switch {
		case a == "--":
			return append(rest, args[i+1:]...), asJSON, ""
		case a == "--json" || a == "-json":
			asJSON = true
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, false, a
		default:
			rest = append(rest, a)
		}
	}
	return rest, asJSON, ""
}

// pluginTest is `harness plugin test [--json] [--run REGEX] DIR…` (docs/DECISIONS.md §8, §9): one
// line per test (only those whose label, such as "classrooms/free: today", matches --run), then
// `N passed, N failed`. A file argument is taken as its folder when it is a PLUGIN.md, and is
// otherwise listed as skipped (so that `plugins/*` works beside Go files). Exit 0 when every test
// passed, 1 when one failed or a plugin could not be loaded, 2 on bad usage.
func pluginTest(env *Env) int {
	var run *regexp.Regexp
	var args []string
	for i := 0; i < len(env.Args); i++ {
		a := env.Args[i]
		if a == "--" {
			args = append(args, env.Args[i:]...)
			break
		}
		if a != "--run" && a != "-run" && !strings.HasPrefix(a, "--run=") && !strings.HasPrefix(a, "-run=") {
			args = append(args, a)
			continue
		}
		_, pattern, ok := strings.Cut(a, "=")
		if !ok {
			if i+1 == len(env.Args) {
				fmt.Fprintln(env.Stderr, "harness plugin test: --run needs a regular expression")
				fmt.Fprintln(env.Stderr, pluginTestUsage)
				return ExitUsage
			}
			i++
			pattern = env.Args[i]
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			fmt.Fprintf(env.Stderr, "harness plugin test: --run: %v\n", err)
			return ExitUsage
		}
		run = re
	}
	dirs, asJSON, bad := replayArgs(args)
	if bad != "" || len(dirs) == 0 {
		if bad != "" {
			fmt.Fprintf(env.Stderr, "harness plugin test: unknown flag %s\n", bad)
		}
		fmt.Fprintln(env.Stderr, pluginTestUsage)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var rep replay.Report
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			if filepath.Base(dir) != "PLUGIN.md" {
				rep.Skipped = append(rep.Skipped, dir)
				continue
			}
			dir = filepath.Dir(dir)
		}
		r, err := replay.RunDirMatching(ctx, dir, run)
		if err != nil {
			r.Add(replay.Outcome{Plugin: dir, Problems: []string{err.Error()}})
		}
		rep.Merge(r)
	}
	var err error
	if asJSON {
		err = rep.WriteJSON(env.Stdout)
	} else {
		err = rep.WriteText(env.Stdout)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "harness plugin test: %v\n", err)
		return ExitFail
	}
	if rep.Failed > 0 {
		return ExitFail
	}
	return ExitOK
}
