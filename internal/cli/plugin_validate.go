package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

func init() {
	Register(&Command{
		Path:    "plugin validate",
		Usage:   "[--json] DIR…",
		Summary: "check plugins the way the app does: manifest, tools, every expression and file path",
		Run:     pluginValidate,
		// The author commands parse their few flags by hand (-json and --json alike); these
		// definitions are what --help shows.
		Flags: func(fs *flag.FlagSet) {
			fs.Bool("json", false, "print a JSON array with one report per argument")
		},
	})
}

// validateReport is one plugin's result in `plugin validate --json`: the shape of the seed's
// plugins.validate ({ ok, id, version, tools, widgets, campus, network, abilities } or issues).
type validateReport struct {
	Source      string            `json:"source"`
	OK          bool              `json:"ok"`
	ID          string            `json:"id,omitempty"`
	Version     string            `json:"version,omitempty"`
	Hash        string            `json:"hash,omitempty"`
	Tools       []string          `json:"tools"`
	Widgets     []string          `json:"widgets"`
	Campus      []string          `json:"campus"`
	Network     []string          `json:"network"`
	Abilities   []string          `json:"abilities"`
	Errors      int               `json:"errors"`
	Warnings    int               `json:"warnings"`
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
	Error       string            `json:"error,omitempty"`

	files map[string][]byte // the loaded files, to print source lines
}

// pluginValidate is `harness plugin validate [--json] DIR…` (seed 004 "Test", docs/DECISIONS.md §9):
// it loads each plugin folder (or https/pkuharness link; a PLUGIN.md file stands for its folder,
// other files are skipped) with every check the app runs and
// prints every diagnostic as "DIR/FILE:LINE:COL: [step: ]message" with the source line and a
// caret, then one summary line per plugin. With --json it prints a JSON array with one report
// per argument instead. Exit 0 when no plugin has an error (warnings allowed), 1 when one has,
// 2 on bad usage.
func pluginValidate(env *Env) int {
	var dirs []string
	asJSON := false
	flags := true
	for _, a := range env.Args {
		switch {
		case flags && a == "--":
			flags = false
		case flags && (a == "--json" || a == "-json"):
			asJSON = true
		case flags && (a == "-h" || a == "--help" || a == "-help"):
			fmt.Fprintln(env.Stdout, "usage: harness plugin validate [--json] DIR…")
			return ExitOK
		case flags && strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(env.Stderr, "harness plugin validate: unknown flag %s\n", a)
			return ExitUsage
		default:
			dirs = append(dirs, a)
		}
	}
	if len(dirs) == 0 {
		fmt.Fprintln(env.Stderr, "usage: harness plugin validate [--json] DIR…")
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	code := ExitOK
	var reports []validateReport
	for _, dir := range dirs {
		// A file argument stands for its folder when it is a PLUGIN.md and is skipped otherwise,
		// so that `harness plugin validate plugins/*` works in a folder that holds other files.
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			if filepath.Base(dir) != plugin.ManifestFile {
				if !asJSON {
					fmt.Fprintf(env.Stdout, "%s: not a folder, skipped\n", dir)
				}
				continue
			}
			dir = filepath.Dir(dir)
		}
		r := validateOne(ctx, dir)
		if !r.OK {
			code = ExitFail
		}
		reports = append(reports, r)
		if !asJSON {
			printReport(env, r)
		}
	}
	if asJSON {
		b, err := json.MarshalIndent(reports, "", "  ")
		if err != nil {
			fmt.Fprintf(env.Stderr, "harness plugin validate: %v\n", err)
			return ExitFail
		}
		fmt.Fprintf(env.Stdout, "%s\n", b)
	}
	return code
}

func validateOne(ctx context.Context, dir string) validateReport {
	r := validateReport{Source: dir, Tools: []string{}, Widgets: []string{}, Campus: []string{}, Network: []string{}, Abilities: []string{}, Diagnostics: []diag.Diagnostic{}}
	var (
		p     *plugin.Plugin
		diags []diag.Diagnostic
		err   error
	)
	if strings.Contains(dir, "://") {
		p, diags, err = plugin.Load(ctx, &plugin.HTTPFetcher{}, dir)
	} else {
		p, diags, err = plugin.LoadDirContext(ctx, dir)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.files = p.Files
	m := p.Manifest
	r.ID, r.Version, r.Hash = m.ID, m.Version, p.Hash
	for _, t := range m.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	for _, w := range m.Widgets {
		r.Widgets = append(r.Widgets, w.Name)
	}
	r.Campus = append(r.Campus, m.Campus...)
	r.Network = append(r.Network, m.Network...)
	r.Abilities = append(r.Abilities, m.Abilities...)
	r.Diagnostics = append(r.Diagnostics, diags...)
	for _, d := range diags {
		if d.Severity == diag.Error {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	r.OK = r.Errors == 0
	return r
}

func printReport(env *Env, r validateReport) {
	if r.Error != "" {
		fmt.Fprintf(env.Stderr, "harness plugin validate: %s: %s\n", r.Source, r.Error)
		fmt.Fprintf(env.Stdout, "%s: cannot load\n", r.Source)
		return
	}
	files := r.files
	for _, d := range r.Diagnostics {
		src := files[d.File]
		d.File = validatePath(r.Source, d.File)
		fmt.Fprintln(env.Stdout, d.Format(src))
	}
	switch {
	case r.Errors == 0 && r.Warnings == 0:
		fmt.Fprintf(env.Stdout, "%s: ok (%s %s, %s)\n", r.Source, r.ID, r.Version, countNoun(len(r.Tools), "tool"))
	case r.Errors == 0:
		fmt.Fprintf(env.Stdout, "%s: ok with %s (%s %s, %s)\n", r.Source, countNoun(r.Warnings, "warning"), r.ID, r.Version, countNoun(len(r.Tools), "tool"))
	default:
		fmt.Fprintf(env.Stdout, "%s: %s, %s\n", r.Source, countNoun(r.Errors, "error"), countNoun(r.Warnings, "warning"))
	}
}

func validatePath(source, file string) string {
	if strings.Contains(source, "://") {
		return file
	}
	return filepath.ToSlash(filepath.Join(source, file))
}

func countNoun(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
