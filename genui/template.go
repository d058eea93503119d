package genui

import (
	"regexp"
	"sort"
	"strings"
)

// HostNames are the members of host.* a template may read: the widget size (sm, md or lg; "lg"
// on screens), the viewer's locale ("zh-Hans" or "en") and the time of drawing in Unix ms.
var HostNames = []string{"size", "locale", "now"}

// segment is one ${expr} of a template: the expression text and its byte offset in the
// decoded template string.
type segment struct {
	expr string
	off  int
}

// templateIssue is a problem at a byte offset of the decoded template string.
type templateIssue struct {
	off int
	msg string
}

// splitTemplate finds the ${expr} segments of a template (docs/DECISIONS.md §3; $${ is a literal
// ${). It tracks quotes, template literals and comments inside an expression so that a } in a
// string does not end it. single reports whether the template is exactly one ${expr}.
func splitTemplate(s string) (segs []segment, single bool, issues []templateIssue) {
	i := 0
	for i < len(s) {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		j += i
		if j > 0 && s[j-1] == '$' {
			i = j + 2
			continue
		}
		end, ok := exprEnd(s, j+2)
		if !ok {
			issues = append(issues, templateIssue{off: j, msg: "unclosed ${: add the closing }"})
			return segs, false, issues
		}
		e := s[j+2 : end]
		if strings.TrimSpace(e) == "" {
			issues = append(issues, templateIssue{off: j, msg: "empty ${}"})
		}
		segs = append(segs, segment{expr: e, off: j + 2})
		i = end + 1
	}
	single = len(segs) == 1 && strings.HasPrefix(s, "${") && len(segs[0].expr)+3 == len(s)
	return segs, single, issues
}

// exprEnd returns the index of the } that closes an expression starting at i.
func exprEnd(s string, i int) (int, bool) {
	depth := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			i = skipQuoted(s, i, c)
			continue
		case c == '`':
			i = skipBacktick(s, i)
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			k := strings.IndexByte(s[i:], '\n')
			if k < 0 {
				return 0, false
			}
			i += k
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			k := strings.Index(s[i+2:], "*/")
			if k < 0 {
				return 0, false
			}
			i += k + 4
			continue
		case c == '{':
			depth++
		case c == '}':
			if depth == 0 {
				return i, true
			}
			depth--
		}
		i++
	}
	return 0, false
}

func skipQuoted(s string, i int, q byte) int {
	i++
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case q:
			return i + 1
		}
		i++
	}
	return i
}

func skipBacktick(s string, i int) int {
	i++
	for i < len(s) {
		switch {
		case s[i] == '\\':
			i += 2
			continue
		case s[i] == '`':
			return i + 1
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			end, ok := exprEnd(s, i+2)
			if !ok {
				return len(s)
			}
			i = end + 1
			continue
		}
		i++
	}
	return i
}

// blankStrings replaces the contents of string literals and comments with spaces, keeping
// byte offsets, so that a member scan does not look inside them.
func blankStrings(e string) string {
	b := []byte(e)
	i := 0
	for i < len(b) {
		c := b[i]
		switch {
		case c == '\'' || c == '"':
			end := skipQuoted(e, i, c)
			for k := i + 1; k < end-1 && k < len(b); k++ {
				b[k] = ' '
			}
			i = end
			continue
		case c == '/' && i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '*'):
			end := len(b)
			if b[i+1] == '/' {
				if k := strings.IndexByte(e[i:], '\n'); k >= 0 {
					end = i + k
				}
			} else if k := strings.Index(e[i+2:], "*/"); k >= 0 {
				end = i + k + 4
			}
			for k := i; k < end; k++ {
				b[k] = ' '
			}
			i = end
			continue
		}
		i++
	}
	return string(b)
}

// memberRE finds reads of data.X, t.X, host.X and form.X (also with ?. and ['X']) that are
// not themselves member reads (a.data.x is not a binding).
var memberRE = regexp.MustCompile(`(^|[^.\w$])(data|t|host|form)\s*(?:\?\.|\.)\s*([A-Za-z_$][\w$]*)`)

// checkRefs checks the bindings an expression reads against what the document declares.
func (v *validator) checkRefs(e string, sc scope) []templateIssue {
	var issues []templateIssue
	blank := blankStrings(e)
	for _, m := range memberRE.FindAllStringSubmatchIndex(blank, -1) {
		root, name := blank[m[4]:m[5]], blank[m[6]:m[7]]
		off := m[4]
		if contains(sc.items, root) {
			continue // a List item named like a binding root was already reported
		}
		switch root {
		case "data":
			switch {
			case sc.noData:
				issues = append(issues, templateIssue{off, "the args of a data binding cannot read data.* (it is not loaded yet); use host.*, t.* or form.*"})
			case !v.data[name]:
				issues = append(issues, templateIssue{off, "data." + name + " is not declared in \"data\"" + knownList("it declares", keys(v.data))})
			}
		case "t":
			if !v.hasStrs {
				issues = append(issues, templateIssue{off, "t." + name + " needs a \"strings\" table"})
			} else if !v.strs[name] {
				issues = append(issues, templateIssue{off, "t." + name + " is not a key of strings.zh-Hans"})
			}
		case "host":
			if !contains(HostNames, name) {
				issues = append(issues, templateIssue{off, "host." + name + " does not exist; host has " + strings.Join(HostNames, ", ")})
			}
		case "form":
			switch {
			case v.kind == "widget":
				issues = append(issues, templateIssue{off, "form.* exists on screens only"})
			case !v.fields[name]:
				issues = append(issues, templateIssue{off, "form." + name + " has no Field named " + name})
			}
		}
	}
	return issues
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// inScope reports the names a template may read at the top level in scope sc.
func (v *validator) inScope(sc scope) func(string) bool {
	return func(name string) bool {
		switch name {
		case "host":
			return true
		case "data":
			return !sc.noData
		case "t":
			return v.hasStrs
		case "form":
			return v.kind == "screen"
		case "index":
			return len(sc.items) > 0
		}
		return contains(sc.items, name)
	}
}

// template checks one template string at JSON value j and reports whether it is a single
// ${expr}. Problems are placed at their exact line and column in the JSON file when the string
// has a clean mapping from decoded to source bytes.
func (v *validator) template(j *jvalue, p string, sc scope) bool {
	segs, single, issues := splitTemplate(j.str)
	for _, s := range segs {
		for _, is := range v.checkRefs(s.expr, sc) {
			issues = append(issues, templateIssue{off: s.off + is.off, msg: is.msg})
		}
	}
	if checkExpr != nil && len(segs) > 0 {
		// The reference check above explains a bad binding better than "unknown name"; keep
		// one message per place.
		at := map[int]bool{}
		for _, is := range issues {
			at[is.off] = true
		}
		for _, is := range checkExpr(j.str, v.inScope(sc)) {
			if !at[is.off] {
				issues = append(issues, is)
			}
		}
	}
	if len(issues) == 0 {
		return single
	}
	offs := stringOffsets(v.src, j.off)
	seen := map[string]bool{}
	for _, is := range issues {
		if seen[is.msg] {
			continue
		}
		seen[is.msg] = true
		off := j.off
		if offs != nil && is.off >= 0 && is.off < len(offs) {
			off = offs[is.off]
		}
		v.errAt(off, p, "%s", is.msg)
	}
	return single
}

// checkExpr parses and name-checks a whole template with the plugin expression language; it is
// set by expr.go. It returns problems at byte offsets of the template string.
var checkExpr func(src string, inScope func(string) bool) []templateIssue
