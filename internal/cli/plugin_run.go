package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
	"github.com/pkuinfo/harness/replay"
)

const pluginRunUsage = "usage: harness plugin run [--json] [--record FILE] DIR TOOL [JSON]"

func init() {
	Register(&Command{
		Path:    "plugin run",
		Usage:   "[--json] [--record FILE] DIR TOOL [JSON]",
		Summary: "run a tool live against public hosts and print its result as JSON",
		Run:     pluginRun,
		Flags: func(fs *flag.FlagSet) {
			fs.Bool("json", false, `print {"ok":true,"result":…} or {"ok":false,"error":{…}}`)
			fs.String("record", "", "also save the run (the replies received and the result) as a recorded test appended to this file")
		},
	})
}

// liveCampus refuses campus requests: only the host holds the user's signed-in session.
type liveCampus struct{}

// Do implements interp.CampusClient by refusing.
func (liveCampus) Do(_ context.Context, service string, req *http.Request) (*http.Response, error) {
	return nil, &interp.Error{Kind: interp.KindSession, Msg: fmt.Sprintf(
		"campus request %s %s:%s needs the host's signed-in session; `harness plugin run` reaches public hosts only (record the reply in tests/*.yaml with campus: %s)",
		req.Method, service, req.URL, service)}
}

// liveAbilities refuses host abilities: they are features of the host app.
type liveAbilities struct{}

// Call implements interp.Abilities by refusing.
func (liveAbilities) Call(_ context.Context, c interp.AbilityCall) (any, error) {
	return nil, &interp.Error{Kind: interp.KindAbility, Msg: fmt.Sprintf(
		"ability %s.%s needs the host app; `harness plugin run` has no host abilities (answer it in a recorded test with abilities: { %s.%s: … })",
		c.Group, c.Op, c.Group, c.Op)}
}

// pluginRun is `harness plugin run [--json] DIR TOOL [JSON]` (seed 004 "Test", docs/DECISIONS.md §9):
// it loads and validates the plugin, runs TOOL with the JSON input (default {}) over the real
// network (public addresses only, the plugin's network allowlist), with campus requests and
// abilities refused and a KV that lives for the run, and prints the result as JSON indented by
// two spaces. With --json it prints {"ok":true,"result":…} or {"ok":false,"error":{…}} instead.
// With --record FILE it also saves the run as a recorded test (replay.EncodeTest): the replies
// it got, and the result as expect (or the error as expectError), appended to FILE.
// Exit 0 on success, 1 when the plugin does not validate or the run fails, 2 on bad usage.
func pluginRun(env *Env) int {
	var record string
	var rest []string
	for i := 0; i < len(env.Args); i++ {
		a := env.Args[i]
		switch {
		case a == "--":
			rest = append(rest, env.Args[i:]...)
			i = len(env.Args)
		case a == "--record" || a == "-record":
			if i+1 == len(env.Args) {
				fmt.Fprintln(env.Stderr, "harness plugin run: --record needs a file")
				fmt.Fprintln(env.Stderr, pluginRunUsage)
				return ExitUsage
			}
			i++
			record = env.Args[i]
		case strings.HasPrefix(a, "--record=") || strings.HasPrefix(a, "-record="):
			_, record, _ = strings.Cut(a, "=")
		default:
			rest = append(rest, a)
		}
	}
	args, asJSON, bad := replayArgs(rest)
	if bad != "" || len(args) < 2 || len(args) > 3 {
		if bad != "" {
			fmt.Fprintf(env.Stderr, "harness plugin run: unknown flag %s\n", bad)
		}
		fmt.Fprintln(env.Stderr, pluginRunUsage)
		return ExitUsage
	}
	dir, tool := args[0], args[1]
	var input any = expr.NewObject(0)
	if len(args) == 3 {
		v, err := expr.FromJSON([]byte(args[2]))
		if err != nil {
			fmt.Fprintf(env.Stderr, "harness plugin run: the input is not JSON: %v\n", err)
			return ExitUsage
		}
		input = v
	}
	p, diags, err := plugin.LoadDir(dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "harness plugin run: %v\n", err)
		return ExitFail
	}
	failed := false
	for _, d := range diags {
		if d.Severity == diag.Error {
			d.File = filepath.Join(dir, d.File)
			fmt.Fprintln(env.Stderr, d.String())
			failed = true
		}
	}
	if failed {
		fmt.Fprintf(env.Stderr, "harness plugin run: %s does not validate\n", dir)
		return ExitFail
	}
	if p.Tool(tool) == nil {
		var names []string
		for _, t := range p.Tools {
			names = append(names, t.Name)
		}
		fmt.Fprintf(env.Stderr, "harness plugin run: plugin %s has no tool %q (tools: %s)\n", p.Manifest.ID, tool, strings.Join(names, ", "))
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := interp.Options{
		Campus:    liveCampus{},
		Abilities: liveAbilities{},
		KV:        kvstore.NewMemory(),
	}
	var rec *replay.Recording
	if record != "" {
		rec = replay.NewRecording(interp.NewTransport(false), time.Now())
		opts.Transport = rec.Transport()
		opts.Now = rec.Now
	}
	result, runErr := interp.Run(ctx, p, tool, input, opts)
	if rec != nil && ctx.Err() == nil { // an interrupted run is not worth a test
		n, err := rec.Save(ctx, p, record, tool, input, result, runErr)
		if err != nil {
			// The run's own outcome is still shown, but the command fails: what was asked for
			// (a recorded test) was not made.
			fmt.Fprintf(env.Stderr, "harness plugin run: --record: %v\n", err)
			if code := showRun(env, dir, asJSON, result, runErr); code != ExitOK {
				return code
			}
			return ExitFail
		}
		fmt.Fprintf(env.Stderr, "harness plugin run: recorded %s (%d responses); trim the bodies to what the tool needs\n", record, n)
	}
	return showRun(env, dir, asJSON, result, runErr)
}

// showRun prints a run's result (or error) as `plugin run` does and returns its exit code.
func showRun(env *Env, dir string, asJSON bool, result any, runErr error) int {
	if asJSON {
		return writeRunJSON(env, dir, result, runErr)
	}
	if runErr != nil {
		fmt.Fprintf(env.Stderr, "harness plugin run: %s\n", replay.PlacedError(dir, runErr))
		return ExitFail
	}
	out, err := expr.ToJSON(result, "  ")
	if err != nil {
		fmt.Fprintf(env.Stderr, "harness plugin run: the result: %v\n", err)
		return ExitFail
	}
	fmt.Fprintf(env.Stdout, "%s\n", out)
	return ExitOK
}

// writeRunJSON prints the --json form of a run's outcome.
func writeRunJSON(env *Env, dir string, result any, runErr error) int {
	if runErr == nil {
		out, err := expr.ToJSON(result, "")
		if err == nil {
			// json.Indent keeps the result's key order, which decoding would lose.
			var buf bytes.Buffer
			if err = json.Indent(&buf, []byte(`{"ok":true,"result":`+string(out)+`}`), "", "  "); err == nil {
				buf.WriteByte('\n')
				_, _ = env.Stdout.Write(buf.Bytes())
				return ExitOK
			}
		}
		runErr = fmt.Errorf("the result: %w", err)
	}
	type errJSON struct {
		Kind    string `json:"kind,omitempty"`
		Message string `json:"message"`
		File    string `json:"file,omitempty"`
		Line    int    `json:"line,omitempty"`
		Col     int    `json:"col,omitempty"`
		Step    string `json:"step,omitempty"`
	}
	e := errJSON{Message: runErr.Error()}
	var ie *interp.Error
	if errors.As(runErr, &ie) {
		e = errJSON{Kind: ie.Kind, Message: ie.Msg, Line: ie.Pos.Line, Col: ie.Pos.Col, Step: ie.Step}
		if ie.File != "" {
			e.File = filepath.Join(dir, ie.File)
		}
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		OK    bool    `json:"ok"`
		Error errJSON `json:"error"`
	}{false, e})
	return ExitFail
}
