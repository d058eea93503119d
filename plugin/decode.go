package plugin

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
)

// fileDec decodes the nodes of one file, reporting problems against it.
type fileDec struct {
	src *source
	d   *diagList

	// While decodeTool decodes a tool's steps: the plugin's Env, the tool's layer over it and the
	// names of the tool's own functions (see parseEnv).
	root, local *expr.Env
	localFuncs  []string
}

// parseEnv returns the Env to parse src with when the field belongs to env. A source that names
// none of the tool's own functions (not even as part of a longer word) means the same in the
// tool's layer and in the plugin's Env: every name it calls or reads resolves to the same shared
// function or builtin, and checking it reports the same problems. Such a source is parsed in the
// plugin's Env, whose cache is shared by every tool, so that a source the tools repeat is parsed
// once per plugin, not once per tool.
func (f *fileDec) parseEnv(env *expr.Env, src string) *expr.Env {
	if f.root == nil || env != f.local {
		return env
	}
	for _, name := range f.localFuncs {
		if strings.Contains(src, name) {
			return env
		}
	}
	return f.root
}

func (f *fileDec) file() string { return f.src.name }

func (f *fileDec) errorf(n *yaml.Node, step, format string, args ...any) {
	f.d.errorf(f.src.name, f.src.nodePos(n), step, format, args...)
}

func (f *fileDec) warnf(n *yaml.Node, step, format string, args ...any) {
	f.d.warnf(f.src.name, f.src.nodePos(n), step, format, args...)
}

func (f *fileDec) pos(n *yaml.Node) diag.Pos { return f.src.nodePos(n) }

// pair is one key and value of a YAML map.
type pair struct {
	key  string
	k, v *yaml.Node
}

// mapping returns the pairs of a map node in written order, or reports that n is not a map. what
// names the value in the message ("the manifest", "input.day"). Null is not a map: a frontmatter
// of `null` or `~`, or `input:` with nothing after it, is an error, not an empty map.
func (f *fileDec) mapping(n *yaml.Node, what, step string) ([]pair, bool) {
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		f.errorf(n, step, "%s must be a map, not %s", what, yamlKind(n))
		return nil, false
	}
	return appendPairs(make([]pair, 0, len(n.Content)/2), n), true
}

// appendPairs appends the pairs of map node n to ps.
func appendPairs(ps []pair, n *yaml.Node) []pair {
	for i := 0; i+1 < len(n.Content); i += 2 {
		ps = append(ps, pair{key: n.Content[i].Value, k: n.Content[i], v: n.Content[i+1]})
	}
	return ps
}

// fieldSet collects a map's pairs by key, reporting keys not in known. Later duplicates win
// (hardenYAML has reported them).
type fieldSet struct {
	f     *fileDec
	n     *yaml.Node
	pairs []pair
	order []string
}

func (f *fileDec) fields(n *yaml.Node, what, step string, known ...string) (*fieldSet, bool) {
	ps, ok := f.mapping(n, what, step)
	if !ok {
		return nil, false
	}
	fs := &fieldSet{f: f, n: n, pairs: ps[:0], order: make([]string, 0, len(ps))}
	for _, p := range ps {
		if !contains(known, p.key) {
			hint := suggest(p.key, known)
			if hint == "" && n.Style&yaml.FlowStyle != 0 && p.v.Tag == "!!null" && p.v.Value == "" {
				hint = " (inside { … } a comma ends a value: quote text that contains a comma)"
			}
			f.errorf(p.k, step, "unknown field %q in %s%s", p.key, what, hint)
			continue
		}
		if !contains(fs.order, p.key) {
			fs.order = append(fs.order, p.key)
		}
		fs.pairs = append(fs.pairs, p)
	}
	return fs, true
}

func (fs *fieldSet) find(key string) (pair, bool) {
	for i := len(fs.pairs) - 1; i >= 0; i-- {
		if fs.pairs[i].key == key {
			return fs.pairs[i], true
		}
	}
	return pair{}, false
}

func (fs *fieldSet) get(key string) *yaml.Node {
	p, _ := fs.find(key)
	return p.v
}

func (fs *fieldSet) key(key string) *yaml.Node {
	p, _ := fs.find(key)
	return p.k
}

func (fs *fieldSet) has(key string) bool { _, ok := fs.find(key); return ok }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns ` (did you mean "x"?)` for the closest known name within two edits, or "".
func suggest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(s), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 99
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// str reads a scalar as text. Numbers and booleans are read as written; null, maps and lists are
// errors.
func (f *fileDec) str(n *yaml.Node, what, step string) (string, bool) {
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		f.errorf(n, step, "%s must be a string, not %s", what, yamlKind(n))
		return "", false
	}
	return n.Value, true
}

// boolean reads true or false; yes/no/on/off get a hint (YAML 1.2 reads them as strings).
func (f *fileDec) boolean(n *yaml.Node, what, step string) (bool, bool) {
	if n == nil {
		return false, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", true
	}
	if yesNo(n) {
		f.errorf(n, step, "%s must be true or false; %q is a string in YAML 1.2 (write true or false)", what, n.Value)
		return false, false
	}
	f.errorf(n, step, "%s must be true or false, not %s", what, yamlKind(n))
	return false, false
}

// integer reads a whole number.
func (f *fileDec) integer(n *yaml.Node, what, step string) (int, bool) {
	if n == nil {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		v, err := yamlValue(n)
		if fv, ok := v.(float64); err == nil && ok && fv == math.Trunc(fv) && math.Abs(fv) < 1<<31 {
			return int(fv), true
		}
	}
	f.errorf(n, step, "%s must be a whole number, not %s", what, yamlKind(n))
	return 0, false
}

// number reads a number.
func (f *fileDec) number(n *yaml.Node, what, step string) (float64, bool) {
	if n != nil && n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		v, err := yamlValue(n)
		if fv, ok := v.(float64); err == nil && ok && !math.IsNaN(fv) && !math.IsInf(fv, 0) {
			return fv, true
		}
	}
	if n != nil {
		f.errorf(n, step, "%s must be a number, not %s", what, yamlKind(n))
	}
	return 0, false
}

// strList reads a list of strings.
func (f *fileDec) strList(n *yaml.Node, what, step string) ([]string, []diag.Pos, bool) {
	if n == nil {
		return nil, nil, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil, true
	}
	if n.Kind != yaml.SequenceNode {
		f.errorf(n, step, "%s must be a list of strings, not %s", what, yamlKind(n))
		return nil, nil, false
	}
	out := make([]string, 0, len(n.Content))
	ps := make([]diag.Pos, 0, len(n.Content))
	ok := true
	for i, c := range n.Content {
		s, good := f.str(c, indexPath(what, i), step)
		if !good {
			ok = false
			continue
		}
		out = append(out, s)
		ps = append(ps, f.pos(c))
	}
	return out, ps, ok
}

// value reads any YAML value as an expression value.
func (f *fileDec) value(n *yaml.Node, what, step string) (any, bool) {
	v, err := yamlValue(n)
	if err != nil {
		f.errorf(n, step, "%s: %v", what, err)
		return nil, false
	}
	return v, true
}

var durationRe = regexp.MustCompile(`^(\d+)(s|m|h|d)$`)

// duration reads "30s", "10m", "2h", "1d" or a number of seconds (docs/DECISIONS.md §6).
func (f *fileDec) duration(n *yaml.Node, what, step string) (time.Duration, bool) {
	if n == nil {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		v, _ := yamlValue(n)
		if fv, ok := v.(float64); ok && fv >= 0 && fv <= 366*24*3600 {
			return time.Duration(fv * float64(time.Second)), true
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if m := durationRe.FindStringSubmatch(n.Value); m != nil {
			k, err := strconv.Atoi(m[1])
			if err == nil && k <= 366*24*3600 {
				unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
				d := time.Duration(k) * unit
				if d <= 366*24*time.Hour {
					return d, true
				}
			}
		}
	}
	f.errorf(n, step, "%s must be a duration such as 30s, 10m, 2h or 1d, or a number of seconds", what)
	return 0, false
}

// exprField parses an expression field. A map or list where an expression belongs gets the
// "quote the expression" hint (docs/DECISIONS.md §7).
func (f *fileDec) exprField(n *yaml.Node, what, step string, env *expr.Env) *ExprField {
	if n == nil {
		return nil
	}
	switch {
	case n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode:
		f.errorf(n, step, "%s is an expression, but YAML read %s here: quote the expression (or write it as a | block)", what, yamlKind(n))
		return nil
	case n.Kind != yaml.ScalarNode || n.Tag == "!!null":
		f.errorf(n, step, "%s must be an expression, not %s", what, yamlKind(n))
		return nil
	}
	ef := &ExprField{Scalar: newScalar(f.src, n)}
	if env == nil {
		return ef
	}
	x, err := f.parseEnv(env, ef.Src).Parse(ef.Src)
	if err != nil {
		if src := strings.TrimSpace(ef.Src); strings.HasPrefix(src, "${") && strings.HasSuffix(src, "}") {
			f.d.errorf(ef.File, ef.Pos, step, "%s is an expression, not a template: write it without ${ }", what)
			return ef
		}
		f.exprErrors(&ef.Scalar, step, what, err)
		return ef
	}
	ef.Expr = x
	return ef
}

// templateField parses a template string field.
func (f *fileDec) templateField(n *yaml.Node, what, step string, env *expr.Env) *TemplateField {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		f.errorf(n, step, "%s must be a string, not %s", what, yamlKind(n))
		return nil
	}
	tf := &TemplateField{Scalar: newScalar(f.src, n)}
	if env == nil {
		return tf
	}
	t, err := f.parseEnv(env, tf.Src).ParseTemplate(tf.Src)
	if err != nil {
		f.exprErrors(&tf.Scalar, step, what, err)
		return tf
	}
	tf.Tmpl = t
	return tf
}

// templateValue reads a value whose strings are templates.
func (f *fileDec) templateValue(n *yaml.Node, what, step string, env *expr.Env) *TemplateValue {
	if n == nil {
		return nil
	}
	tv := &TemplateValue{Pos: f.pos(n)}
	switch n.Kind {
	case yaml.MappingNode:
		tv.IsMap = true
		tv.Keys = make([]string, 0, len(n.Content)/2)
		tv.Fields = make([]*TemplateValue, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			tv.Keys = append(tv.Keys, k)
			tv.Fields = append(tv.Fields, f.templateValue(n.Content[i+1], what+"."+k, step, env))
		}
	case yaml.SequenceNode:
		tv.List = make([]*TemplateValue, 0, len(n.Content))
		for i, c := range n.Content {
			tv.List = append(tv.List, f.templateValue(c, indexPath(what, i), step, env))
		}
	case yaml.ScalarNode:
		if n.Tag == "!!str" {
			tv.Tmpl = f.templateField(n, what, step, env)
			if tv.Tmpl == nil {
				tv.Scalar = n.Value
			}
			return tv
		}
		v, _ := f.value(n, what, step)
		tv.Scalar = v
	}
	return tv
}

// exprErrors reports the errors of parsing or checking sc's source at their positions in the
// file.
func (f *fileDec) exprErrors(sc *Scalar, step, what string, err error) {
	reportExprErrors(f.d, sc, step, what, err)
}

func reportExprErrors(d *diagList, sc *Scalar, step, what string, err error) {
	var list expr.ErrorList
	switch e := err.(type) {
	case expr.ErrorList:
		list = e
	case *expr.Error:
		list = expr.ErrorList{e}
	default:
		d.errorf(sc.File, sc.Pos, step, "%s: %v", what, err)
		return
	}
	for _, e := range list {
		d.errorf(sc.File, sc.FilePos(e.Pos), step, "%s: %s", what, e.Msg)
	}
}

// indexPath returns "what[i]" without fmt.
func indexPath(what string, i int) string {
	return what + "[" + strconv.Itoa(i) + "]"
}
