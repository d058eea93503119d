package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/internal/msg"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/replay"
)

func init() {
	Register(&Command{
		Path:    "tool run",
		Usage:   "[--data DIR] [--json] ID.TOOL [JSON]",
		Summary: "run a tool of an installed plugin as the user and print its result as JSON",
		Run:     toolRun,
		Flags: func(fs *flag.FlagSet) {
			new(hostFlags).register(fs)
			toolRunFlags(fs)
		},
	})
}

// toolRunFlags defines the flags of `harness tool run` besides the host's.
func toolRunFlags(fs *flag.FlagSet) *bool {
	return fs.Bool("json", false, `print {"ok":true,"result":…} or {"ok":false,"error":{…}}`)
}

// toolRun is `harness tool run ID.TOOL [JSON]`: it runs the tool
// through the host as ActorUser (permissions apply; ask does not prompt,
// the command is the user's own act), with the host's KV, campus client and
// abilities, and prints the result as JSON indented by two spaces. Exit 0
// on success, 1 when the run fails or is refused, 2 on bad usage.
func toolRun(env *Env) int {
	const name = "harness tool run"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var hf hostFlags
	hf.register(fs)
	asJSON := toolRunFlags(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	usage := func(msg string) int {
		if msg != "" {
			fmt.Fprintf(env.Stderr, "%s: %s\n", name, msg)
		}
		fmt.Fprintf(env.Stderr, "usage: %s [--data DIR] [--json] ID.TOOL [JSON]\n", name)
		return ExitUsage
	}
	if len(args) < 1 || len(args) > 2 {
		return usage("")
	}
	lang, err := hf.language()
	if err != nil {
		return usage(err.Error())
	}
	pluginID, tool, ok := host.SplitToolName(args[0])
	if !ok || pluginID == "" || tool == "" {
		return usage(fmt.Sprintf("%q: name the tool as ID.TOOL, e.g. shuttle.next", args[0]))
	}
	var input any
	if len(args) == 2 {
		if input, err = expr.FromJSON([]byte(args[1])); err != nil {
			return usage(fmt.Sprintf("the input is not JSON: %v", err))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	h, db, err := openHost(ctx, &hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	defer db.Close()
	result, runErr := h.RunTool(ctx, host.ActorUser, pluginID, tool, input)
	var nf *host.NotFound
	if errors.As(runErr, &nf) && !*asJSON {
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, hostError(lang, runErr))
		return ExitFail
	}
	// A failing step is placed as PLUGIN/FILE:LINE:COL, the file inside the installed plugin.
	if *asJSON {
		return writeRunJSON(env, pluginID, result, runErr)
	}
	if runErr != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, strings.TrimPrefix(replay.PlacedError(pluginID, runErr), "host: "))
		// requestConsent() on the command line: say which command shows the consent panel.
		if ce := (*cloud.Error)(nil); errors.As(runErr, &ce) && ce.Ask != nil {
			if ce.Ask.Provider == "" {
				fmt.Fprintln(env.Stderr, lang.T(msg.CloudConsentAskSetup, ce.Ask.Plugin))
			} else {
				fmt.Fprintln(env.Stderr, lang.T(msg.CloudConsentAsk, ce.Ask.Plugin, ce.Ask.Provider))
			}
		}
		return ExitFail
	}
	out, err := expr.ToJSON(result, "  ")
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: the result: %v\n", name, err)
		return ExitFail
	}
	fmt.Fprintf(env.Stdout, "%s\n", out)
	return ExitOK
}
