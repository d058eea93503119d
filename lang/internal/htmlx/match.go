package htmlx

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/pkuinfo/harness/lang/internal/workcount"
	"golang.org/x/net/html"
)

// Matching CSS selectors in bounded time.
//
// cascadia matches a complex selector such as "p div div div" by backtracking: for each
// candidate it tries every ancestor for the previous step, and for each of those every ancestor
// again, so a selector of k descendant (or "~" sibling) steps costs up to depth^k per element
// (200 nested divs and four steps took 14 s). This file matches the same selectors step by step
// with a memo: whether element n matches steps 0…j (matched[j][n]) and whether some ancestor or
// earlier sibling of n does (above[j][n], before[j][n]) is computed once, so a query costs at most
// (elements reached × steps) evaluations, each of which is charged (stepWeight) before it runs.
// A selector with a single descendant or '~' step cannot backtrack more than one level; it is
// matched without the memo (each candidate tries its ancestors or earlier siblings once, every
// evaluation charged), which is what cascadia does and cheaper than keeping a memo.
//
// The structure of the selector is read by our own split of its source into compound selectors
// and combinators; each compound is compiled by cascadia, and the split is checked by parsing the
// pieces joined again with cascadia and comparing the result with cascadia's parse of the whole
// (reflect.DeepEqual), so that matching is exactly cascadia's. Selectors nested inside :not,
// :has, :is, :where and the like are matched by cascadia itself; Compile refuses more than one
// descendant combinator and any "~" combinator there, which bounds their cost per element by
// the tree's depth (at most 512), charged as such.

// stepWeight is what evaluating one step of a selector on one element costs, in the bytes of
// the package's KB unit (so 32 evaluations make one operation).
const stepWeight = elementWeight

// step is one compound selector of a complex selector and the combinator that joins it to the
// previous step (0 for the first).
type step struct {
	comb byte // 0, ' ', '>', '+', '~'
	sel  cascadia.Sel
}

// complexSel is one selector of a group: steps[len-1] is the subject.
type complexSel struct {
	steps []step
}

// errUnsplit is returned by splitComplex when our split does not give cascadia's structure.
var errUnsplit = errors.New("selector structure not understood")

// splitGroup splits a selector group at top-level commas.
func splitGroup(css string) []string {
	var parts []string
	start := 0
	scanTop(css, func(i int, c byte) bool {
		if c == ',' {
			parts = append(parts, css[start:i])
			start = i + 1
		}
		return true
	})
	return append(parts, css[start:])
}

// scanTop calls f for every byte of css outside brackets, parentheses, strings, comments and
// escapes, with its index; f returning false stops the scan.
func scanTop(css string, f func(i int, c byte) bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(css); i++ {
		c := css[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		case c == '\\':
			i += escapeLen(css[i:]) - 1
			continue
		case c == '"' || c == '\'':
			quote = c
			continue
		case c == '/' && strings.HasPrefix(css[i:], "/*"):
			if end := strings.Index(css[i+2:], "*/"); end >= 0 {
				if depth == 0 && !f(i, ' ') { // a comment separates as white space does
					return
				}
				i += end + 3
				continue
			}
		case c == '(' || c == '[':
			depth++
			continue
		case c == ')' || c == ']':
			depth--
			continue
		}
		if depth == 0 && !f(i, c) {
			return
		}
	}
}

// escapeLen is the length of the escape at the start of s (a backslash), as cascadia reads it.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	if !isHex(s[1]) {
		return 2
	}
	i := 1
	for i < 7 && i < len(s) && isHex(s[i]) {
		i++
	}
	if i < len(s) {
		switch s[i] {
		case '\r':
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case ' ', '\t', '\n', '\f':
			i++
		}
	}
	return i
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' }

// splitSteps splits one complex selector into compound sources and combinators.
func splitSteps(src string) (parts []string, combs []byte) {
	cur := strings.Builder{}
	var pending byte // combinator seen since the last compound
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, cur.String())
			combs = append(combs, pending)
			cur.Reset()
			pending = 0
		}
	}
	last := 0
	scanTop(src, func(i int, c byte) bool {
		switch {
		case isSpace(c):
			cur.WriteString(src[last:i])
			last = i + 1
			if strings.HasPrefix(src[i:], "/*") {
				end := strings.Index(src[i+2:], "*/")
				last = i + end + 4
			}
			flush()
			if pending == 0 && len(parts) > 0 {
				pending = ' '
			}
		case c == '>' || c == '+' || c == '~':
			cur.WriteString(src[last:i])
			last = i + 1
			flush()
			pending = c
		}
		return true
	})
	cur.WriteString(src[last:])
	flush()
	if len(combs) > 0 {
		combs[0] = 0
	}
	return parts, combs
}

// compileComplex splits src and compiles its steps, checking the split against cascadia's own
// parse of src (want).
func compileComplex(src string, want cascadia.Sel) (*complexSel, error) {
	parts, combs := splitSteps(src)
	if len(parts) == 0 {
		return nil, errUnsplit
	}
	cs := &complexSel{}
	var canon strings.Builder
	for i, p := range parts {
		sel, err := cascadia.Parse(p)
		if err != nil {
			return nil, errUnsplit
		}
		if i > 0 {
			canon.WriteByte(' ')
			if combs[i] != ' ' {
				canon.WriteByte(combs[i])
				canon.WriteByte(' ')
			}
		}
		canon.WriteString(p)
		cs.steps = append(cs.steps, step{comb: combs[i], sel: sel})
	}
	again, err := cascadia.Parse(canon.String())
	if err != nil || !reflect.DeepEqual(again, want) {
		return nil, errUnsplit
	}
	return cs, nil
}

// nestedPseudos are the pseudo-classes whose argument is a selector that cascadia matches.
var nestedPseudos = []string{":not(", ":has(", ":haschild(", ":is(", ":where("}

// checkNested refuses selectors nested in pseudo-classes that could make cascadia backtrack:
// more than one descendant combinator, or a "~" combinator. It returns how many descendant
// combinators they hold (each costs up to the depth of the tree per element).
func checkNested(css string) (int, error) {
	lower := strings.ToLower(css)
	total := 0
	for _, p := range nestedPseudos {
		for off := 0; ; {
			i := strings.Index(lower[off:], p)
			if i < 0 {
				break
			}
			start := off + i + len(p)
			end := matchingParen(css, start)
			inner := css[start:end]
			for _, part := range splitGroup(inner) {
				_, combs := splitSteps(strings.TrimLeft(part, " \t\r\n\f>+"))
				desc := 0
				for _, c := range combs {
					switch c {
					case ' ':
						desc++
					case '~':
						return 0, fmt.Errorf("a '~' combinator inside %s) could take too long to match; use it outside", p)
					}
				}
				if strings.HasPrefix(strings.TrimLeft(part, " \t\r\n\f"), "~") {
					return 0, fmt.Errorf("a '~' combinator inside %s) could take too long to match; use it outside", p)
				}
				if desc > 1 {
					return 0, fmt.Errorf("more than one descendant combinator inside %s) could take too long to match; use them outside", p)
				}
				total += desc
			}
			off = start
		}
	}
	return total, nil
}

// matchingParen returns the index of the ')' closing the parenthesis opened before start (or
// len(s)).
func matchingParen(s string, start int) int {
	depth := 1
	var quote byte
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\\':
			i++
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// matcher is one query's memo over the steps of one complex selector.
type matcher struct {
	cs *complexSel
	mt *meter
	// matched[j][i]: node i matches steps 0…j; above[j][i]: some ancestor of it does;
	// before[j][i]: some earlier sibling of it does. Values: 0 unknown, 1 false, 2 true. Nodes
	// are numbered as they are first met (idx), so a memo entry is one byte.
	matched, above, before [][]uint8
	idx                    map[*html.Node]int32
	nested                 int // descendant combinators inside pseudo-classes: each costs the depth
	// direct: the selector has at most one descendant or '~' step, so it cannot backtrack
	// more than one level; it is matched without a memo (each evaluation still charged), as
	// cascadia would, which is cheaper for the common "td.name a".
	direct bool
}

func newMatcher(cs *complexSel, mt *meter, nested int) *matcher {
	k := len(cs.steps)
	back := 0
	for _, s := range cs.steps {
		if s.comb == ' ' || s.comb == '~' {
			back++
		}
	}
	m := &matcher{cs: cs, mt: mt, nested: nested, direct: back <= 1}
	if !m.direct {
		m.idx = make(map[*html.Node]int32)
		m.matched, m.above, m.before = make([][]uint8, k), make([][]uint8, k), make([][]uint8, k)
	}
	return m
}

// index numbers n on first sight.
func (m *matcher) index(n *html.Node) int32 {
	i, ok := m.idx[n]
	if !ok {
		i = int32(len(m.idx))
		m.idx[n] = i
	}
	return i
}

func (m *matcher) memoGet(ms [][]uint8, j int, n *html.Node) uint8 {
	if m.direct {
		return 0
	}
	i := m.index(n)
	if int(i) >= len(ms[j]) {
		return 0
	}
	return ms[j][i]
}

func (m *matcher) memoSet(ms [][]uint8, j int, n *html.Node, v bool) bool {
	if m.direct {
		return v
	}
	i := int(m.index(n))
	if i >= len(ms[j]) {
		ms[j] = append(ms[j], make([]uint8, i+1-len(ms[j])+len(ms[j])/2)...)
	}
	if v {
		ms[j][i] = 2
	} else {
		ms[j][i] = 1
	}
	return v
}

// evalWeight is what evaluating one compound selector on n costs: stepWeight, and for each
// descendant combinator nested in a pseudo-class the depth of n, since cascadia tries every
// ancestor for it. With paid, the walk that reached n has paid for one evaluation already.
func evalWeight(n *html.Node, nested int, paid bool) int {
	w := stepWeight
	if paid {
		w = 0
	}
	if nested > 0 {
		d := 0
		for p := n.Parent; p != nil; p = p.Parent {
			d++
		}
		w += nested * d * stepWeight
	}
	return w
}

// compound evaluates step j's compound selector on n, charged before it runs.
func (m *matcher) compound(j int, n *html.Node, paid bool) (bool, error) {
	if err := m.mt.add(evalWeight(n, m.nested, paid)); err != nil {
		return false, err
	}
	workcount.Add(1)
	return m.cs.steps[j].sel.Match(n), nil
}

// match reports whether n matches steps 0…j.
func (m *matcher) match(j int, n *html.Node) (bool, error) {
	return m.matchPaid(j, n, false)
}

// matchPaid is match where, with paid, the first evaluation has been paid for by the walk.
func (m *matcher) matchPaid(j int, n *html.Node, paid bool) (bool, error) {
	last := j == len(m.cs.steps)-1 // the subject's answer is never asked for twice: no memo
	if !last {
		if v := m.memoGet(m.matched, j, n); v != 0 {
			return v == 2, nil
		}
	}
	ok, err := m.compound(j, n, paid)
	if err != nil {
		return false, err
	}
	if ok && j > 0 {
		switch m.cs.steps[j].comb {
		case ' ':
			ok, err = m.anyAbove(j-1, n)
		case '>':
			ok = false
			if n.Parent != nil {
				ok, err = m.match(j-1, n.Parent)
			}
		case '+':
			ok = false
			p := n.PrevSibling
			for p != nil && (p.Type == html.TextNode || p.Type == html.CommentNode) {
				p = p.PrevSibling
			}
			if p != nil {
				ok, err = m.match(j-1, p)
			}
		case '~':
			ok, err = m.anyBefore(j-1, n)
		}
		if err != nil {
			return false, err
		}
	}
	if last {
		return ok, nil
	}
	return m.memoSet(m.matched, j, n, ok), nil
}

// anyAbove reports whether some ancestor of n matches steps 0…j. It walks up to the first
// ancestor whose answer is known, then fills the answers in on the way down, so each ancestor
// is evaluated once per step.
func (m *matcher) anyAbove(j int, n *html.Node) (bool, error) {
	if m.direct { // no step below j backtracks: try each ancestor once, nearest first
		for p := n.Parent; p != nil; p = p.Parent {
			if ok, err := m.match(j, p); ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	}
	var path []*html.Node
	result := false
	for p := n.Parent; p != nil; p = p.Parent {
		if v := m.memoGet(m.above, j, p); v != 0 {
			result = v == 2
			// p's own match still counts for n's answer.
			path = append(path, p)
			return m.fillAbove(j, path, result, true)
		}
		path = append(path, p)
	}
	return m.fillAbove(j, path, false, false)
}

// fillAbove computes above[j] for n's ancestors path[0] (the parent) … path[len-1] (topmost),
// where the topmost's own above answer is known (known) and is top.
func (m *matcher) fillAbove(j int, path []*html.Node, top bool, known bool) (bool, error) {
	// above(x) = match(parent(x)) || above(parent(x)); n's answer is match(path[0]) || above(path[0]).
	acc := false // above(path[i]) as we go down
	last := len(path) - 1
	if known {
		acc = top // above(path[last]) is memoized
	}
	for i := last; i >= 0; i-- {
		x := path[i]
		if i < last || !known {
			m.memoSet(m.above, j, x, acc)
		}
		ok, err := m.match(j, x)
		if err != nil {
			return false, err
		}
		acc = acc || ok // above of path[i-1] (x's child)
	}
	return acc, nil
}

// anyBefore reports whether some earlier sibling of n matches steps 0…j, filling before[j] for
// the siblings on the way as anyAbove does.
func (m *matcher) anyBefore(j int, n *html.Node) (bool, error) {
	if m.direct {
		for p := n.PrevSibling; p != nil; p = p.PrevSibling {
			if ok, err := m.match(j, p); ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	}
	var path []*html.Node
	known, top := false, false
	for p := n.PrevSibling; p != nil; p = p.PrevSibling {
		path = append(path, p)
		if v := m.memoGet(m.before, j, p); v != 0 {
			known, top = true, v == 2
			break
		}
	}
	acc := false
	last := len(path) - 1
	if known {
		acc = top
	}
	for i := last; i >= 0; i-- {
		x := path[i]
		if i < last || !known {
			m.memoSet(m.before, j, x, acc)
		}
		ok, err := m.match(j, x)
		if err != nil {
			return false, err
		}
		acc = acc || ok
	}
	return acc, nil
}
