package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
)

// Limits of the YAML layer (seed "Layout": at most 512 KB of loaded files; docs/DECISIONS.md §7).
const (
	// MaxTotalBytes caps the files one plugin loads, all together.
	MaxTotalBytes = 512 << 10
	// maxYAMLDepth caps how deeply YAML collections nest; the deepest legitimate plugin nests
	// steps a dozen levels.
	maxYAMLDepth = 64
)

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML parses one YAML document after the layer's checks: the size cap, UTF-8, a single
// document, and hardenYAML. text is what the YAML parser reads; its lines must match src's lines
// (PLUGIN.md passes its frontmatter with the opening "---" line blanked). It returns the
// document's root node, or nil after reporting why there is none. aliases reports whether an
// alias was found, in which case the tree must not be decoded.
func parseYAML(src *source, text []byte, d *diagList) (root *yaml.Node, ok bool) {
	file := src.name
	if len(text) > MaxTotalBytes {
		d.errorf(file, diag.Pos{Line: 1, Col: 1}, "", "file is %d bytes, the limit is %d", len(text), MaxTotalBytes)
		return nil, false
	}
	if !utf8.Valid(text) {
		d.errorf(file, src.pos(firstInvalidUTF8(text)), "", "file is not UTF-8 text")
		return nil, false
	}
	if i := bytes.IndexByte(text, 0); i >= 0 {
		d.errorf(file, src.pos(i), "", "file contains a NUL byte")
		return nil, false
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(file, diag.Pos{Line: 1, Col: 1}, "", "file is empty")
			return nil, false
		}
		reportYAMLError(src, text, err, d)
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errorf(file, src.nodePos(&extra), "", "a file holds one YAML document; remove the second `---`")
		return nil, false
	} else if !errors.Is(err, io.EOF) {
		reportYAMLError(src, text, err, d)
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		d.errorf(file, diag.Pos{Line: 1, Col: 1}, "", "file is empty")
		return nil, false
	}
	root = doc.Content[0]
	if !hardenYAML(src, root, 0, d) {
		return root, false
	}
	return root, true
}

// reportYAMLError reports a syntax error of the YAML parser. The parser's message carries a line
// (often the line of the enclosing collection, not of the problem) and no column, so the position
// is found again: the shortest prefix of text that fails with the same problem ends at the
// character the parser stopped at (yamlProblemAt). When that search does not settle, the error
// points at the parser's line, at its first non-blank character.
func reportYAMLError(src *source, text []byte, err error, d *diagList) {
	line, msg := splitYAMLError(err.Error())
	var p diag.Pos
	var off int
	var ok bool
	if strings.HasPrefix(msg, "did not find expected ',' or ") {
		// The parser fails at the end of the text, inside an unclosed [ or {; a shorter prefix
		// would fail at an item of it. Point at the bracket.
		close := msg[len(msg)-2]
		off, ok = unclosedBracket(text, len(text)-1, map[byte]byte{']': '[', '}': '{'}[close], close)
		if ok {
			msg += fmt.Sprintf(" (this %c is not closed)", text[off])
		}
	} else {
		off, ok = yamlProblemAt(text, msg)
	}
	if ok {
		p = src.pos(off)
		if text[off] == '\t' && inIndent(text, off) {
			d.errorf(src.name, p, "", "YAML does not allow tabs for indentation; indent with spaces")
			return
		}
	} else {
		p = diag.Pos{Line: max(line, 1), Col: 1}
		if line >= 1 && line <= len(src.lines) {
			off := src.lines[line-1]
			for off < len(src.text) && (src.text[off] == ' ' || src.text[off] == '\t') {
				off++
			}
			p = src.pos(off)
		}
	}
	if strings.Contains(msg, "mapping values are not allowed") {
		msg += " (quote a value that contains \": \" or \" : \", such as an expression)"
	}
	d.errorf(src.name, p, "", "YAML: %s", msg)
}

// splitYAMLError splits "yaml: line 3: problem" into 3 and "problem" (0 when there is no line:
// the parser leaves it out on the first line).
func splitYAMLError(s string) (int, string) {
	if m := yamlLineErr.FindStringSubmatch(s); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 0, strings.TrimPrefix(s, "yaml: ")
}

// maxProblemSearch caps the text yamlProblemAt searches; plugin files are far smaller.
const maxProblemSearch = 64 << 10

// yamlProblemAt returns the offset of the character at which parsing text fails with problem msg:
// the last byte of the shortest prefix that fails with msg while the prefix one byte shorter does
// not. A binary search finds it, so the search assumes that a prefix failing with msg stays failing
// when it grows; the final check confirms the answer, and ok is false when it does not hold.
func yamlProblemAt(text []byte, msg string) (off int, ok bool) {
	if len(text) > maxProblemSearch {
		return 0, false
	}
	fails := func(n int) bool {
		dec := yaml.NewDecoder(bytes.NewReader(text[:n]))
		for {
			var doc yaml.Node
			err := dec.Decode(&doc)
			if err == nil {
				continue
			}
			if errors.Is(err, io.EOF) {
				return false
			}
			_, m := splitYAMLError(err.Error())
			return m == msg
		}
	}
	n := sort.Search(len(text)+1, fails)
	if n == 0 || n > len(text) || !fails(n) || fails(n-1) {
		return 0, false
	}
	off = n - 1
	for off > 0 && !utf8.RuneStart(text[off]) {
		off--
	}
	return off, true
}

// unclosedBracket returns the offset of the open bracket before off that is not closed by then,
// skipping pairs of open and close.
func unclosedBracket(text []byte, off int, open, close byte) (int, bool) {
	if open == 0 || off < 0 || off >= len(text) {
		return 0, false
	}
	depth := 0
	for i := off; i >= 0; i-- {
		switch text[i] {
		case close:
			depth++
		case open:
			if depth == 0 {
				return i, true
			}
			depth--
		}
	}
	return 0, false
}

// inIndent reports whether text[off] is in the blanks that start its line.
func inIndent(text []byte, off int) bool {
	for i := off - 1; i >= 0 && text[i] != '\n'; i-- {
		if text[i] != ' ' && text[i] != '\t' {
			return false
		}
	}
	return true
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// hardenYAML refuses what a plugin never needs and an attacker might use (docs/DECISIONS.md §7, issue
// 3): anchors, aliases, explicit tags, merge keys, non-scalar keys, duplicate keys, and nesting
// deeper than maxYAMLDepth. It reports every such problem and returns false when the tree must not
// be decoded (an alias, a non-scalar key or too deep a nesting).
func hardenYAML(src *source, n *yaml.Node, depth int, d *diagList) bool {
	file := src.name
	ok := true
	if depth > maxYAMLDepth {
		d.errorf(file, src.nodePos(n), "", "YAML nests more than %d levels deep", maxYAMLDepth)
		return false
	}
	if n.Kind == yaml.AliasNode {
		d.errorf(file, src.nodePos(n), "", "YAML aliases (*%s) are not allowed; write the value out", n.Value)
		return false
	}
	if n.Anchor != "" {
		d.errorf(file, src.nodePos(n), "", "YAML anchors (&%s) are not allowed", n.Anchor)
	}
	if n.Style&yaml.TaggedStyle != 0 {
		d.errorf(file, src.nodePos(n), "", "YAML tags (%s) are not allowed", n.Tag)
	}
	switch n.Kind {
	case yaml.MappingNode:
		seen := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				if k.Kind == yaml.AliasNode {
					d.errorf(file, src.nodePos(k), "", "YAML aliases (*%s) are not allowed; write the value out", k.Value)
				} else {
					d.errorf(file, src.nodePos(k), "", "a map key must be a string")
				}
				ok = false
				continue
			}
			if k.Anchor != "" {
				d.errorf(file, src.nodePos(k), "", "YAML anchors (&%s) are not allowed", k.Anchor)
			}
			if k.Style&yaml.TaggedStyle != 0 {
				d.errorf(file, src.nodePos(k), "", "YAML tags (%s) are not allowed", k.Tag)
			}
			if k.Tag == "!!merge" || (k.Value == "<<" && k.Style == 0) {
				d.errorf(file, src.nodePos(k), "", "YAML merge keys (<<) are not allowed")
			}
			if first, dup := seen[k.Value]; dup {
				d.errorf(file, src.nodePos(k), "", "duplicate key %q (first at line %d)", k.Value, first.Line)
			} else {
				seen[k.Value] = k
			}
			if !hardenYAML(src, v, depth+1, d) {
				ok = false
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if !hardenYAML(src, c, depth+1, d) {
				ok = false
			}
		}
	}
	return ok
}

// yamlKind names a node's kind for messages: "a map", "a list", "a string" …
func yamlKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return "a string"
	}
	return "nothing"
}

// yesNo reports whether a scalar is one of the YAML 1.1 booleans that YAML 1.2 reads as strings.
func yesNo(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || n.Style != 0 {
		return false
	}
	switch strings.ToLower(n.Value) {
	case "yes", "no", "on", "off", "y", "n":
		return true
	}
	return false
}

// yamlValue converts a node to an expression value (docs/DECISIONS.md §1): null, bool, float64,
// string, []any, *expr.Object with keys in written order.
func yamlValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool":
			if n.Style == 0 {
				switch n.Value {
				case "true", "True", "TRUE":
					return true, nil
				case "false", "False", "FALSE":
					return false, nil
				}
			}
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, err
			}
			return b, nil
		case "!!int", "!!float":
			if f, ok := plainNumber(n); ok {
				return f, nil
			}
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("%q is not a number", n.Value)
			}
			return f, nil
		}
		return n.Value, nil
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.MappingNode:
		obj := expr.NewObject(len(n.Content) / 2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := yamlValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			obj.Set(n.Content[i].Value, v)
		}
		return obj, nil
	}
	return nil, fmt.Errorf("unsupported YAML node")
}

// plainNumber reads the common spellings of a plain number, -?(0|[1-9][0-9]*)(\.[0-9]+)? in at
// most 15 digits, the way Node.Decode into a float64 reads them (an integer converts exactly),
// without the decoder Node.Decode builds. ok is false for every other spelling (0x1F, 1e3, 012,
// .inf, 1_000, +1 …), which Node.Decode reads.
func plainNumber(n *yaml.Node) (float64, bool) {
	s := n.Value
	if n.Style != 0 || len(s) == 0 || len(s) > 16 {
		return 0, false
	}
	i := 0
	if s[0] == '-' {
		i++
	}
	start, dot := i, -1
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && dot < 0:
			dot = i
		default:
			return 0, false
		}
	}
	intEnd := len(s)
	if dot >= 0 {
		intEnd = dot
		if dot == len(s)-1 {
			return 0, false
		}
	}
	if intEnd == start || (s[start] == '0' && intEnd-start > 1) {
		return 0, false
	}
	if dot < 0 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false
		}
		return float64(v), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}
