package stdlib

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
)

// Size limits of string builtins (SPEC-DECISIONS §5).
const (
	// MaxRepeat is the largest count repeat accepts.
	MaxRepeat = 1000
	// MaxBuiltText is the longest string repeat, padStart and padEnd may build, in bytes (the
	// size of a whole run's result).
	MaxBuiltText = 1 << 20
)

// registerStrings adds the string functions of SPEC-DECISIONS §5. Patterns are RE2 strings
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
	s, err := expr.ToText(args[0])
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

func regexArg(c *expr.Call, args []any, i int) (*regexp.Regexp, error) {
	p, err := argString(args, i)
	if err != nil {
		return nil, err
	}
	re, err := c.Regexp(p)
	if err != nil {
		return nil, err
	}
	return re, nil
}

// matchCost is what matching re over s costs: one operation per KB of text, times the size of
// the pattern in 16-byte units, since RE2's time is linear in both.
func matchCost(s string, re *regexp.Regexp) int {
	return kilo(len(s)) * (1 + len(re.String())/16)
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
	s, re, err := textAndRegex(c, args)
	if err != nil {
		return nil, err
	}
	switch w := args[2].(type) {
	case string:
		return re.ReplaceAllString(s, jsReplacement(w, re.NumSubexp())), nil
	case *expr.Func:
		var firstErr error
		out := replaceAllSubmatchFunc(re, s, func(groups []any) string {
			if firstErr != nil {
				return ""
			}
			if err := c.Charge(1); err != nil {
				firstErr = err
				return ""
			}
			r, err := c.CallFunc(w, groups...)
			if err != nil {
				firstErr = err
				return ""
			}
			t, err := expr.ToText(r)
			if err != nil {
				firstErr = err
			}
			return t
		})
		if firstErr != nil {
			return nil, firstErr
		}
		return out, nil
	}
	return nil, fmt.Errorf("argument 3 must be a string or a function, got %s", expr.Describe(args[2]))
}

func replaceAllSubmatchFunc(re *regexp.Regexp, s string, f func([]any) string) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		b.WriteString(f(groupsOf(s, m)))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
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
	s, re, err := textAndRegex(c, args)
	if err != nil {
		return nil, err
	}
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return nil, nil
	}
	return groupsOf(s, m), nil
}

// fnMatchAll is matchAll(s, pattern) → a list of [whole, group1, …], one per match.
func fnMatchAll(c *expr.Call, args []any) (any, error) {
	s, re, err := textAndRegex(c, args)
	if err != nil {
		return nil, err
	}
	ms := re.FindAllStringSubmatchIndex(s, -1)
	if err := c.Charge(len(ms)); err != nil {
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
	s, re, err := textAndRegex(c, args)
	if err != nil {
		return nil, err
	}
	return re.MatchString(s), nil
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
// matchAll and test, and charges the match's cost before any matching (SPEC-DECISIONS §2).
func textAndRegex(c *expr.Call, args []any) (string, *regexp.Regexp, error) {
	s, err := argString(args, 0)
	if err != nil {
		return "", nil, err
	}
	re, err := regexArg(c, args, 1)
	if err != nil {
		return "", nil, err
	}
	if err := c.Charge(matchCost(s, re)); err != nil {
		return "", nil, err
	}
	return s, re, nil
}
