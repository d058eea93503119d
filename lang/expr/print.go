package expr

import (
	"strconv"
	"strings"
)

// Canonical prints the expression's tree back as source in a canonical form: only the
// parentheses the grammar needs, strings double-quoted, single spaces around binary operators,
// no comments. Parsing the canonical form gives the same tree again (FuzzParse checks this), so
// it is also a readable dump of how an expression was understood.
func (x *Expr) Canonical() string {
	var b strings.Builder
	printNode(&b, x.root)
	return b.String()
}

// Precedence levels of the printer: binary operators use binaryPrec (1–11).
const (
	precArrow   = -1
	precCond    = 0
	precUnary   = 12
	precPostfix = 13
)

func precOf(n node) int {
	switch n := n.(type) {
	case *binaryNode:
		return binaryPrec[n.op]
	case *condNode:
		return precCond
	case *arrowNode:
		return precArrow
	case *unaryNode:
		return precUnary
	case *litNode:
		if f, ok := n.v.(float64); ok && (f < 0 || f == 0 && 1/f < 0) {
			return precUnary // printed as (-3)
		}
	}
	return precPostfix
}

// printOperand prints n, in parentheses when its precedence is below min.
func printOperand(b *strings.Builder, n node, min int) {
	if precOf(n) < min {
		b.WriteByte('(')
		printNode(b, n)
		b.WriteByte(')')
		return
	}
	printNode(b, n)
}

// printReceiver prints the left side of . [] and (): a number literal needs parentheses too, so
// that 1 .x does not read as the number "1.".
func printReceiver(b *strings.Builder, n node) {
	if l, ok := n.(*litNode); ok {
		if _, isNum := l.v.(float64); isNum {
			if precOf(n) == precPostfix { // a negative number prints with its own parentheses
				b.WriteByte('(')
			}
			printNode(b, n)
			if precOf(n) == precPostfix {
				b.WriteByte(')')
			}
			return
		}
	}
	printOperand(b, n, precPostfix)
}

func mixesNullish(parent string, child node) bool {
	c, ok := child.(*binaryNode)
	if !ok {
		return false
	}
	if parent == "??" {
		return c.op == "||" || c.op == "&&"
	}
	return (parent == "||" || parent == "&&") && c.op == "??"
}

func printNode(b *strings.Builder, n node) {
	switch n := n.(type) {
	case *litNode:
		printLit(b, n.v)
	case *identNode:
		b.WriteString(n.name)
	case *listNode:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if n.spread != nil && n.spread[i] {
				b.WriteString("...")
			}
			printNode(b, e)
		}
		b.WriteByte(']')
	case *objectNode:
		b.WriteByte('{')
		for i, p := range n.props {
			if i > 0 {
				b.WriteString(", ")
			}
			switch {
			case p.spread:
				b.WriteString("...")
				printNode(b, p.val)
				continue
			case p.keyNode != nil:
				b.WriteByte('[')
				printNode(b, p.keyNode)
				b.WriteByte(']')
			default:
				printLit(b, p.key)
			}
			b.WriteString(": ")
			printNode(b, p.val)
		}
		b.WriteByte('}')
	case *memberNode:
		printReceiver(b, n.x)
		if n.optional {
			b.WriteString("?.")
		} else {
			b.WriteByte('.')
		}
		b.WriteString(n.name)
	case *indexNode:
		printReceiver(b, n.x)
		if n.optional {
			b.WriteString("?.")
		}
		b.WriteByte('[')
		printNode(b, n.idx)
		b.WriteByte(']')
	case *callNode:
		if n.callee != nil {
			printReceiver(b, n.callee)
		} else {
			b.WriteString(n.name)
		}
		if n.optional {
			b.WriteString("?.")
		}
		printArgs(b, n.args)
	case *methodNode:
		printReceiver(b, n.recv)
		if n.optional {
			b.WriteString("?.")
		} else {
			b.WriteByte('.')
		}
		b.WriteString(n.name)
		printArgs(b, n.args)
	case *unaryNode:
		b.WriteString(n.op)
		if u, ok := n.x.(*unaryNode); ok && n.op != "!" && u.op != "!" {
			b.WriteByte(' ') // - -x, never --x
		}
		printOperand(b, n.x, precUnary)
	case *binaryNode:
		p := binaryPrec[n.op]
		if mixesNullish(n.op, n.x) {
			printOperand(b, n.x, 99)
		} else {
			printOperand(b, n.x, p)
		}
		b.WriteString(" " + n.op + " ")
		if mixesNullish(n.op, n.y) {
			printOperand(b, n.y, 99)
		} else {
			printOperand(b, n.y, p+1)
		}
	case *condNode:
		printOperand(b, n.c, 1)
		b.WriteString(" ? ")
		printOperand(b, n.a, precCond)
		b.WriteString(" : ")
		printOperand(b, n.b, precCond)
	case *arrowNode:
		b.WriteByte('(')
		b.WriteString(strings.Join(n.params, ", "))
		b.WriteString(") => ")
		// A body whose text starts with '{' would read as a block: an object literal, also one
		// at the left of an operator or a call (x => ({…}) % 2), goes in parentheses.
		var body strings.Builder
		printOperand(&body, n.body, precCond)
		if strings.HasPrefix(body.String(), "{") {
			b.WriteByte('(')
			b.WriteString(body.String())
			b.WriteByte(')')
		} else {
			b.WriteString(body.String())
		}
	case *tmplNode:
		b.WriteByte('`')
		r := strings.NewReplacer("\\", "\\\\", "`", "\\`", "${", "\\${", "\n", "\\n", "\r", "\\r", "\t", "\\t")
		for i, s := range n.strs {
			b.WriteString(r.Replace(s))
			if i < len(n.exprs) {
				b.WriteString("${")
				printNode(b, n.exprs[i])
				b.WriteString("}")
			}
		}
		b.WriteByte('`')
	}
}

func printArgs(b *strings.Builder, args []node) {
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		printNode(b, a)
	}
	b.WriteByte(')')
}

func printLit(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		s := FormatNumber(x)
		if x < 0 || x == 0 && 1/x < 0 {
			s = "(-" + FormatNumber(-x) + ")"
		}
		switch s {
		case "Infinity":
			s = "1e999"
		case "NaN":
			s = "(0 / 0)"
		}
		b.WriteString(s)
	case string:
		b.WriteByte('"')
		for _, r := range x {
			switch r {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if r < 0x20 || r == 0x2028 || r == 0x2029 || r == 0xFEFF {
					b.WriteString(`\u{` + strconv.FormatInt(int64(r), 16) + `}`)
				} else {
					b.WriteRune(r)
				}
			}
		}
		b.WriteByte('"')
	}
}
