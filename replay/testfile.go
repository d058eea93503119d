package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/internal/safefs"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"go.yaml.in/yaml/v3"
)

// Case is one recorded test: one YAML document of a tests/*.yaml file (docs/DECISIONS.md §8).
// Values (Input, Expect, KV values, ability answers) are expr values: nil, bool, float64,
// string, []any or *expr.Object.
type Case struct {
	// File is the test file's path as given to Decode (used in every message).
	File string
	// Index is the 1-based position of the document in its file; Count is how many
	// documents the file holds.
	Index, Count int
	// Pos is where the document starts.
	Pos diag.Pos
	// Name is the `name:` field, "" when absent.
	Name string
	// Tool is the tool to run.
	Tool string
	// ToolPos is where Tool is named.
	ToolPos diag.Pos
	// Input is the tool's input; an empty object when `input:` is absent.
	Input any
	// Now is the run's fixed clock; HasNow is false when `now:` is absent, in which case the run
	// uses the real time.
	Now time.Time
	// HasNow says whether `now:` is written.
	HasNow bool
	// KV is the initial KV contents, in file order.
	KV []KVEntry
	// Responses answer requests: the first that matches answers.
	Responses []*Response
	// Abilities answers `ability:` steps, by "group.op".
	Abilities map[string]*AbilityAnswers
	// Expect is the expected result when HasExpect; ExpectPos is where it is written.
	Expect any
	// HasExpect says whether `expect:` is written (its value may be null).
	HasExpect bool
	// ExpectPos is where the expected value is written.
	ExpectPos diag.Pos
	// ExpectError matches the error message when not nil; ExpectErrorPos is where it is written.
	ExpectError *regexp.Regexp
	// ExpectErrorPos is where the pattern is written.
	ExpectErrorPos diag.Pos
	// ExpectRequests lists the requests the run must make, in order; nil when absent.
	ExpectRequests []*ExpectedRequest
	// HasExpectRequests says whether `expectRequests:` is written; an empty list asserts that
	// no request is sent.
	HasExpectRequests bool
	// ExpectRequestsPos is where the list is written.
	ExpectRequestsPos diag.Pos
}

// Title is the case's display name: its `name:`, or "#N" when a file holds several unnamed
// documents, or "" for the only document of a file.
func (c *Case) Title() string {
	if c.Name != "" {
		return c.Name
	}
	if c.Count > 1 {
		return "#" + strconv.Itoa(c.Index)
	}
	return ""
}

// At formats a position in the case's file as `FILE:LINE:COL`.
func (c *Case) At(p diag.Pos) string {
	return fmt.Sprintf("%s:%d:%d", c.File, p.Line, p.Col)
}

// KVEntry is one initial KV entry of a test. A plain value never expires (Expires is zero);
// `{ value: V, expires: T }` holds V until T.
type KVEntry struct {
	Key     string    // the KV key
	Value   any       // an expr value
	Expires time.Time // zero: never
}

// Response is one recorded reply (docs/DECISIONS.md §8). It answers a request whose URL contains
// Match, whose method equals Method (any method when ""), and which goes to the campus service
// Campus (a public request when "").
type Response struct {
	Pos    diag.Pos    // where the response is written
	Match  string      // found in the URL, as sent or percent-decoded
	Method string      // upper case; "" matches any method
	Campus string      // the campus service; "" for public requests
	Status int         // 200 when not written
	Header http.Header // the reply's headers
	Body   []byte      // `body` as is, a mapping or list as JSON, or the `file` read
}

// AbilityAnswers holds how a test answers one ability `group.op`: either one value for every
// call (Calls is nil), or a list of calls, each used once in order among those whose Args
// match; when every matching call has been used, the last of them answers again.
type AbilityAnswers struct {
	Pos   diag.Pos             // where the answer is written
	Value any                  // the answer to every call, when Calls is nil
	Calls []*AbilityCallAnswer // the `calls:` entries, in order
}

// AbilityCallAnswer is one entry of an ability's `calls:` list. Args, when HasArgs, must be
// contained in the call's args (every given object key equal, recursively; lists equal).
// The call returns Result, or fails with Error when it is not "".
type AbilityCallAnswer struct {
	Pos     diag.Pos // where the entry is written
	Args    any      // the fields a call's args must contain, when HasArgs
	HasArgs bool     // `args:` is written
	Result  any      // the call's value
	Error   string   // when not "", the call fails with this message (error.kind "ability")
}

// ExpectedRequest is one entry of `expectRequests`. Only the fields given are compared: Match
// is a substring of the URL; Method is compared case-insensitively; Query and Form are objects
// compared with the parsed query or form body (values as strings; a repeated key is a list);
// JSON is compared with the parsed JSON body; Header names are case-insensitive.
type ExpectedRequest struct {
	Pos      diag.Pos          // where the entry is written
	Match    string            // found in the URL, as sent or percent-decoded
	Method   string            // upper case; "" is not compared
	Query    any               // an *expr.Object, when HasQuery
	HasQuery bool              // `query:` is written
	JSON     any               // the expected JSON body, when HasJSON
	HasJSON  bool              // `json:` is written
	Form     any               // an *expr.Object, when HasForm
	HasForm  bool              // `form:` is written
	Header   map[string]string // canonical header name → value; nil when not written
}

// Limits on a test file.
const (
	maxTestFileSize = 4 << 20 // a test file or a response `file:`
	maxYAMLDepth    = 512     // nesting of YAML collections, as expr.FromJSON allows
)

// DecodeFile reads the test file name from fsys (a plugin folder; name such as
// "tests/free.yaml") and decodes it. Response `file:` paths are read from fsys relative to the
// test file. Messages name the file as display (for example "plugins/classrooms/tests/free.yaml").
// Files are read as package safefs reads them (with fsys a *safefs.Dir: nothing outside the
// folder, regular files only, the size checked before reading, ctx checked while reading).
func DecodeFile(ctx context.Context, fsys fs.FS, name, display string) ([]*Case, error) {
	data, err := safefs.ReadFS(ctx, fsys, name, maxTestFileSize)
	if err != nil {
		return nil, &Error{File: display, Msg: fmt.Sprintf("cannot read test file: %v", unwrapPath(err))}
	}
	return decode(ctx, fsys, name, display, data)
}

// Decode decodes the test file data, whose path in fsys is name (only used to resolve response
// `file:` paths; fsys may be nil when no response uses `file:`). It returns every case, or an
// ErrorList with every problem found.
func Decode(fsys fs.FS, name, display string, data []byte) ([]*Case, error) {
	return decode(context.Background(), fsys, name, display, data)
}

func decode(ctx context.Context, fsys fs.FS, name, display string, data []byte) ([]*Case, error) {
	d := &decoder{ctx: ctx, fsys: fsys, dir: path.Dir(name), file: display}
	if len(data) > maxTestFileSize {
		d.errorf(diag.Pos{}, "test file is %d bytes, the limit is %d", len(data), maxTestFileSize)
		return nil, d.errs.Err()
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var cases []*Case
	for index := 1; ; index++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			d.yamlError(err)
			break
		}
		if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].ShortTag() == "!!null" && doc.Content[0].Value == "") {
			index-- // an empty document, e.g. after a final `---`; a written null or ~ is an error
			continue
		}
		if c := d.decodeCase(doc.Content[0], index); c != nil {
			cases = append(cases, c)
		}
	}
	if err := d.errs.Err(); err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, ErrorList{{File: display, Pos: diag.Pos{Line: 1, Col: 1}, Msg: "test file holds no test"}}
	}
	for _, c := range cases {
		c.Count = len(cases)
	}
	return cases, nil
}

type decoder struct {
	ctx  context.Context
	fsys fs.FS
	dir  string
	file string
	errs ErrorList
}

// pos is where a YAML node is; yaml.v3 gives no byte offset.
func pos(n *yaml.Node) diag.Pos { return diag.Pos{Line: n.Line, Col: n.Column} }

func (d *decoder) errorf(p diag.Pos, format string, args ...any) {
	if len(d.errs) >= 50 {
		return
	}
	d.errs = append(d.errs, &Error{File: d.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlError turns a yaml.v3 syntax error ("yaml: line 3: message") into a positioned Error.
func (d *decoder) yamlError(err error) {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if line == 0 {
		line = 1
	}
	d.errs = append(d.errs, &Error{File: d.file, Pos: diag.Pos{Line: line}, Msg: "YAML: " + msg})
}

// fields checks that n is a mapping with known keys (no duplicates) and returns key → value
// node with the key nodes, in order.
func (d *decoder) fields(n *yaml.Node, what string, known ...string) (map[string]*yaml.Node, []*yaml.Node) {
	if n.Kind != yaml.MappingNode {
		d.errorf(pos(n), "%s must be a mapping, got %s", what, kindName(n))
		return nil, nil
	}
	vals := map[string]*yaml.Node{}
	var keys []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(pos(k), "%s: keys must be plain strings", what)
			continue
		}
		if _, dup := vals[k.Value]; dup {
			d.errorf(pos(k), "%s: duplicate key %q", what, k.Value)
			continue
		}
		if known != nil && !contains(known, k.Value) {
			d.errorf(pos(k), "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(known, ", "))
			continue
		}
		vals[k.Value] = v
		keys = append(keys, k)
	}
	return vals, keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "null"
		}
		return "the scalar " + strconv.Quote(n.Value)
	}
	return "nothing"
}

// str decodes a scalar that must be a string (any scalar but null is taken as its text).
func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.errorf(pos(n), "%s must be a string, got %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

var caseKeys = []string{"name", "tool", "input", "now", "kv", "responses", "abilities", "expect", "expectError", "expectRequests"}

func (d *decoder) decodeCase(n *yaml.Node, index int) *Case {
	before := len(d.errs)
	c := &Case{File: d.file, Index: index, Pos: pos(n), Input: expr.NewObject(0)}
	f, _ := d.fields(n, "test", caseKeys...)
	if f == nil {
		return nil
	}
	if v := f["name"]; v != nil {
		c.Name, _ = d.str(v, "name")
	}
	if v := f["tool"]; v != nil {
		c.Tool, _ = d.str(v, "tool")
		c.ToolPos = pos(v)
	} else {
		d.errorf(c.Pos, "test: missing key \"tool\"")
	}
	if v := f["input"]; v != nil {
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
			d.errorf(pos(v), "input must be a mapping, got null (leave input out for no input)")
		} else if in, ok := d.value(v, 0); ok {
			c.Input = in
		}
	}
	if v := f["now"]; v != nil {
		if t, ok := d.time(v, "now"); ok {
			c.Now, c.HasNow = t, true
		}
	}
	if v := f["kv"]; v != nil {
		d.kv(c, v)
	}
	if v := f["responses"]; v != nil {
		d.responses(c, v)
	}
	if v := f["abilities"]; v != nil {
		d.abilities(c, v)
	}
	e, ee := f["expect"], f["expectError"]
	switch {
	case e != nil && ee != nil:
		d.errorf(pos(ee), "test: give either expect or expectError, not both")
	case e == nil && ee == nil:
		d.errorf(c.Pos, "test: missing key \"expect\" or \"expectError\"")
	case e != nil:
		c.Expect, c.HasExpect = d.valueOK(e)
		c.ExpectPos = pos(e)
	default:
		if src, ok := d.str(ee, "expectError"); ok {
			re, err := regexp.Compile(src)
			if err != nil {
				d.errorf(pos(ee), "expectError: bad regular expression: %v", err)
			}
			c.ExpectError, c.ExpectErrorPos = re, pos(ee)
		}
	}
	if v := f["expectRequests"]; v != nil {
		d.expectRequests(c, v)
	}
	if len(d.errs) > before {
		return nil
	}
	return c
}

func (d *decoder) valueOK(n *yaml.Node) (any, bool) {
	v, ok := d.value(n, 0)
	return v, ok
}

// value converts a YAML node to an expr value: mappings become ordered objects, sequences
// lists, numbers float64; timestamps and other strings stay their text.
func (d *decoder) value(n *yaml.Node, depth int) (any, bool) {
	if depth > maxYAMLDepth {
		d.errorf(pos(n), "value nested deeper than %d levels", maxYAMLDepth)
		return nil, false
	}
	switch n.Kind {
	case yaml.AliasNode:
		d.errorf(pos(n), "YAML aliases are not allowed")
		return nil, false
	case yaml.MappingNode:
		obj := expr.NewObject(0)
		seen := map[string]bool{}
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
				d.errorf(pos(k), "object keys must be plain strings")
				ok = false
				continue
			}
			if seen[k.Value] {
				d.errorf(pos(k), "duplicate key %q", k.Value)
				ok = false
				continue
			}
			seen[k.Value] = true
			val, vok := d.value(v, depth+1)
			ok = ok && vok
			obj.Set(k.Value, val)
		}
		return obj, ok
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		ok := true
		for _, e := range n.Content {
			val, vok := d.value(e, depth+1)
			ok = ok && vok
			list = append(list, val)
		}
		return list, ok
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, true
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				d.errorf(pos(n), "bad boolean %q", n.Value)
				return nil, false
			}
			return b, true
		case "!!int", "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				// An integer beyond int64 still reads as the nearest double.
				g, perr := strconv.ParseFloat(n.Value, 64)
				if perr != nil {
					d.errorf(pos(n), "bad number %q", n.Value)
					return nil, false
				}
				f = g
			}
			return f, true
		case "!!str", "!!timestamp", "!!binary":
			return n.Value, true
		}
		d.errorf(pos(n), "unsupported YAML tag %s", n.Tag)
		return nil, false
	}
	d.errorf(pos(n), "unexpected YAML node")
	return nil, false
}

// beijing is UTC+8, the zone of a time written without one (docs/DECISIONS.md §10).
var beijing = time.FixedZone("CST", 8*3600)

var timeLayouts = []string{
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02",
}

// ParseTime reads a test's time: Unix milliseconds (a number), an ISO 8601 / RFC 3339 time with
// a zone, or one without a zone (then Beijing time): `2030-03-04T10:00:00+08:00`,
// `2030-03-04T10:00`, `2030-03-04 10:00`, `2030-03-04`.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(ms) || math.IsInf(ms, 0) || math.Abs(ms) > 8.64e15 {
			return time.Time{}, fmt.Errorf("time %q is out of range", s)
		}
		return time.UnixMilli(int64(ms)).In(beijing), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02 15:04:05Z07:00", s); err == nil {
		return t, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, beijing); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q as a time (want ISO 8601 such as 2030-03-04T10:00:00+08:00, or Unix milliseconds)", s)
}

func (d *decoder) time(n *yaml.Node, what string) (time.Time, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.errorf(pos(n), "%s must be a time, got %s", what, kindName(n))
		return time.Time{}, false
	}
	t, err := ParseTime(n.Value)
	if err != nil {
		d.errorf(pos(n), "%s: %v", what, err)
		return time.Time{}, false
	}
	return t, true
}

func (d *decoder) kv(c *Case, n *yaml.Node) {
	f, keys := d.fields(n, "kv")
	for _, k := range keys {
		v := f[k.Value]
		e := KVEntry{Key: k.Value}
		if val, exp := entryForm(v); val != nil {
			{
				var ok bool
				if e.Value, ok = d.valueOK(val); !ok {
					continue
				}
				if e.Expires, ok = d.time(exp, "kv "+k.Value+": expires"); !ok {
					continue
				}
				c.KV = append(c.KV, e)
				continue
			}
		}
		var ok bool
		if e.Value, ok = d.valueOK(v); ok {
			c.KV = append(c.KV, e)
		}
	}
}

// entryForm returns the value and expires nodes of a mapping of exactly the form
// `{ value: V, expires: T }`, or nils.
func entryForm(n *yaml.Node) (val, exp *yaml.Node) {
	if n.Kind != yaml.MappingNode || len(n.Content) != 4 {
		return nil, nil
	}
	for i := 0; i < 4; i += 2 {
		switch n.Content[i].Value {
		case "value":
			val = n.Content[i+1]
		case "expires":
			exp = n.Content[i+1]
		}
	}
	if val == nil || exp == nil {
		return nil, nil
	}
	return val, exp
}

var responseKeys = []string{"match", "method", "campus", "status", "headers", "body", "file"}

func (d *decoder) responses(c *Case, n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(pos(n), "responses must be a list, got %s", kindName(n))
		return
	}
	for i, rn := range n.Content {
		what := fmt.Sprintf("responses[%d]", i)
		f, _ := d.fields(rn, what, responseKeys...)
		if f == nil {
			continue
		}
		r := &Response{Pos: pos(rn), Status: http.StatusOK, Header: http.Header{}}
		if v := f["match"]; v != nil {
			r.Match, _ = d.str(v, what+".match")
		} else {
			d.errorf(pos(rn), "%s: missing key \"match\"", what)
		}
		if v := f["method"]; v != nil {
			m, _ := d.str(v, what+".method")
			r.Method = strings.ToUpper(m)
		}
		if v := f["campus"]; v != nil {
			r.Campus, _ = d.str(v, what+".campus")
		}
		if v := f["status"]; v != nil {
			s, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || s < 100 || s > 599 {
				d.errorf(pos(v), "%s.status must be an HTTP status from 100 to 599, got %s", what, kindName(v))
			}
			r.Status = s
		}
		if v := f["headers"]; v != nil {
			hf, hk := d.fields(v, what+".headers")
			for _, k := range hk {
				if s, ok := d.str(hf[k.Value], what+".headers."+k.Value); ok {
					r.Header.Add(k.Value, s)
				}
			}
		}
		body, file := f["body"], f["file"]
		switch {
		case body != nil && file != nil:
			d.errorf(pos(file), "%s: give either body or file, not both", what)
		case body != nil:
			d.responseBody(r, body, what)
		case file != nil:
			d.responseFile(r, file, what)
		}
		c.Responses = append(c.Responses, r)
	}
}

func (d *decoder) responseBody(r *Response, n *yaml.Node, what string) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() != "!!null" {
			r.Body = []byte(n.Value)
		}
	case yaml.MappingNode, yaml.SequenceNode:
		v, ok := d.valueOK(n)
		if !ok {
			return
		}
		js, err := expr.ToJSON(v, "")
		if err != nil {
			d.errorf(pos(n), "%s.body: %v", what, err)
			return
		}
		r.Body = js
		if r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json")
		}
	default:
		d.errorf(pos(n), "%s.body must be a string, a mapping or a list, got %s", what, kindName(n))
	}
}

func (d *decoder) responseFile(r *Response, n *yaml.Node, what string) {
	rel, ok := d.str(n, what+".file")
	if !ok {
		return
	}
	if path.IsAbs(rel) || strings.Contains(rel, `\`) {
		d.errorf(pos(n), "%s.file must be a relative path with / separators, got %q", what, rel)
		return
	}
	name := path.Join(d.dir, rel)
	if !fs.ValidPath(name) {
		d.errorf(pos(n), "%s.file %q is outside the plugin folder", what, rel)
		return
	}
	if d.fsys == nil {
		d.errorf(pos(n), "%s.file: no folder to read %q from", what, rel)
		return
	}
	// The size is known before reading: a link to /dev/zero or a FIFO is refused, not read.
	data, err := safefs.ReadFS(d.ctx, d.fsys, name, maxTestFileSize)
	if err != nil {
		d.errorf(pos(n), "%s.file: cannot read %q: %v", what, rel, unwrapPath(err))
		return
	}
	// A fixture has only the headers the test gives it, as a real reply would: no Content-Type
	// is guessed from the file name, so a page declaring its charset in <meta> reads as live.
	r.Body = data
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var abilityNameRE = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*\.[a-z][a-zA-Z0-9]*$`)

func (d *decoder) abilities(c *Case, n *yaml.Node) {
	f, keys := d.fields(n, "abilities")
	c.Abilities = map[string]*AbilityAnswers{}
	for _, k := range keys {
		what := "abilities." + k.Value
		if !abilityNameRE.MatchString(k.Value) {
			d.errorf(pos(k), "abilities: %q is not of the form group.op (e.g. verify.treehole)", k.Value)
			continue
		}
		v := f[k.Value]
		a := &AbilityAnswers{Pos: pos(v)}
		if v.Kind == yaml.MappingNode && len(v.Content) == 2 && v.Content[0].Value == "calls" {
			calls := v.Content[1]
			if calls.Kind != yaml.SequenceNode || len(calls.Content) == 0 {
				d.errorf(pos(calls), "%s.calls must be a non-empty list", what)
				continue
			}
			for i, cn := range calls.Content {
				cw := fmt.Sprintf("%s.calls[%d]", what, i)
				cf, _ := d.fields(cn, cw, "args", "result", "error")
				if cf == nil {
					continue
				}
				ca := &AbilityCallAnswer{Pos: pos(cn)}
				if an := cf["args"]; an != nil {
					ca.Args, ca.HasArgs = d.valueOK(an)
				}
				res, er := cf["result"], cf["error"]
				switch {
				case res != nil && er != nil:
					d.errorf(pos(er), "%s: give either result or error, not both", cw)
				case res != nil:
					ca.Result, _ = d.valueOK(res)
				case er != nil:
					if ca.Error, _ = d.str(er, cw+".error"); ca.Error == "" {
						d.errorf(pos(er), "%s.error must be a non-empty message", cw)
					}
				default:
					d.errorf(pos(cn), "%s: missing key \"result\" or \"error\"", cw)
				}
				a.Calls = append(a.Calls, ca)
			}
		} else {
			a.Value, _ = d.valueOK(v)
		}
		c.Abilities[k.Value] = a
	}
}

var expectRequestKeys = []string{"match", "method", "query", "json", "form", "headers"}

func (d *decoder) expectRequests(c *Case, n *yaml.Node) {
	c.HasExpectRequests, c.ExpectRequestsPos = true, pos(n)
	if n.Kind != yaml.SequenceNode {
		d.errorf(pos(n), "expectRequests must be a list, got %s", kindName(n))
		return
	}
	c.ExpectRequests = []*ExpectedRequest{}
	for i, rn := range n.Content {
		what := fmt.Sprintf("expectRequests[%d]", i)
		f, _ := d.fields(rn, what, expectRequestKeys...)
		if f == nil {
			continue
		}
		r := &ExpectedRequest{Pos: pos(rn)}
		if v := f["match"]; v != nil {
			r.Match, _ = d.str(v, what+".match")
		} else {
			d.errorf(pos(rn), "%s: missing key \"match\"", what)
		}
		if v := f["method"]; v != nil {
			m, _ := d.str(v, what+".method")
			r.Method = strings.ToUpper(m)
		}
		if v := f["query"]; v != nil {
			if v.Kind != yaml.MappingNode {
				d.errorf(pos(v), "%s.query must be a mapping, got %s", what, kindName(v))
			} else {
				r.Query, r.HasQuery = d.valueOK(v)
			}
		}
		if v := f["form"]; v != nil {
			if v.Kind != yaml.MappingNode {
				d.errorf(pos(v), "%s.form must be a mapping, got %s", what, kindName(v))
			} else {
				r.Form, r.HasForm = d.valueOK(v)
			}
		}
		if v := f["json"]; v != nil {
			r.JSON, r.HasJSON = d.valueOK(v)
		}
		if v := f["headers"]; v != nil {
			hf, hk := d.fields(v, what+".headers")
			r.Header = map[string]string{}
			for _, k := range hk {
				if s, ok := d.str(hf[k.Value], what+".headers."+k.Value); ok {
					r.Header[http.CanonicalHeaderKey(k.Value)] = s
				}
			}
		}
		c.ExpectRequests = append(c.ExpectRequests, r)
	}
}
