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
	"text/tabwriter"
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
	})
	Register(&Command{
		Path:    "model show",
		Usage:   "[--data DIR] [--json]",
		Summary: "show the assistant's model: base URL, model, whether a key is set, and where each comes from",
		Run:     modelShow,
	})
	Register(&Command{
		Path:    "model presets",
		Usage:   "[--json]",
		Summary: "list the model services with a preset (DeepSeek, Qwen, Kimi, GLM, SiliconFlow, OpenAI, Ollama, vLLM, the mock)",
		Run:     modelPresets,
	})
	Register(&Command{
		Path:    "model mock",
		Usage:   "[--addr HOST:PORT] [--delay DURATION]",
		Summary: "serve the scripted mock model (OpenAI-compatible, model mock-agent) on " + mock.DefaultAddr,
		Run:     modelMock,
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
	var hf hostFlags
	hf.register(fs)
	preset := fs.String("preset", "", "start from a preset (harness model presets)")
	baseURL := fs.String("base-url", "", "the OpenAI-compatible base URL, e.g. https://api.deepseek.com/v1")
	model := fs.String("model", "", "the model name, e.g. deepseek-chat")
	keyStdin := fs.Bool("api-key-stdin", false, "read the API key from stdin (one line; empty removes the stored key)")
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: unexpected argument %q (the key is read from stdin with --api-key-stdin, never from the command line)\n", name, fs.Arg(0))
		return ExitUsage
	}
	dir, err := hostDataDir(&hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	cur, _, err := agent.LoadConfig(dir, nil)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if *preset != "" {
		p := agent.PresetByName(*preset)
		if p == nil {
			fmt.Fprintf(env.Stderr, "%s: --preset %q: no such preset (harness model presets lists them)\n", name, *preset)
			return ExitUsage
		}
		cur.BaseURL, cur.Model = p.BaseURL, p.Model
	}
	if *baseURL != "" {
		cur.BaseURL = *baseURL
	}
	if *model != "" {
		cur.Model = *model
	}
	if *preset == "" && *baseURL == "" && *model == "" && !*keyStdin {
		fmt.Fprintf(env.Stderr, "usage: %s [--preset NAME] [--base-url URL] [--model NAME] [--api-key-stdin]\n", name)
		return ExitUsage
	}
	if cur.BaseURL == "" || cur.Model == "" {
		fmt.Fprintf(env.Stderr, "%s: give --base-url and --model (or --preset)\n", name)
		return ExitUsage
	}
	if err := agent.CheckBaseURL(cur.BaseURL); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	if *keyStdin {
		line, err := bufio.NewReader(env.Stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintf(env.Stderr, "%s: reading the key: %v\n", name, err)
			return ExitFail
		}
		cur.APIKey = strings.TrimSpace(line)
	}
	if err := agent.SaveConfig(dir, cur, *keyStdin); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	key := "unchanged"
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
	var hf hostFlags
	hf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	dir, err := hostDataDir(&hf)
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
		b, _ := json.Marshal(map[string]any{"baseURL": c.BaseURL, "model": c.Model, "keySet": c.APIKey != "",
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
	}
	fmt.Fprintf(env.Stdout, "base URL: %s%s\nmodel:    %s%s\nAPI key:  %s\n", c.BaseURL, from(src.BaseURL), c.Model, from(src.Model), key)
	return ExitOK
}

func modelPresets(env *Env) int {
	fs := flag.NewFlagSet("harness model presets", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if *asJSON {
		b, _ := json.MarshalIndent(agent.Presets, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
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
	addr := fs.String("addr", mock.DefaultAddr, "address to listen on")
	delay := fs.Duration("delay", 0, "pause between streamed chunks, e.g. 30ms, to watch the stream")
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
