package stdlib

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/internal/workcount"
)

// Size limits of string builtins (docs/DECISIONS.md §5).
const (
	// MaxRepeat is the largest count repeat accepts.
	MaxRepeat = 1000
	// MaxBuiltText is the longest string repeat, padStart and padEnd may build, in bytes (the
	// size of a whole run's result).
	MaxBuiltText = 1 << 20
)

// registerStrings adds the string functions of docs/DECISIONS.md §5. Patterns are RE2 strings
// compiled through the plugin's cache.
func registerStrings(env *expr.Env) {
	m := expr.Method()
	env.Register("str", fnStr, expr.Args(1, 1))
	env.Register("trim", strFn(strings.TrimSpace), m, expr.Args(1, 1))
	env.Register("trimStart", strFn(func(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) }), m, expr.Args(1, 1))
	env.Register("trimEnd", strFn(func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }), m, expr.Args(1, 1))
	env.Register("lower", strFn(strings.ToLower), m, expr.Args(1, 1))
	env.Register("upper", strFn(strings.ToUpper), m, expr.Args(1, 1))
	env.Register("toLowerCase", strFn(strings.ToLower), m, expr.Args(1, 1))
	env.Register("toUpperCase", strFn(strings.ToUpper), m, expr.Args(1, 1))
	env.Register("split", fnSplit, m, expr.Args(2, 3))
	env.Register("replace", fnReplace, m, expr.Args(3, 3), expr.RegexArg(1))
	env.Register("replaceAll", fnReplace, m, expr.Args(3, 3), expr.RegexArg(1))
	env.Register("match", fnMatch, m, expr.Args(2, 2), expr.RegexArg(1))
	env.Register("matchAll", fnMatchAll, m, expr.Args(2, 2), expr.RegexArg(1))
	env.Register("test", fnTest, m, expr.Args(2, 2), expr.RegexArg(1))
	env.Register("startsWith", fnAffix(strings.HasPrefix), m, expr.Args(2, 2))
	env.Register("endsWith", fnAffix(strings.HasSuffix), m, expr.Args(2, 2))
	env.Register("padStart", fnPad(true), m, expr.Args(2, 3))
	env.Register("padEnd", fnPad(false), m, expr.Args(2, 3))
	env.Register("repeat", fnRepeat, m, expr.Args(2, 2))
	env.Register("substring", fnSubstring, m, expr.Args(2, 3))
}

// fnStr is str(x): x as text, as a template shows it (null → "", lists and objects as JSON).
func fnStr(c *expr.Call, args []any) (any, error) {
	s, err := text(c, args[0])
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	return s, nil
}

func strFn(f func(string) string) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		if err := c.Charge(kilo(len(s))); err != nil {
			return nil, err
		}
		return f(s), nil
	}
}

// fnSplit is split(s, sep, limit?): splits on the literal sep as JavaScript does (SPEC §10);
// an empty sep gives the characters.
func fnSplit(c *expr.Call, args []any) (any, error) {
	s, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	sep, err := argString(args, 1)
	if err != nil {
		return nil, err
	}
	limit, err := optInt(args, 2, -1)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	var parts []string
	if sep == "" {
		if err := c.Charge(utf8.RuneCountInString(s)); err != nil {
			return nil, err
		}
		parts = make([]string, 0, utf8.RuneCountInString(s))
		for _, r := range s {
			parts = append(parts, string(r))
		}
	} else {
		if err := c.Charge(strings.Count(s, sep)); err != nil { // one per part, before splitting
			return nil, err
		}
		parts = strings.Split(s, sep)
	}
	if limit >= 0 && limit < len(parts) {
		parts = parts[:limit]
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func regexArg(c *expr.Call, args []any, i int) (*regexp.Regexp, int, error) {
	p, err := argString(args, i)
	if err != nil {
		return nil, 0, err
	}
	return c.RegexpProg(p)
}

// scanAsideBytes is the text length from which a regex scan runs on a goroutine of its own, so
// that the run's context can stop the call while RE2, which cannot be interrupted, finishes the
// scan it has been paid for.
const scanAsideBytes = 256 << 10

// scan runs the regex call f over s. For a long text it waits for f or for the run's context,
// whichever comes first; the context's error stops the builtin at once (f's result is then
// dropped).
func scan(c *expr.Call, s string, f func()) error {
	if len(s) < scanAsideBytes {
		f()
		return nil
	}
	ctx := c.Context()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return expr.Limitf("stopped: %v", ctx.Err())
	}
}

// matchCost is what matching a program of prog instructions over s costs: one operation per KB
// of text, times the program's size in expr.RegexScanInstPerOp units, since RE2's time is
// linear in both.
func matchCost(s string, prog int) int {
	return kilo(len(s)) * (1 + prog/expr.RegexScanInstPerOp)
}

// jsReplacement turns a JavaScript replacement string into regexp.Expand's template: $1 and
// $12 are groups, $& the whole match, $<name> a named group, $$ a dollar; any other $ is literal.
func jsReplacement(s string, groups int) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			if s[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(s[i])
			}
			continue
		}
		n := s[i+1]
		switch {
		case n == '$':
			b.WriteString("$$")
			i++
		case n == '&':
			b.WriteString("${0}")
			i++
		case n >= '0' && n <= '9':
			g := int(n - '0')
			j := i + 2
			if j < len(s) && s[j] >= '0' && s[j] <= '9' && g*10+int(s[j]-'0') <= groups {
				g = g*10 + int(s[j]-'0')
				j++
			}
			if g == 0 || g > groups {
				b.WriteString("$$")
				continue
			}
			fmt.Fprintf(&b, "${%d}", g)
			i = j - 1
		case n == '<':
			if end := strings.IndexByte(s[i:], '>'); end > 2 {
				b.WriteString("${" + s[i+2:i+end] + "}")
				i += end
				continue
			}
			b.WriteString("$$")
		default:
			b.WriteString("$$")
		}
	}
	return b.String()
}

// fnReplace is replace(s, pattern, with) and replaceAll: every match of the regex is replaced;
// with is a string ($1, $&, $<name>, $$ as in JavaScript) or a function called with the match
// and its groups.
func fnReplace(c *expr.Call, args []any) (any, error) {
	s, re, prog, err := textAndRegex(c, args)
	if err != nil {
		return nil, err
	}
	switch w := args[2].(type) {
	case string:
		ms, err := findAll(c, re, prog, s)
		if err != nil {
			return nil, err
		}
		return expandAll(c, re, s, ms, parseExpand(re, jsReplacement(w, re.NumSubexp())))
	case *expr.Func:
		ms, err := findAll(c, re, prog, s)
		if err != nil {
			return nil, err
		}
		return replaceFunc(c, s, ms, w)
	}
	return nil, fmt.Errorf("argument 3 must be a string or a function, got %s", expr.Describe(args[2]))
}

// replaceLimit is the longest text replace may build: MaxText, or the text itself when it is
// longer (a replacement that does not grow the text is never refused).
func replaceLimit(s string) int { return max(expr.MaxText, len(s)) }

// expandPart is one piece of a parsed replacement template: literal text, or group (≥ 0).
type expandPart struct {
	lit   string
	group int // -1: lit
}

// parseExpand parses a regexp.Expand template once, as regexp.Regexp.Expand reads it ($$, $n,
// ${n}, ${name}; a malformed $ is literal; an unknown name is empty), so that the size of every
// replacement is known before any is written.
func parseExpand(re *regexp.Regexp, t string) []expandPart {
	var parts []expandPart
	lit := func(s string) {
		if s == "" {
			return
		}
		if n := len(parts); n > 0 && parts[n-1].group < 0 {
			parts[n-1].lit += s
			return
		}
		parts = append(parts, expandPart{lit: s, group: -1})
	}
	names := re.SubexpNames()
	for len(t) > 0 {
		before, after, ok := strings.Cut(t, "$")
		if !ok {
			break
		}
		lit(before)
		t = after
		if t != "" && t[0] == '$' {
			lit("$")
			t = t[1:]
			continue
		}
		name, num, rest, ok := extractGroup(t)
		if !ok {
			lit("$")
			continue
		}
		t = rest
		if num < 0 {
			num = -2 // an unknown name: nothing
			for i, n := range names {
				if n == name {
					num = i
					break
				}
			}
		}
		if num >= 0 && num <= re.NumSubexp() {
			parts = append(parts, expandPart{group: num})
		}
	}
	lit(t)
	return parts
}

// extractGroup reads a leading "name" or "{name}" after a '$', as regexp's expand does; num is
// the group number, or -1 for a name.
func extractGroup(str string) (name string, num int, rest string, ok bool) {
	if str == "" {
		return
	}
	brace := false
	if str[0] == '{' {
		brace = true
		str = str[1:]
	}
	i := 0
	for i < len(str) {
		r, size := utf8.DecodeRuneInString(str[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			break
		}
		i += size
	}
	if i == 0 {
		return
	}
	name = str[:i]
	if brace {
		if i >= len(str) || str[i] != '}' {
			return
		}
		i++
	}
	num = 0
	for j := 0; j < len(name); j++ {
		if name[j] < '0' || '9' < name[j] || num >= 1e8 {
			num = -1
			break
		}
		num = num*10 + int(name[j]) - '0'
	}
	if name[0] == '0' && len(name) > 1 {
		num = -1
	}
	return name, num, str[i:], true
}

// expandAll writes s with every match in ms replaced by parts. The result's size is computed
// first (in one pass over the matches, already paid for), refused past replaceLimit, and charged
// one operation per KB before a byte is written.
func expandAll(c *expr.Call, re *regexp.Regexp, s string, ms [][]int, parts []expandPart) (any, error) {
	limit := replaceLimit(s)
	size := len(s)
	for _, m := range ms {
		size -= m[1] - m[0]
		for _, p := range parts {
			if p.group < 0 {
				size += len(p.lit)
			} else if m[2*p.group] >= 0 {
				size += m[2*p.group+1] - m[2*p.group]
			}
		}
		if size > limit {
			return nil, expr.Limitf("the result would be more than %d bytes, the limit is %d", limit, limit)
		}
	}
	if err := c.Charge(kilo(size)); err != nil {
		return nil, err
	}
	b := make([]byte, 0, size)
	last := 0
	for _, m := range ms {
		b = append(b, s[last:m[0]]...)
		for _, p := range parts {
			if p.group < 0 {
				b = append(b, p.lit...)
			} else if m[2*p.group] >= 0 {
				b = append(b, s[m[2*p.group]:m[2*p.group+1]]...)
			}
		}
		last = m[1]
	}
	b = append(b, s[last:]...)
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// replaceFunc writes s with every match in ms replaced by the text of w(match, groups…). Each
// call costs an operation before it is made, and the text written so far is charged per KB and
// refused past replaceLimit as it grows.
func replaceFunc(c *expr.Call, s string, ms [][]int, w *expr.Func) (any, error) {
	limit := replaceLimit(s)
	b := make([]byte, 0, len(s))
	last, size, paid := 0, len(s), 0
	for _, m := range ms {
		if err := c.Charge(1); err != nil {
			return nil, err
		}
		r, err := c.CallFunc(w, groupsOf(s, m)...)
		if err != nil {
			return nil, err
		}
		t, err := expr.TextOf(r, limit, c)
		if err != nil {
			return nil, err
		}
		if size += len(t) - (m[1] - m[0]); size > limit {
			return nil, expr.Limitf("the result would be more than %d bytes, the limit is %d", limit, limit)
		}
		// One operation per 512 bytes of the result as it grows, before writing them; the
		// buffer doubles, so all its copies add up to at most twice the result.
		grown := len(b) + (m[0] - last) + len(t)
		if k := grown/expr.WalkBytesPerOp - paid; k > 0 {
			if err := c.Charge(k); err != nil {
				return nil, err
			}
			paid += k
		}
		if grown > cap(b) {
			nb := make([]byte, len(b), max(2*cap(b), grown))
			copy(nb, b)
			b = nb
		}
		b = append(b, s[last:m[0]]...)
		b = append(b, t...)
		last = m[1]
	}
	b = append(b, s[last:]...)
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// groupsOf turns submatch indexes into [whole, group1, …], null for a group that did not take
// part.
func groupsOf(s string, m []int) []any {
	out := make([]any, len(m)/2)
	for i := range out {
		if m[2*i] < 0 {
			out[i] = nil
		} else {
			out[i] = s[m[2*i]:m[2*i+1]]
		}
	}
	return out
}

// fnMatch is match(s, pattern) → [whole, group1, …] of the first match, or null.
func fnMatch(c *expr.Call, args []any) (any, error) {
	s, re, _, err := textAndRegex(c, args)
	if err != nil {
		return nil, err
	}
	var m []int
	if err := scan(c, s, func() { m = re.FindStringSubmatchIndex(s) }); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, nil
	}
	return groupsOf(s, m), nil
}

// fnMatchAll is matchAll(s, pattern) → a list of [whole, group1, …], one per match.
func fnMatchAll(c *expr.Call, args []any) (any, error) {
	s, re, prog, err := textAndRegex(c, args)
	if err != nil {
		return nil, err
	}
	ms, err := findAll(c, re, prog, s)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = groupsOf(s, m)
	}
	return out, nil
}

// fnTest is test(s, pattern) → whether the regex matches anywhere in s.
func fnTest(c *expr.Call, args []any) (any, error) {
	s, re, _, err := textAndRegex(c, args)
	if err != nil {
		return nil, err
	}
	var ok bool
	if err := scan(c, s, func() { ok = re.MatchString(s) }); err != nil {
		return nil, err
	}
	return ok, nil
}

func fnAffix(f func(s, affix string) bool) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		a, err := argString(args, 1)
		if err != nil {
			return nil, err
		}
		return f(s, a), nil
	}
}

// fnPad is padStart(s, length, fill = " ") and padEnd: pads s to length characters by repeating
// fill (JavaScript's meaning).
func fnPad(start bool) expr.Builtin {
	return func(c *expr.Call, args []any) (any, error) {
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		n, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		fill := " "
		if len(args) > 2 && args[2] != nil {
			if fill, err = argString(args, 2); err != nil {
				return nil, err
			}
		}
		have := utf8.RuneCountInString(s)
		if n <= have || fill == "" {
			return s, nil
		}
		if n*utf8.UTFMax > MaxBuiltText {
			return nil, expr.Limitf("length %d would build more than %d bytes", n, MaxBuiltText)
		}
		if err := c.Charge(kilo(n)); err != nil {
			return nil, err
		}
		fr := []rune(fill)
		pad := make([]rune, 0, n-have)
		for len(pad) < n-have {
			pad = append(pad, fr[len(pad)%len(fr)])
		}
		if start {
			return string(pad) + s, nil
		}
		return s + string(pad), nil
	}
}

// fnRepeat is repeat(s, n) with 0 ≤ n ≤ MaxRepeat.
func fnRepeat(c *expr.Call, args []any) (any, error) {
	s, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	n, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	switch {
	case n < 0:
		return nil, fmt.Errorf("the count must be 0 or more, got %d", n)
	case n > MaxRepeat:
		return nil, expr.Limitf("count %d, the limit is %d", n, MaxRepeat)
	case len(s)*n > MaxBuiltText:
		return nil, expr.Limitf("the result would be %d bytes, the limit is %d", len(s)*n, MaxBuiltText)
	}
	if err := c.Charge(kilo(len(s) * n)); err != nil {
		return nil, err
	}
	return strings.Repeat(s, n), nil
}

// fnSubstring is substring(s, start, end?) with JavaScript's meaning: negative and NaN indexes
// are 0, and start > end swaps them.
func fnSubstring(c *expr.Call, args []any) (any, error) {
	s, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	r := []rune(s)
	clamp := func(i int) int { return max(0, min(i, len(r))) }
	a, err := argInt(args, 1)
	if err != nil {
		return nil, err
	}
	b, err := optInt(args, 2, len(r))
	if err != nil {
		return nil, err
	}
	a, b = clamp(a), clamp(b)
	if a > b {
		a, b = b, a
	}
	return string(r[a:b]), nil
}

// runeIndex is the code-point index of sub in s (the last one when last), or -1.
func runeIndex(s, sub string, last bool) int {
	var i int
	if last {
		i = strings.LastIndex(s, sub)
	} else {
		i = strings.Index(s, sub)
	}
	if i < 0 {
		return -1
	}
	return utf8.RuneCountInString(s[:i])
}

// textAndRegex reads the (text, pattern) arguments shared by replace, replaceAll, match,
// matchAll and test, and charges one scan of the text before any matching (docs/DECISIONS.md §2);
// prog is the pattern's program size. A builtin that searches more than once (findAll) charges
// what its searches read past that scan.
func textAndRegex(c *expr.Call, args []any) (string, *regexp.Regexp, int, error) {
	s, err := argString(args, 0)
	if err != nil {
		return "", nil, 0, err
	}
	re, prog, err := regexArg(c, args, 1)
	if err != nil {
		return "", nil, 0, err
	}
	if err := c.Charge(matchCost(s, prog)); err != nil {
		return "", nil, 0, err
	}
	workcount.Add(len(s) * prog / 256)
	return s, re, prog, nil
}
