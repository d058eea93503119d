package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/internal/msg"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/mcpx"
	"github.com/pkuinfo/harness/plugin"
	"github.com/pkuinfo/harness/registry"
)

func init() {
	Register(&Command{
		Path:    "registry validate",
		Usage:   "[--json] [--remote] [--token T] FILE",
		Summary: "check a marketplace registry (registry/registry.json): schema, unique ids and icons, links, built-ins, cloud declarations",
		Run:     registryValidate,
		Flags:   func(fs *flag.FlagSet) { registryFlags(fs) },
	})
	Register(&Command{
		Path:    "plugin scan",
		Usage:   "[--json] [--lang zh-Hans|en] DIR|LINK",
		Summary: "what the marketplace does on submission: validate every PLUGIN.md under a folder or repository and print each review sheet",
		Run:     pluginScan,
		Flags:   func(fs *flag.FlagSet) { scanFlags(fs) },
	})
}

// registryValidate is `harness registry validate [--json] [--remote]
// FILE` (seed 003 "发布": validate-registry). --remote asks each remote
// entry's MCP server for its name (with --token T, or $HARNESS_MCP_TOKEN,
// for auth: bearer). Exit 0 when there is no error (warnings allowed), 1
// when there is one, 2 on bad usage.
func registryValidate(env *Env) int {
	const name = "harness registry validate"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON, remote, token := registryFlags(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	if len(args) != 1 {
		fmt.Fprintf(env.Stderr, "usage: %s [--json] [--remote] [--token T] FILE\n", name)
		return ExitUsage
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	o := registry.Options{}
	for _, p := range builtin.Definitions() {
		o.Builtins = append(o.Builtins, p.ID)
	}
	if *remote {
		o.RemoteName = func(endpoint string, bearer bool) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := &mcpx.RemoteClient{URL: endpoint}
			if bearer {
				c.Token = *token
			}
			s, err := c.Describe(ctx)
			if err != nil {
				return "", err
			}
			return s.Name, nil
		}
	}
	entries, diags := registry.Validate(args[0], data, o)
	errs, warns := 0, 0
	for _, d := range diags {
		if d.Severity == diag.Warning {
			warns++
		} else {
			errs++
		}
	}
	if *asJSON {
		out := make([]registryDiagnostic, 0, len(diags))
		for _, d := range diags {
			out = append(out, registryDiagnostic{File: d.File, Line: d.Pos.Line, Col: d.Pos.Col, Path: d.Path,
				Warning: d.Severity == diag.Warning, Msg: d.Msg})
		}
		b, _ := json.MarshalIndent(map[string]any{"file": args[0], "ok": errs == 0, "entries": len(entries),
			"errors": errs, "warnings": warns, "diagnostics": out}, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", b)
	} else {
		for _, d := range diags {
			fmt.Fprintln(env.Stdout, d.String())
		}
		fmt.Fprintf(env.Stdout, "%s: %s, %s, %s\n", args[0], i18n.Plural(len(entries), "entry", "entries"), count(errs, "error"), count(warns, "warning"))
	}
	if errs > 0 {
		return ExitFail
	}
	return ExitOK
}

// registryDiagnostic is a diagnostic as `registry validate --json` has always written it: the
// JSON path under "path" and a warning as "warning": true, where plugin validate writes
// "severity".
type registryDiagnostic struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Path    string `json:"path"`
	Warning bool   `json:"warning,omitempty"`
	Msg     string `json:"message"`
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// pluginScan is `harness plugin scan [--json] [--lang L] DIR|LINK`: every
// PLUGIN.md under a folder, or under a GitHub repository or folder link,
// validated as the app does and checked as the marketplace does (unique
// ids, folders named after ids, no plugin inside another, wide network
// wildcards, a borrowed official author), each with its diagnostics and,
// when valid, the review sheet students will see. Exit 0 when every plugin
// is valid, 1 when one is not or none was found, 2 on bad usage.
func pluginScan(env *Env) int {
	const name = "harness plugin scan"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON, langFlag := scanFlags(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return ExitUsage
	}
	l, lerr := msg.Resolve(*langFlag, os.Getenv)
	lang := string(l)
	if len(args) != 1 || lerr != nil {
		fmt.Fprintf(env.Stderr, "usage: %s [--json] [--lang zh-Hans|en] DIR|LINK\n", name)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var list []*registry.Scanned
	if strings.Contains(args[0], "://") {
		list, err = registry.ScanLink(ctx, args[0], &plugin.HTTPFetcher{}, &registry.GitHubLister{})
	} else {
		list, err = registry.ScanDir(ctx, args[0])
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	bad := 0
	for _, s := range list {
		if !s.OK {
			bad++
		}
	}
	if *asJSON {
		if list == nil {
			list = []*registry.Scanned{}
		}
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		fmt.Fprintf(env.Stdout, "%s\n", b)
	} else {
		for i, s := range list {
			if i > 0 {
				fmt.Fprintln(env.Stdout)
			}
			state := "valid"
			if !s.OK {
				state = "INVALID"
			}
			id := s.ID
			if id == "" {
				id = "?"
			}
			fmt.Fprintf(env.Stdout, "== %s: %s %s (%s, %s, %s)\n", s.Path, id, s.Version, state, count(s.Errors, "error"), count(s.Warnings, "warning"))
			for _, d := range s.Diagnostics {
				fmt.Fprintln(env.Stdout, d.String())
			}
			if s.Review != nil {
				fmt.Fprintln(env.Stdout, strings.TrimRight(s.Review.Sheet(lang), "\n"))
			}
		}
		fmt.Fprintf(env.Stdout, "\n%s: %s, %d valid, %d invalid\n", args[0], count(len(list), "plugin"), len(list)-bad, bad)
	}
	if bad > 0 || len(list) == 0 {
		if len(list) == 0 && !*asJSON {
			fmt.Fprintf(env.Stderr, "%s: no PLUGIN.md under %s\n", name, args[0])
		}
		return ExitFail
	}
	return ExitOK
}

// registryFlags defines the flags of `harness registry validate` on fs.
func registryFlags(fs *flag.FlagSet) (asJSON, remote *bool, token *string) {
	asJSON = fs.Bool("json", false, "print {file, ok, entries, errors, warnings, diagnostics}")
	remote = fs.Bool("remote", false, "ask each remote entry's MCP server whether its name is the entry's id")
	token = fs.String("token", os.Getenv("HARNESS_MCP_TOKEN"), "bearer token for remote entries with auth: bearer")
	return asJSON, remote, token
}

// scanFlags defines the flags of `harness plugin scan` on fs.
func scanFlags(fs *flag.FlagSet) (asJSON *bool, lang *string) {
	asJSON = fs.Bool("json", false, "print one report per plugin: {path, link, ok, id, version, errors, warnings, diagnostics, review}")
	lang = fs.String("lang", "", "the review sheet's language: zh-Hans or en (default from $LC_ALL, $LC_MESSAGES or $LANG, else zh-Hans)")
	return asJSON, lang
}
