package replay

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pkuinfo/harness/internal/safefs"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// Outcome is the result of one recorded test, or of a whole test file or plugin that could not
// be run (then Name is "" and Problems say why).
type Outcome struct {
	// Plugin is the plugin id (the folder name when the manifest has none).
	Plugin string `json:"plugin"`
	// File is the test file as displayed ("plugins/classrooms/tests/free.yaml"); "" for a
	// problem of the whole plugin.
	File string `json:"file,omitempty"`
	// Line is where the test's document starts in File.
	Line int `json:"line,omitempty"`
	// Name is the test's title (Case.Title): its name, "#N", or "".
	Name string `json:"name,omitempty"`
	// Tool is the tool the test runs.
	Tool string `json:"tool,omitempty"`
	// Passed is true when every expectation held.
	Passed bool `json:"ok"`
	// Problems says why the test failed, one line each; a line starting with two spaces
	// belongs to the line above it (diff lines under their heading).
	Problems []string `json:"problems,omitempty"`
	// Elapsed is how long the test took.
	Elapsed time.Duration `json:"-"`
}

// Label is the outcome's name in listings: "classrooms/free: today" (plugin id / test file
// name without .yaml: test title), or "classrooms" for a problem of the whole plugin.
func (o Outcome) Label() string {
	s := o.Plugin
	if o.File != "" {
		base := filepath.Base(o.File)
		s += "/" + strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
	}
	if o.Name != "" {
		s += ": " + o.Name
	}
	return s
}

// Report is the outcome of every test of one or more plugins, in run order.
type Report struct {
	// Outcomes are the tests run, in order.
	Outcomes []Outcome `json:"tests"`
	// NoTests names the plugins (by id) that have no tests/*.yaml; they do not count as failed.
	NoTests []string `json:"noTests,omitempty"`
	// Skipped names the arguments that were files, not folders (a shell glob such as plugins/*
	// also matches files); they do not count as failed.
	Skipped []string `json:"skipped,omitempty"`
	// Passed counts the Outcomes that passed.
	Passed int `json:"passed"`
	// Failed counts the Outcomes that failed.
	Failed int `json:"failed"`
}

// Add appends o and counts it.
func (r *Report) Add(o Outcome) {
	r.Outcomes = append(r.Outcomes, o)
	if o.Passed {
		r.Passed++
	} else {
		r.Failed++
	}
}

// Merge appends every outcome of other.
func (r *Report) Merge(other Report) {
	for _, o := range other.Outcomes {
		r.Add(o)
	}
	r.NoTests = append(r.NoTests, other.NoTests...)
	r.Skipped = append(r.Skipped, other.Skipped...)
}

// RunDir loads the plugin in dir (plugin.LoadDir, which validates it) and runs every test of
// dir/tests/*.yaml in file order. A plugin whose diagnostics hold an error is not run: it gives
// one failed Outcome listing the errors. The error is non-nil only when dir cannot be loaded at
// all (no folder, no PLUGIN.md).
func RunDir(ctx context.Context, dir string) (Report, error) {
	return RunDirMatching(ctx, dir, nil)
}

// RunDirMatching is RunDir running only the tests whose Label ("classrooms/free: today")
// matches run; nil runs them all. Problems of the plugin or of a test file are reported whatever
// run is.
func RunDirMatching(ctx context.Context, dir string, run *regexp.Regexp) (Report, error) {
	var rep Report
	p, diags, err := plugin.LoadDirContext(ctx, dir)
	if err != nil {
		return rep, err
	}
	id := filepath.Base(filepath.Clean(dir))
	if p != nil && p.Manifest != nil && p.Manifest.ID != "" {
		id = p.Manifest.ID
	}
	var errs []string
	for _, d := range diags {
		if d.Severity == diag.Error {
			d.File = filepath.Join(dir, d.File)
			errs = append(errs, d.String())
		}
	}
	if len(errs) > 0 || p == nil {
		rep.Add(Outcome{Plugin: id, Problems: append([]string{"the plugin does not validate:"}, indent(errs)...)})
		return rep, nil
	}
	files, err := testFiles(dir)
	if err != nil {
		return rep, err
	}
	if len(files) == 0 {
		rep.NoTests = append(rep.NoTests, id)
		return rep, nil
	}
	fsys, err := safefs.Open(dir)
	if err != nil {
		return rep, err
	}
	defer fsys.Close()
	for _, name := range files {
		display := filepath.Join(dir, filepath.FromSlash(name))
		cases, err := DecodeFile(ctx, fsys, name, display)
		if err != nil {
			src, _ := fsys.ReadFile(ctx, name, maxTestFileSize)
			rep.Add(Outcome{Plugin: id, File: display, Problems: withSource(err, src)})
			continue
		}
		for _, c := range cases {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			if run != nil && !run.MatchString(Outcome{Plugin: id, File: display, Name: c.Title()}.Label()) {
				continue
			}
			rep.Add(RunCase(ctx, p, c))
		}
	}
	return rep, nil
}

// testFiles lists tests/*.yaml and tests/*.yml of dir, sorted, as slash paths relative to dir.
func testFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "tests"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) {
			names = append(names, path.Join("tests", n))
		}
	}
	sort.Strings(names)
	return names, nil
}

// withSource lists the problems of a test file, each followed by its source line and a caret
// under the column (STYLE §9) when the position is known.
func withSource(err error, src []byte) []string {
	var list ErrorList
	if !errors.As(err, &list) {
		return strings.Split(err.Error(), "\n")
	}
	lines := strings.Split(string(src), "\n")
	var out []string
	for _, e := range list {
		out = append(out, e.Error())
		if e.Pos.Line < 1 || e.Pos.Line > len(lines) || e.Pos.Col < 1 {
			continue
		}
		line := strings.TrimRight(lines[e.Pos.Line-1], "\r")
		var caret strings.Builder
		for i, r := range []rune(line) {
			if i >= e.Pos.Col-1 {
				break
			}
			if r == '\t' {
				caret.WriteRune('\t')
			} else {
				caret.WriteByte(' ')
			}
		}
		out = append(out, "  "+line, "  "+caret.String()+"^")
	}
	return out
}

func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}

// RunCase runs one test against a loaded, valid plugin: a fresh in-memory KV holding the test's
// `kv:`, the clock fixed at `now` (the real time when absent), requests and abilities answered
// from the test. Every failed expectation is listed in the Outcome, not only the first.
func RunCase(ctx context.Context, p *plugin.Plugin, c *Case) Outcome {
	start := time.Now()
	o := Outcome{Plugin: p.Manifest.ID, File: c.File, Line: c.Pos.Line, Name: c.Title(), Tool: c.Tool}
	o.Problems = runCase(ctx, p, c)
	o.Passed = len(o.Problems) == 0
	o.Elapsed = time.Since(start)
	return o
}

func runCase(ctx context.Context, p *plugin.Plugin, c *Case) []string {
	if p.Tool(c.Tool) == nil {
		var names []string
		for _, t := range p.Tools {
			names = append(names, t.Name)
		}
		return []string{fmt.Sprintf("%s: plugin %s has no tool %q (tools: %s)", c.At(c.ToolPos), p.Manifest.ID, c.Tool, strings.Join(names, ", "))}
	}
	now := time.Now()
	if c.HasNow {
		now = c.Now
	}
	kv := kvstore.NewMemory()
	for _, e := range c.KV {
		if err := kv.Set(ctx, p.Manifest.ID, e.Key, interp.Entry{Value: e.Value, Expires: e.Expires}); err != nil {
			return []string{fmt.Sprintf("%s: kv %q: %v", c.At(c.Pos), e.Key, err)}
		}
	}
	rec := NewRecorded(c)
	result, err := interp.Run(ctx, p, c.Tool, c.Input, interp.Options{
		Transport: rec.Transport(),
		Campus:    rec.Campus(),
		Abilities: rec.Abilities(),
		KV:        kv,
		Now:       func() time.Time { return now },
		OnRequest: rec.OnRequest,
	})
	problems := rec.Unanswered()
	if err != nil && causedBy(err, problems) {
		// The run failed because the test had no answer, which is already reported.
		return problems
	}
	switch {
	case c.HasExpect && err != nil:
		problems = append(problems, fmt.Sprintf("the tool failed (expect at %s): %s", c.At(c.ExpectPos), PlacedError(p.Dir, err)))
	case c.HasExpect:
		if d := Diff(result, c.Expect); d != nil {
			problems = append(problems, fmt.Sprintf("the result differs from expect (%s):", c.At(c.ExpectPos)))
			problems = append(problems, indent(d)...)
		}
	case c.ExpectError != nil && err == nil:
		problems = append(problems, fmt.Sprintf("expected an error matching %q (%s), got the result %s", c.ExpectError.String(), c.At(c.ExpectErrorPos), Show(result)))
	case c.ExpectError != nil:
		msg := err.Error()
		var ie *interp.Error
		if errors.As(err, &ie) {
			msg = ie.Msg
		}
		if !c.ExpectError.MatchString(msg) && !c.ExpectError.MatchString(err.Error()) {
			problems = append(problems, fmt.Sprintf("the error does not match expectError %q (%s):", c.ExpectError.String(), c.At(c.ExpectErrorPos)), "  got: "+PlacedError(p.Dir, err))
		}
	}
	if c.HasExpectRequests {
		problems = append(problems, compareRequests(c, rec.Sent())...)
	}
	return problems
}

// causedBy reports whether err is (or carries the text of) one of the unanswered messages.
func causedBy(err error, unanswered []string) bool {
	var ue *UnansweredError
	if errors.As(err, &ue) {
		return true
	}
	for _, u := range unanswered {
		if strings.Contains(err.Error(), u) {
			return true
		}
	}
	return false
}

// PlacedError is err's text with the plugin file it names joined to dir, so that a person can
// open it from where the command ran: "plugins/x/tools/free.yaml:19:5: steps[2] (check): …".
func PlacedError(dir string, err error) string {
	var ie *interp.Error
	if dir == "" || !errors.As(err, &ie) || ie.File == "" || filepath.IsAbs(ie.File) {
		return err.Error()
	}
	placed := *ie
	placed.File = filepath.Join(dir, ie.File)
	return placed.Error()
}

// compareRequests checks the requests sent against expectRequests: same number, in order, and
// each given field equal.
func compareRequests(c *Case, sent []interp.RequestRecord) []string {
	var problems []string
	for i, want := range c.ExpectRequests {
		at := fmt.Sprintf("expectRequests[%d] (%s)", i, c.At(want.Pos))
		if i >= len(sent) {
			problems = append(problems, fmt.Sprintf("%s: missing: the run sent %d requests, want %d", at, len(sent), len(c.ExpectRequests)))
			continue
		}
		got := sent[i]
		desc := describeRequest(got.Method, got.Campus, got.URL)
		var lines []string
		if !URLContains(got.URL, want.Match) {
			lines = append(lines, fmt.Sprintf("url: got %q, want it to contain %q", got.URL, want.Match))
		}
		if want.Method != "" && !strings.EqualFold(got.Method, want.Method) {
			lines = append(lines, fmt.Sprintf("method: got %s, want %s", got.Method, want.Method))
		}
		if want.HasQuery {
			raw := ""
			if u, err := url.Parse(got.URL); err == nil {
				raw = u.RawQuery
			}
			lines = append(lines, diffUnder("query", parsePairs(raw), textValues(want.Query))...)
		}
		if want.HasForm {
			lines = append(lines, diffUnder("form", parsePairs(string(got.Body)), textValues(want.Form))...)
		}
		if want.HasJSON {
			gotJSON, err := expr.FromJSON(got.Body)
			if err != nil {
				lines = append(lines, fmt.Sprintf("json: the body is not JSON (%v): %s", err, Show(string(got.Body))))
			} else {
				lines = append(lines, diffUnder("json", gotJSON, want.JSON)...)
			}
		}
		names := make([]string, 0, len(want.Header))
		for k := range want.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			vals := got.Header.Values(k)
			switch {
			case len(vals) == 0:
				lines = append(lines, fmt.Sprintf("headers.%s: missing, want %q", k, want.Header[k]))
			case strings.Join(vals, ", ") != want.Header[k]:
				lines = append(lines, fmt.Sprintf("headers.%s: got %q, want %q", k, strings.Join(vals, ", "), want.Header[k]))
			}
		}
		if len(lines) > 0 {
			problems = append(problems, fmt.Sprintf("%s: request %d (%s) differs:", at, i+1, desc))
			problems = append(problems, indent(lines)...)
		}
	}
	if len(sent) > len(c.ExpectRequests) {
		problems = append(problems, fmt.Sprintf("expectRequests (%s): the run sent %d requests, want %d; not expected:", c.At(c.ExpectRequestsPos), len(sent), len(c.ExpectRequests)))
		for _, s := range sent[len(c.ExpectRequests):] {
			problems = append(problems, "  "+describeRequest(s.Method, s.Campus, s.URL))
		}
	}
	return problems
}

// diffUnder is Diff with the root `$` replaced by name.
func diffUnder(name string, got, want any) []string {
	d := Diff(got, want)
	for i, l := range d {
		if strings.HasPrefix(l, "$") {
			d[i] = name + l[1:]
		}
	}
	return d
}

// parsePairs reads `a=1&b=2&a=3` into an object, keys in first-seen order, a repeated key as a
// list of its values.
func parsePairs(raw string) *expr.Object {
	obj := expr.NewObject(0)
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		switch old, ok := obj.Get(k); {
		case !ok:
			obj.Set(k, v)
		case isList(old):
			obj.Set(k, append(old.([]any), v))
		default:
			obj.Set(k, []any{old, v})
		}
	}
	return obj
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

// textValues turns the values of a `query:` or `form:` object into the text they are sent as
// (numbers as in JavaScript, null as ""); a list stands for a repeated key.
func textValues(v any) any {
	obj, ok := v.(*expr.Object)
	if !ok {
		return v
	}
	out := expr.NewObject(obj.Len())
	for _, k := range obj.Keys() {
		e, _ := obj.Get(k)
		if list, ok := e.([]any); ok {
			texts := make([]any, len(list))
			for i, item := range list {
				texts[i] = text(item)
			}
			out.Set(k, texts)
			continue
		}
		out.Set(k, text(e))
	}
	return out
}

func text(v any) any {
	s, err := expr.ToText(v)
	if err != nil {
		return v
	}
	return s
}
