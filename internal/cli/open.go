package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/expr"
)

func init() {
	Register(&Command{
		Path:    "open",
		Usage:   "[--data DIR] [--yes] 'pkuharness://dev?tool=ID&input=JSON[&actor=agent]' | 'pkuharness://dev?chat=TEXT' | 'pkuharness://plugin?src=LINK'",
		Summary: "follow a deep link of the dev build: run a tool, start a chat turn, or open a plugin's review sheet",
		Run:     openLink,
		Flags:   func(fs *flag.FlagSet) { openFlags(fs) },
	})
}

// openLink is `harness open LINK` (seed 003 "在真机上": the dev build's
// deep links). dev?tool= runs a tool as the user, or as the agent with
// actor=agent so that ask modes show their confirmation (asked on the
// terminal; without one it is declined unless --yes); dev?chat= answers
// one message as `harness chat --once` does; plugin?src= prints the
// review sheet and installs nothing. Exit 0, 1 when the run fails or is
// refused, 2 on a bad link.
func openLink(env *Env) int {
	const name = "harness open"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf, yes := openFlags(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, fmt.Sprintf(format, a...))
		return ExitUsage
	}
	if len(args) != 1 {
		return bad("give one link, e.g. 'pkuharness://dev?tool=shuttle.next&input={}'")
	}
	u, err := url.Parse(args[0])
	if err != nil || u.Scheme != "pkuharness" {
		return bad("%q is not a pkuharness:// link", args[0])
	}
	q := u.Query()
	switch {
	case u.Host == "dev" && q.Has("chat"):
		text := strings.TrimSpace(q.Get("chat"))
		if text == "" {
			return bad("chat= is empty")
		}
		a := []string{"--once", text}
		if hf.data != "" {
			a = append(a, "--data", hf.data)
		}
		if *yes {
			a = append(a, "--yes")
		}
		return chat(&Env{Args: a, Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr})
	case u.Host == "dev" && q.Has("tool"):
		return openTool(env, hf, q, *yes)
	case u.Host == "plugin":
		src := q.Get("src")
		if src == "" {
			return bad("plugin links take src=LINK")
		}
		ctx := context.Background()
		h, db, err := openHost(ctx, hf)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		defer db.Close()
		rv, err := h.Review(ctx, src)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		lang, err := hf.language()
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitUsage
		}
		fmt.Fprint(env.Stdout, rv.Sheet(string(lang)))
		fmt.Fprintf(env.Stdout, "\nNothing is installed. To install it: harness plugins install %s\n", src)
		return ExitOK
	}
	return bad("unknown link %q: use pkuharness://dev?tool=…, pkuharness://dev?chat=… or pkuharness://plugin?src=…", args[0])
}

func openTool(env *Env, hf *hostFlags, q url.Values, yes bool) int {
	const name = "harness open"
	pluginID, tool, ok := host.SplitToolName(q.Get("tool"))
	if !ok || pluginID == "" || tool == "" {
		fmt.Fprintf(env.Stderr, "%s: tool=%q: name it ID.TOOL, e.g. shuttle.next\n", name, q.Get("tool"))
		return ExitUsage
	}
	actor := host.ActorUser
	if a := q.Get("actor"); a != "" {
		var err error
		if actor, err = host.ParseActor(a); err != nil || actor == host.ActorScheduler {
			fmt.Fprintf(env.Stderr, "%s: actor=%q: use user or agent\n", name, a)
			return ExitUsage
		}
	}
	var input any
	if s := q.Get("input"); s != "" {
		var err error
		if input, err = expr.FromJSON([]byte(s)); err != nil {
			fmt.Fprintf(env.Stderr, "%s: input= is not JSON: %v\n", name, err)
			return ExitUsage
		}
	}
	ctx := context.Background()
	h, db, err := openHost(ctx, hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	res, err := h.Call(ctx, host.CallRequest{Actor: actor, Plugin: pluginID, Tool: tool, Input: input, Turn: "open-" + fmt.Sprint(os.Getpid())})
	if err == nil && res.Confirmation != nil {
		c := res.Confirmation
		in, _ := expr.ToJSON(c.Input(), "")
		fmt.Fprintf(env.Stdout, "? %s.%s (%s) wants to run with %s: %s\n", c.Plugin, c.Tool, c.Effect, in, c.Reason)
		approve := yes
		if !yes {
			if f, ok := env.Stdin.(*os.File); ok && isTerminal(f) {
				approve = confirm(env.Stdin, env.Stdout, "  allow?")
			} else {
				fmt.Fprintln(env.Stdout, "  declined: there is no terminal to ask (--yes approves)")
			}
		}
		res, err = h.Confirm(ctx, c.ID, approve)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	out, err := expr.ToJSON(res.Value, "  ")
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	fmt.Fprintln(env.Stdout, string(out))
	return ExitOK
}

// openFlags defines the flags of `harness open` on fs (--lang, from the host flags, is the
// review sheet's language).
func openFlags(fs *flag.FlagSet) (hf *hostFlags, yes *bool) {
	hf = new(hostFlags)
	hf.register(fs)
	return hf, fs.Bool("yes", false, "approve a confirmation (actor=agent) without asking")
}
