package expr

import (
	"fmt"
	"strings"

	"github.com/pkuinfo/harness/lang/diag"
)

// Parser limits (docs/DECISIONS.md §2).
const (
	// MaxSourceLen is the longest expression source accepted, in bytes.
	MaxSourceLen = 16 * 1024
	// MaxNesting is the deepest nesting of sub-expressions accepted.
	MaxNesting = 64
)

// bailout stops a parse after a syntax error that leaves nothing sensible to continue with.
type bailout struct{}

type parser struct {
	lex    lexer
	tok    token
	errs   ErrorList
	depth  int
	scopes [][]string // arrow parameters, innermost last
}

func newParser(src string, off int) *parser {
	p := &parser{}
	p.lex = lexer{src: src, line: 1, errs: &p.errs}
	p.lex.advance(off)
	return p
}

func (p *parser) next() { p.tok = p.lex.next() }

func (p *parser) errorf(pos diag.Pos, format string, args ...any) {
	p.errs.add(pos, format, args...)
}

// fail records an error and abandons the parse.
func (p *parser) fail(pos diag.Pos, format string, args ...any) {
	p.errs.add(pos, format, args...)
	panic(bailout{})
}

func (p *parser) is(punct string) bool { return p.tok.kind == tPunct && p.tok.text == punct }

func (p *parser) expect(punct, context string) diag.Pos {
	if !p.is(punct) {
		p.fail(p.tok.pos, "expected '%s' %s, found %s", punct, context, describeTok(p.tok))
	}
	pos := p.tok.pos
	p.next()
	return pos
}

func describeTok(t token) string {
	switch t.kind {
	case tEOF:
		return "end of the expression"
	case tString:
		return "a string"
	case tNumber:
		return "the number " + t.text
	case tIdent:
		return "'" + t.text + "'"
	case tBacktick:
		return "'`'"
	}
	return "'" + t.text + "'"
}

// parseExpr parses a whole expression source.
func parseExpr(src string) (root node, errs ErrorList) {
	if len(src) > MaxSourceLen {
		return nil, ErrorList{{Pos: diag.Pos{Line: 1, Col: 1}, Msg: fmt.Sprintf("expression is too long (%d bytes, the limit is %d)", len(src), MaxSourceLen)}}
	}
	p := newParser(src, 0)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			root, errs = nil, p.errs
		}
	}()
	p.next()
	if p.tok.kind == tEOF {
		p.fail(p.tok.pos, "empty expression")
	}
	root = p.parseAssign(true)
	switch {
	case p.is(";"):
		p.errorf(p.tok.pos, "';' is not allowed: an expression is one expression, not statements")
	case p.tok.kind != tEOF:
		p.errorf(p.tok.pos, "unexpected %s after the end of the expression", describeTok(p.tok))
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	compileFast(root)
	return root, nil
}

func (p *parser) enter() {
	p.depth++
	if p.depth > MaxNesting {
		p.fail(p.tok.pos, "expression nests too deeply (more than %d levels)", MaxNesting)
	}
}

// isArrowStart reports whether the tokens at the current one begin an arrow function:
// `x =>` or `(…) =>` with a parameter list of names.
func (p *parser) isArrowStart() bool {
	if p.tok.kind == tIdent {
		save, saveTok := p.lex, p.tok
		var scratch ErrorList
		p.lex.errs = &scratch
		t := p.lex.next()
		p.lex, p.tok = save, saveTok
		return t.kind == tPunct && t.text == "=>"
	}
	if !p.is("(") {
		return false
	}
	save, saveTok := p.lex, p.tok
	var scratch ErrorList
	p.lex.errs = &scratch
	defer func() { p.lex, p.tok = save, saveTok }()
	t := p.lex.next()
	for t.kind == tIdent {
		t = p.lex.next()
		if t.kind == tPunct && t.text == "," {
			t = p.lex.next()
			continue
		}
		break
	}
	if !(t.kind == tPunct && t.text == ")") {
		return false
	}
	t = p.lex.next()
	return t.kind == tPunct && t.text == "=>"
}

// arrowOnlyMsg refuses an arrow function where the language does not allow one (docs/DECISIONS.md §2).
const arrowOnlyMsg = "an arrow function can only be a call argument, as in rows.map(r => r.x), or the body of a function"

// parseAssign parses an AssignmentExpression: an arrow function (where allowed), or a
// conditional expression; assignment operators are parsed and reported as not allowed.
func (p *parser) parseAssign(arrowOK bool) node {
	p.enter()
	defer func() { p.depth-- }()
	if p.isArrowStart() {
		a := p.parseArrow()
		if !arrowOK {
			p.errorf(a.p, arrowOnlyMsg)
		}
		return a
	}
	n := p.parseConditional()
	if p.tok.kind == tPunct {
		switch p.tok.text {
		case "=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??=":
			p.errorf(p.tok.pos, "assignment ('%s') is not allowed: expressions cannot change values; bind a new name with let instead", p.tok.text)
			p.next()
			p.parseAssign(false)
		}
	}
	return n
}

func (p *parser) parseArrow() *arrowNode {
	a := &arrowNode{p: p.tok.pos}
	if p.tok.kind == tIdent {
		a.params = []string{p.tok.text}
		p.checkParam(p.tok)
		p.next()
	} else {
		p.next() // (
		for p.tok.kind == tIdent {
			p.checkParam(p.tok)
			for _, q := range a.params {
				if q == p.tok.text {
					p.errorf(p.tok.pos, "parameter '%s' appears twice", q)
				}
			}
			a.params = append(a.params, p.tok.text)
			p.next()
			if p.is(",") {
				p.next()
			}
		}
		p.expect(")", "after the parameters")
	}
	p.expect("=>", "in the arrow function")
	if p.is("{") {
		p.fail(p.tok.pos, "an arrow function's body is one expression, not a block; to return an object write x => ({ … })")
	}
	p.scopes = append(p.scopes, a.params)
	a.body = p.parseAssign(false)
	p.scopes = p.scopes[:len(p.scopes)-1]
	a.noCapture = !containsArrow(a.body)
	return a
}

func (p *parser) checkParam(t token) {
	if reservedWords[t.text] || t.text == "true" || t.text == "false" || t.text == "null" {
		p.errorf(t.pos, "'%s' cannot be a parameter name", t.text)
	}
}

func (p *parser) parseConditional() node {
	c := p.parseBinary(1)
	if !p.is("?") {
		return c
	}
	pos := p.tok.pos
	p.next()
	a := p.parseAssign(false)
	p.expect(":", "in the conditional expression a ? b : c")
	b := p.parseAssign(false)
	return &condNode{p: pos, c: c, a: a, b: b}
}

// binary operator precedence (JavaScript's); forbidden operators are parsed so they can be
// reported with a helpful message.
var binaryPrec = map[string]int{
	"??": 1, "||": 1,
	"&&": 2,
	"|":  3, "^": 4, "&": 5,
	"==": 6, "!=": 6, "===": 6, "!==": 6,
	"<": 7, ">": 7, "<=": 7, ">=": 7, "in": 7, "instanceof": 7,
	"<<": 8, ">>": 8, ">>>": 8,
	"+": 9, "-": 9,
	"*": 10, "/": 10, "%": 10,
	"**": 11,
}

func (p *parser) binaryOp() (string, int) {
	switch p.tok.kind {
	case tPunct:
		if prec, ok := binaryPrec[p.tok.text]; ok {
			return p.tok.text, prec
		}
	case tIdent:
		if p.tok.text == "in" || p.tok.text == "instanceof" {
			return p.tok.text, 7
		}
	}
	return "", 0
}

func (p *parser) parseBinary(minPrec int) node {
	x := p.parseUnary()
	for {
		op, prec := p.binaryOp()
		if prec < minPrec || prec == 0 {
			return x
		}
		pos := p.tok.pos
		switch op {
		case "|", "^", "&", "<<", ">>", ">>>":
			p.errorf(pos, "bitwise operator '%s' is not allowed", op)
		case "in":
			p.errorf(pos, "'in' is not allowed; use has(obj, key) or list.includes(x)")
		case "instanceof":
			p.errorf(pos, "'instanceof' is not allowed; use typeOf(x)")
		case "**":
			p.errorf(pos, "'**' is not allowed")
		}
		p.next()
		var y node
		if op == "**" {
			y = p.parseBinary(prec) // right-associative
		} else {
			y = p.parseBinary(prec + 1)
		}
		if op == "??" || op == "||" {
			// JavaScript refuses a ?? b || c without parentheses; so do we.
			if b, ok := x.(*binaryNode); ok && !b.paren && (b.op == "??") != (op == "??") && (b.op == "??" || b.op == "||" || b.op == "&&") {
				p.errorf(pos, "cannot mix '??' with '||' or '&&' without parentheses")
			}
			if b, ok := y.(*binaryNode); ok && !b.paren && op == "??" && (b.op == "||" || b.op == "&&") {
				p.errorf(pos, "cannot mix '??' with '||' or '&&' without parentheses")
			}
		}
		x = &binaryNode{p: pos, op: op, opc: opcodes[op], x: x, y: y}
	}
}

// reservedWords are JavaScript keywords that are not part of the language; using one as a name
// is an error with a message naming it.
var reservedWords = map[string]bool{
	"new": true, "this": true, "function": true, "class": true, "delete": true, "typeof": true,
	"instanceof": true, "in": true, "void": true, "var": true, "let": true, "const": true,
	"return": true, "if": true, "else": true, "for": true, "while": true, "do": true,
	"switch": true, "case": true, "break": true, "continue": true, "throw": true, "try": true,
	"catch": true, "finally": true, "yield": true, "await": true, "async": true, "import": true,
	"export": true, "super": true, "with": true, "debugger": true, "default": true,
	"extends": true,
}

func (p *parser) parseUnary() node {
	t := p.tok
	switch {
	case t.kind == tPunct:
		switch t.text {
		case "!", "-", "+":
			p.next()
			p.enter()
			x := p.parseUnary()
			p.depth--
			if lit, ok := x.(*litNode); ok && t.text == "-" {
				if f, ok := lit.v.(float64); ok && lit.p.Offset > t.pos.Offset {
					return &litNode{p: t.pos, v: -f} // fold -3 so it prints and costs as one literal
				}
			}
			return &unaryNode{p: t.pos, op: t.text, x: x}
		case "++", "--":
			p.errorf(t.pos, "'%s' is not allowed: expressions cannot change values", t.text)
			p.next()
			return p.parseUnary()
		case "~":
			p.errorf(t.pos, "bitwise operator '~' is not allowed")
			p.next()
			return p.parseUnary()
		}
	case t.kind == tIdent:
		switch t.text {
		case "typeof":
			p.errorf(t.pos, "'typeof' is not allowed; use typeOf(x)")
			p.next()
			return p.parseUnary()
		case "delete":
			p.errorf(t.pos, "'delete' is not allowed; use omit(obj, ['key'])")
			p.next()
			return p.parseUnary()
		case "void":
			p.errorf(t.pos, "'void' is not allowed")
			p.next()
			return p.parseUnary()
		case "await":
			p.errorf(t.pos, "'await' is not allowed")
			p.next()
			return p.parseUnary()
		}
	}
	x := p.parsePostfix()
	if p.is("++") || p.is("--") {
		p.errorf(p.tok.pos, "'%s' is not allowed: expressions cannot change values", p.tok.text)
		p.next()
	}
	return x
}

func (p *parser) parsePostfix() node {
	x := p.parsePrimary()
	for {
		switch {
		case p.is("."), p.is("?."):
			optional := p.is("?.")
			p.next()
			if optional && p.is("(") {
				x = p.finishCall(x, true)
				continue
			}
			if optional && p.is("[") {
				pos := p.tok.pos
				p.next()
				idx := p.parseAssign(false)
				p.expect("]", "to close the index")
				x = &indexNode{p: pos, x: x, idx: idx, optional: true}
				continue
			}
			if p.tok.kind != tIdent {
				if p.tok.kind == tInvalid && p.tok.text == "#" {
					p.fail(p.tok.pos, "private names ('#') are not allowed")
				}
				p.fail(p.tok.pos, "expected a property name after '%s', found %s", map[bool]string{true: "?.", false: "."}[optional], describeTok(p.tok))
			}
			name := p.tok
			p.next()
			if p.is("(") {
				x = p.finishMethod(x, name, optional)
				continue
			}
			x = &memberNode{p: name.pos, x: x, name: name.text, optional: optional}
		case p.is("["):
			pos := p.tok.pos
			p.next()
			idx := p.parseAssign(false)
			p.expect("]", "to close the index")
			x = &indexNode{p: pos, x: x, idx: idx}
		case p.is("("):
			x = p.finishCall(x, false)
		case p.tok.kind == tBacktick:
			p.fail(p.tok.pos, "tagged templates are not allowed")
		default:
			return x
		}
	}
}

func (p *parser) parseArgs() []node {
	p.expect("(", "to start the arguments")
	var args []node
	for !p.is(")") {
		if p.is("...") {
			p.fail(p.tok.pos, "spread ('...') is only allowed inside list and object literals")
		}
		args = append(args, p.parseAssign(true))
		if p.is(",") {
			p.next()
			continue
		}
		if !p.is(")") {
			p.fail(p.tok.pos, "expected ',' or ')' in the arguments, found %s", describeTok(p.tok))
		}
	}
	p.next()
	return args
}

func (p *parser) finishCall(callee node, optional bool) node {
	c := &callNode{p: callee.Pos(), optional: optional}
	if id, ok := callee.(*identNode); ok && id.idx < 0 && !optional {
		c.name = id.name
	} else {
		c.callee = callee
	}
	c.args = p.parseArgs()
	return c
}

func (p *parser) finishMethod(recv node, name token, optional bool) node {
	m := &methodNode{p: name.pos, recv: recv, name: name.text, optional: optional}
	m.args = p.parseArgs()
	return m
}

func (p *parser) resolve(t token) *identNode {
	for i := len(p.scopes) - 1; i >= 0; i-- {
		for j, name := range p.scopes[i] {
			if name == t.text {
				return &identNode{p: t.pos, name: t.text, up: len(p.scopes) - 1 - i, idx: j}
			}
		}
	}
	return &identNode{p: t.pos, name: t.text, idx: -1}
}

func (p *parser) parsePrimary() node {
	t := p.tok
	switch t.kind {
	case tNumber:
		p.next()
		return &litNode{p: t.pos, v: t.num}
	case tString:
		p.next()
		return &litNode{p: t.pos, v: t.text}
	case tBacktick:
		return p.parseTemplateLiteral()
	case tIdent:
		switch t.text {
		case "true":
			p.next()
			return &litNode{p: t.pos, v: true}
		case "false":
			p.next()
			return &litNode{p: t.pos, v: false}
		case "null":
			p.next()
			return &litNode{p: t.pos, v: nil}
		case "this":
			p.errorf(t.pos, "'this' is not allowed")
			p.next()
			return &litNode{p: t.pos, v: nil}
		case "new":
			p.errorf(t.pos, "'new' is not allowed")
			p.next()
			return p.parsePostfix()
		case "function", "class":
			p.fail(t.pos, "'%s' is not allowed; write an arrow function as a call argument, e.g. rows.map(r => r.name)", t.text)
		}
		if reservedWords[t.text] {
			p.fail(t.pos, "'%s' is not allowed: an expression is one expression, not JavaScript statements", t.text)
		}
		p.next()
		return p.resolve(t)
	case tPunct:
		switch t.text {
		case "(":
			p.next()
			if p.is(")") {
				p.fail(p.tok.pos, "empty parentheses")
			}
			x := p.parseAssign(false)
			if p.is(",") {
				p.fail(p.tok.pos, "the comma operator is not allowed")
			}
			p.expect(")", "to close '('")
			if b, ok := x.(*binaryNode); ok {
				b.paren = true
			}
			return x
		case "[":
			return p.parseList()
		case "{":
			return p.parseObject()
		case "/", "/=":
			p.fail(t.pos, "regex literals are not allowed; write the pattern as a string, e.g. '\\d+' or '(?i)abc'")
		case ";":
			p.fail(t.pos, "';' is not allowed: an expression is one expression, not statements")
		case "...":
			p.fail(t.pos, "spread ('...') is only allowed inside list and object literals")
		}
	case tInvalid:
		p.fail(t.pos, "unexpected character %q", t.text)
	}
	p.fail(t.pos, "unexpected %s", describeTok(t))
	return nil
}

func (p *parser) parseList() node {
	l := &listNode{p: p.tok.pos}
	p.next()
	for !p.is("]") {
		if p.is(",") {
			p.fail(p.tok.pos, "empty list element (holes are not allowed)")
		}
		spread := false
		if p.is("...") {
			spread = true
			p.next()
		}
		e := p.parseAssign(false)
		if spread && l.spread == nil {
			l.spread = make([]bool, len(l.elems), len(l.elems)+1)
		}
		l.elems = append(l.elems, e)
		if l.spread != nil {
			l.spread = append(l.spread, spread)
		}
		if p.is(",") {
			p.next()
			continue
		}
		if !p.is("]") {
			p.fail(p.tok.pos, "expected ',' or ']' in the list, found %s", describeTok(p.tok))
		}
	}
	p.next()
	return l
}

func (p *parser) parseObject() node {
	o := &objectNode{p: p.tok.pos}
	p.next()
	for !p.is("}") {
		prop := objProp{p: p.tok.pos}
		switch {
		case p.is("..."):
			p.next()
			prop.spread = true
			prop.val = p.parseAssign(false)
		case p.is("["):
			p.next()
			prop.keyNode = p.parseAssign(false)
			p.expect("]", "to close the computed key")
			p.expect(":", "after the key")
			prop.val = p.parseAssign(false)
		case p.tok.kind == tIdent || p.tok.kind == tString || p.tok.kind == tNumber:
			k := p.tok
			p.next()
			prop.key = k.text
			if k.kind == tNumber {
				prop.key = FormatNumber(k.num)
			}
			switch {
			case p.is(":"):
				p.next()
				prop.val = p.parseAssign(false)
			case k.kind == tIdent && (p.is(",") || p.is("}")):
				if reservedWords[k.text] || k.text == "true" || k.text == "false" || k.text == "null" {
					p.fail(k.pos, "'%s' cannot be used as a shorthand property", k.text)
				}
				prop.val = p.resolve(k) // { room } is { room: room }
			case p.is("("):
				p.fail(p.tok.pos, "methods are not allowed in object literals")
			default:
				p.fail(p.tok.pos, "expected ':' after the key '%s', found %s", k.text, describeTok(p.tok))
			}
		default:
			p.fail(p.tok.pos, "expected a property name, found %s", describeTok(p.tok))
		}
		o.props = append(o.props, prop)
		if p.is(",") {
			p.next()
			continue
		}
		if !p.is("}") {
			p.fail(p.tok.pos, "expected ',' or '}' in the object, found %s", describeTok(p.tok))
		}
	}
	p.next()
	return o
}

// parseTemplateLiteral scans `text ${expr} text` after its opening backtick (the current token).
func (p *parser) parseTemplateLiteral() node {
	t := &tmplNode{p: p.tok.pos}
	src := p.lex.src
	i := p.tok.end
	var b strings.Builder
	for {
		if i >= len(src) {
			p.fail(t.p, "unterminated template literal: missing closing '`'")
		}
		c := src[i]
		switch {
		case c == '`':
			t.strs = append(t.strs, b.String())
			p.lex.advance(i + 1)
			p.next()
			return t
		case c == '\\':
			n, out := unescape(src, i, '`')
			b.Write(out)
			i = n
		case c == '$' && i+1 < len(src) && src[i+1] == '{':
			t.strs = append(t.strs, b.String())
			b.Reset()
			p.lex.advance(i + 2)
			p.next()
			if p.is("}") {
				p.fail(p.tok.pos, "empty ${} in template literal")
			}
			t.exprs = append(t.exprs, p.parseAssign(false))
			if !p.is("}") {
				p.fail(p.tok.pos, "expected '}' to close '${', found %s", describeTok(p.tok))
			}
			i = p.tok.end
		default:
			b.WriteByte(c)
			i++
		}
	}
}
