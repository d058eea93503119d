package expr

import (
	"errors"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/diag"
)

// Check reports, with positions, what the parser lets through but the language refuses
// (docs/DECISIONS.md §2 and §4): names that are neither in scope (inScope reports the names the
// step may use — input, constants, now, earlier lets…) nor a function; calls to unknown
// functions and methods; builtins called with the wrong number of arguments; `eval`; regex
// literals passed to regex builtins that RE2 refuses. A nil inScope means no variables are in
// scope. The list is sorted and empty when all is well.
func (x *Expr) Check(inScope func(name string) bool) ErrorList {
	if inScope == nil {
		inScope = func(string) bool { return false }
	}
	c := checker{x: x, inScope: inScope}
	if a, ok := x.root.(*arrowNode); ok && !x.fn {
		// An expression field's value is never a function: only `functions:` bodies are arrows.
		c.errs.add(a.p, arrowOnlyMsg)
	}
	walk(x.root, c.visit)
	c.errs.Sort()
	return c.errs
}

type checker struct {
	x       *Expr
	inScope func(string) bool
	errs    ErrorList
}

func (c *checker) funcVisible(name string) bool {
	return c.x.env.lookupFunc(name, c.x.limit) != nil || c.x.env.lookupBuiltin(name) != nil
}

// laterFunc reports whether name is a user function defined after this one (which it may not
// call).
func (c *checker) laterFunc(name string) bool {
	return c.x.limit != 1<<63-1 && c.x.env.lookupFunc(name, 1<<63-1) != nil
}

func (c *checker) visit(n node) bool {
	switch n := n.(type) {
	case *identNode:
		if n.idx >= 0 {
			return true
		}
		switch {
		case n.name == "eval":
			c.errs.add(n.p, "'eval' is not allowed")
		case c.inScope(n.name) || c.funcVisible(n.name):
		case n.name == "undefined":
			c.errs.add(n.p, "unknown name 'undefined' (there is no undefined; use null)")
		case c.laterFunc(n.name):
			c.errs.add(n.p, "function '%s' is defined later; a function may only use functions defined before it", n.name)
		case globalHints[n.name] != "":
			c.errs.add(n.p, "unknown name '%s' (%s)", n.name, globalHints[n.name])
		default:
			c.errs.add(n.p, "unknown name '%s'", n.name)
		}
	case *callNode:
		if n.callee != nil {
			return true
		}
		u := c.x.env.lookupFunc(n.name, c.x.limit)
		b := c.x.env.lookupBuiltin(n.name)
		switch {
		case n.name == "eval":
			c.errs.add(n.p, "'eval' is not allowed")
		case u != nil:
		case b != nil:
			c.checkBuiltin(b, n.p, n.args, 0)
		case c.laterFunc(n.name):
			c.errs.add(n.p, "function '%s' is defined later; a function may only call functions defined before it", n.name)
		case c.inScope(n.name):
		default:
			c.errs.add(n.p, "unknown function '%s'", n.name)
		}
	case *methodNode:
		if id, ok := n.recv.(*identNode); ok && id.idx < 0 && !c.inScope(id.name) && !c.funcVisible(id.name) {
			return true // Math.max(…): the unknown receiver is the error worth reporting
		}
		b := c.x.env.lookupBuiltin(n.name)
		switch {
		case b == nil && methodHints[n.name] != "":
			c.errs.add(n.p, "unknown method '%s' (%s)", n.name, methodHints[n.name])
		case b == nil:
			c.errs.add(n.p, "unknown method '%s'", n.name)
		case !b.method:
			c.errs.add(n.p, "'%s' is not a method; call it as %s(x, …)", n.name, n.name)
		default:
			c.checkBuiltin(b, n.p, n.args, 1)
		}
	}
	return true
}

// checkBuiltin checks the argument count and literal regex patterns of a call; shift is 1 for a
// method call, whose receiver is argument 0.
func (c *checker) checkBuiltin(b *builtin, p diag.Pos, args []node, shift int) {
	if n := len(args) + shift; n < b.minArgs || b.maxArgs >= 0 && n > b.maxArgs {
		c.errs.add(p, "%s: %s", b.name, arityText(b, n))
	}
	for i, a := range args {
		if b.regexArgs&(1<<uint(i+shift)) == 0 {
			continue
		}
		lit, ok := a.(*litNode)
		if !ok {
			continue
		}
		s, ok := lit.v.(string)
		if !ok {
			continue
		}
		if _, err := c.x.env.Regexp(s); err != nil {
			p := lit.p
			var re *RegexError
			if errors.As(err, &re) && re.Offset >= 0 {
				p = c.patternPos(lit.p, re.Offset)
			}
			c.errs.add(p, "%s: %v", b.name, err)
		}
	}
}

// patternPos maps byte offset off of a string literal's value to its position in the source,
// stepping over the escapes between.
func (c *checker) patternPos(lit diag.Pos, off int) diag.Pos {
	src := c.x.full
	if src == "" {
		src = c.x.src
	}
	if lit.Offset >= len(src) || (src[lit.Offset] != '\'' && src[lit.Offset] != '"') {
		return lit
	}
	quote := src[lit.Offset]
	p := lit
	i := lit.Offset + 1
	p.Offset, p.Col = i, p.Col+1
	for decoded := 0; decoded < off && i < len(src) && src[i] != quote; {
		if src[i] == '\\' {
			next, out := unescape(src, i, quote)
			decoded += len(out)
			p.Col += utf8.RuneCountInString(src[i:next])
			i = next
			continue
		}
		_, size := utf8.DecodeRuneInString(src[i:])
		decoded += size
		p.Col++
		i += size
	}
	p.Offset = i
	return p
}

// FreeNames returns the global names x reads (not arrow parameters, and not the names of called
// functions), in order of first use, without duplicates. The plugin validator uses it to say
// which earlier step a name needs.
func (x *Expr) FreeNames() []string {
	var out []string
	seen := map[string]bool{}
	walk(x.root, func(n node) bool {
		if id, ok := n.(*identNode); ok && id.idx < 0 && !seen[id.name] {
			seen[id.name] = true
			out = append(out, id.name)
		}
		return true
	})
	return out
}

// String returns the expression's source.
func (x *Expr) String() string { return x.src }

// globalHints say what to write instead of a JavaScript global, which the language does not
// have.
var globalHints = map[string]string{
	"Math":               "use round, floor, ceil, abs, min, max or clamp",
	"Object":             "use keys, values, entries, fromEntries, merge, pick or omit",
	"JSON":               "use json(text) and toJson(value)",
	"Number":             "use num(x)",
	"parseInt":           "use int(x)",
	"parseFloat":         "use num(x)",
	"String":             "use str(x)",
	"Array":              "use isList(x) or range(n)",
	"Date":               "use date(x), formatDate(ms) and now",
	"isNaN":              "use num(x) ?? fallback",
	"console":            "expressions cannot print; return the value or put it in a check's error",
	"window":             "there are no browser globals",
	"document":           "use html(text) and select(node, css)",
	"globalThis":         "there are no globals",
	"encodeURIComponent": "use encode(s)",
	"decodeURIComponent": "use decode(s)",
}

// methodHints say what to call instead of a JavaScript method the library does not have.
var methodHints = map[string]string{
	"toString":       "use str(x)",
	"toFixed":        "use fixed(x, digits)",
	"push":           "lists never change; use concat(list, [x]) or [...list, x]",
	"pop":            "lists never change; use slice(list, 0, -1) and at(list, -1)",
	"shift":          "lists never change; use slice(list, 1) and at(list, 0)",
	"unshift":        "lists never change; use [x, ...list]",
	"splice":         "lists never change; use slice and concat",
	"forEach":        "use map",
	"substr":         "use slice(s, start, end) or substring",
	"charAt":         "use at(s, i) or s[i]",
	"trimLeft":       "use trimStart",
	"trimRight":      "use trimEnd",
	"toLocaleString": "use fixed(x, digits) or formatDate(ms)",
	"findLast":       "use reverse(list).find(f)",
	"hasOwnProperty": "use has(obj, key)",
	"localeCompare":  "use sortBy(list, key) or sort(list), which order strings by code point",
	"toSorted":       "sort never changes the list: use sort(list, cmp?)",
	"toReversed":     "reverse never changes the list: use reverse(list)",
	"toJSON":         "use toJson(x)",
}
