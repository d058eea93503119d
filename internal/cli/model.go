package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/agent"
	"github.com/pkuinfo/harness/agent/mock"
)

func init() {
	Register(&Command{
		Path:    "model set",
		Usage:   "[--data DIR] [--preset NAME] [--base-url URL] [--model NAME] [--api-key-stdin]",
		Summary: "choose the assistant's OpenAI-compatible model (stored in the data directory; the key 0600, never printed)",
		Run:     modelSet,
		Flags:   func(fs *flag.FlagSet) { modelSetFlags(fs) },
	})
	Register(&Command{
		Path:    "model show",
		Usage:   "[--data DIR] [--json]",
		Summary: "show the assistant's model: base URL, model, whether a key is set, and where each comes from",
		Run:     modelShow,
		Flags:   func(fs *flag.FlagSet) { hostJSONFlags(fs) },
	})
	Register(&Command{
		Path:    "model test",
		Usage:   "[--data DIR] [--json]",
		Summary: "try the assistant's model with a real request (the model list, else a one-token completion) and say whether it answers",
		Run:     modelTest,
		Flags:   func(fs *flag.FlagSet) { hostJSONFlags(fs) },
	})
	Register(&Command{
		Path:    "model presets",
		Usage:   "[--json]",
		Summary: "list the model services with a preset (DeepSeek, Qwen, Kimi, GLM, SiliconFlow, OpenAI, Ollama, vLLM, the mock)",
		Run:     modelPresets,
		Flags:   func(fs *flag.FlagSet) { jsonFlag(fs) },
	})
	Register(&Command{
		Path:    "model mock",
		Usage:   "[--addr HOST:PORT] [--delay DURATION]",
		Summary: "serve the scripted mock model (OpenAI-compatible, model mock-agent) on " + mock.DefaultAddr,
		Run:     modelMock,
		Flags:   func(fs *flag.FlagSet) { mockFlags(fs) },
	})
}

// modelSet is `harness model set`: base URL and model from --preset and/or
// the flags, the key from stdin with --api-key-stdin (one line). Nothing
// is written when a flag is bad. Exit 0, 1 when the files cannot be
// written, 2 on bad usage.
func modelSet(env *Env) int {
	const name = "harness model set"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf, preset, baseURL, model, keyStdin := modelSetFlags(fs)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: unexpected argument %q (the key is read from stdin with --api-key-stdin, never from the command line)\n", name, fs.Arg(0))
		return ExitUsage
	}
	dir, err := hostDataDir(hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	cur, _, err := agent.LoadConfig(dir, nil)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if *preset == "" && *baseURL == "" && *model == "" && !*keyStdin {
		fmt.Fprintf(env.Stderr, "usage: %s [--preset NAME] [--base-url URL] [--model NAME] [--api-key-stdin]\n", name)
		return ExitUsage
	}
	ch := agent.Change{Preset: *preset, BaseURL: *baseURL, Model: *model}
	if *keyStdin {
		line, err := bufio.NewReader(env.Stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintf(env.Stderr, "%s: reading the key: %v\n", name, err)
			return ExitFail
		}
		k := strings.TrimSpace(line)
		ch.APIKey = &k
	}
	done, err := agent.Apply(cur, ch, os.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, modelChangeText(err))
		return ExitUsage
	}
	cur = done.Config
	if err := agent.SaveConfig(dir, cur, done.SetKey); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	key := "unchanged"
	if done.KeyDropped {
		key = fmt.Sprintf("removed: it was entered for %s; give this service's key with --api-key-stdin", done.DroppedFor)
	}
	if *keyStdin {
		key = "removed"
		if cur.APIKey != "" {
			key = "stored"
		}
	}
	fmt.Fprintf(env.Stdout, "model: %s at %s (API key %s)\n", cur.Model, cur.BaseURL, key)
	return ExitOK
}

func modelShow(env *Env) int {
	const name = "harness model show"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf, asJSON := hostJSONFlags(fs)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	dir, err := hostDataDir(hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	c, src, err := agent.LoadConfig(dir, os.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"baseURL": c.BaseURL, "model": c.Model, "keySet": c.APIKey != "", "keyHint": agent.KeyHint(c.APIKey),
			"from": map[string]string{"baseURL": src.BaseURL, "model": src.Model, "key": src.APIKey}})
		fmt.Fprintln(env.Stdout, string(b))
		return ExitOK
	}
	from := func(s string) string {
		switch s {
		case "env":
			return " (from the environment)"
		case "":
			return ""
		}
		return ""
	}
	if c.BaseURL == "" && c.Model == "" {
		fmt.Fprintln(env.Stdout, "no model is set: harness model set --preset NAME (harness model presets), or set $OPENAI_BASE_URL and $HARNESS_MODEL")
		return ExitOK
	}
	key := "not set"
	if c.APIKey != "" {
		key = "set" + from(src.APIKey)
		if h := agent.KeyHint(c.APIKey); h != "set" {
			key = "set, ending " + h + from(src.APIKey)
		}
	}
	fmt.Fprintf(env.Stdout, "base URL: %s%s\nmodel:    %s%s\nAPI key:  %s\n", c.BaseURL, from(src.BaseURL), c.Model, from(src.Model), key)
	return ExitOK
}

// modelTest is `harness model test`: the configured model (environment
// overrides applied) tried with agent.OpenAI.Test. Exit 0 when it answers,
// 1 when it does not or no model is set, 2 on bad usage.
func modelTest(env *Env) int {
	const name = "harness model test"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hf, asJSON := hostJSONFlags(fs)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	dir, err := hostDataDir(hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	c, _, err := agent.LoadConfig(dir, os.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if c.BaseURL == "" || c.Model == "" {
		fmt.Fprintf(env.Stderr, "%s: no model is set: harness model set --preset NAME (harness model presets)\n", name)
		return ExitFail
	}
	p, err := agent.NewOpenAI(c, nil)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	ctx, cancel := context.WithTimeout(context.Background(), modelTestTimeout)
	defer cancel()
	res, err := p.Test(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, redact(err.Error(), c.APIKey))
		return ExitFail
	}
	if *asJSON {
		b, _ := json.Marshal(res)
		fmt.Fprintln(env.Stdout, string(b))
		return ExitOK
	}
	how := "model list"
	if res.Method == "completion" {
		how = "one-token completion"
	}
	fmt.Fprintf(env.Stdout, "%s answers (%s, %d ms): model %s", res.Provider, how, res.Millis, res.Model)
	if res.ModelListed != nil && !*res.ModelListed {
		fmt.Fprintf(env.Stdout, " is not among the %d listed (check the name)", len(res.Models))
	}
	fmt.Fprintln(env.Stdout)
	return ExitOK
}

func modelPresets(env *Env) int {
	fs := flag.NewFlagSet("harness model presets", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := jsonFlag(fs)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if *asJSON {
		b, _ := json.MarshalIndent(agent.Presets, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		return ExitOK
	}
	tw := newTable(env.Stdout)
	fmt.Fprintln(tw, "PRESET\tSERVICE\tBASE URL\tDEFAULT MODEL")
	for _, p := range agent.Presets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.Title, p.BaseURL, p.Model)
	}
	tw.Flush()
	fmt.Fprintln(env.Stdout, "\nharness model set --preset NAME --api-key-stdin < key.txt (any --model overrides the default)")
	return ExitOK
}

// modelMock is `harness model mock`: the mock model until interrupted.
func modelMock(env *Env) int {
	const name = "harness model mock"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	addr, delay := mockFlags(fs)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	srv := &http.Server{Handler: mock.New(mock.Options{Delay: *delay}), ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Fprintf(env.Stdout, "%s: http://%s/v1, model %q\n  harness model set --base-url http://%s/v1 --model %s\n", name, ln.Addr(), mock.Model, ln.Addr(), mock.Model)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	return ExitOK
}

// modelSetFlags defines the flags of `harness model set` on fs.
func modelSetFlags(fs *flag.FlagSet) (hf *hostFlags, preset, baseURL, model *string, keyStdin *bool) {
	hf = new(hostFlags)
	hf.register(fs)
	preset = fs.String("preset", "", "start from a preset (harness model presets)")
	baseURL = fs.String("base-url", "", "the OpenAI-compatible base URL, e.g. https://api.deepseek.com/v1")
	model = fs.String("model", "", "the model name, e.g. deepseek-chat")
	keyStdin = fs.Bool("api-key-stdin", false, "read the API key from stdin (one line; empty removes the stored key)")
	return hf, preset, baseURL, model, keyStdin
}

// jsonFlag defines --json on fs, for commands with no other flag.
func jsonFlag(fs *flag.FlagSet) *bool { return fs.Bool("json", false, "print JSON") }

// mockFlags defines the flags of `harness model mock` on fs.
func mockFlags(fs *flag.FlagSet) (addr *string, delay *time.Duration) {
	addr = fs.String("addr", mock.DefaultAddr, "address to listen on")
	delay = fs.Duration("delay", 0, "pause between streamed chunks, e.g. 30ms, to watch the stream")
	return addr, delay
}

// modelChangeText words agent.Apply's refusal in the command's terms (its
// flags and commands).
func modelChangeText(err error) string {
	var ce *agent.ChangeError
	if !errors.As(err, &ce) {
		return err.Error()
	}
	switch ce.Kind {
	case agent.ChangeNoPreset:
		return fmt.Sprintf("--preset %q: no such preset (harness model presets lists them)", ce.Value)
	case agent.ChangeMissing:
		return "give --base-url and --model (or --preset)"
	case agent.ChangeBaseURL:
		return "--base-url " + ce.Msg
	case agent.ChangeModel:
		return "--model: " + ce.Msg
	case agent.ChangeKey:
		return "the key on stdin: " + ce.Msg
	}
	return ce.Msg
}
