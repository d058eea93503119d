package expr

import (
	"strconv"
	"strings"
)

// Canonical prints the expression's tree back as source in a canonical form: every operator
// application in parentheses, strings double-quoted, no comments. Parsing the canonical form
// gives the same tree again (the fuzz tests check this), so it is also a readable dump of how an
// expression was understood.
func (x *Expr) Canonical() string {
	var b strings.Builder
	printNode(&b, x.root)
	return b.String()
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
				b.WriteString(strconv.Quote(p.key))
			}
			b.WriteString(": ")
			printNode(b, p.val)
		}
		b.WriteByte('}')
	case *memberNode:
		printNode(b, n.x)
		if n.optional {
			b.WriteString("?.")
		} else {
			b.WriteByte('.')
		}
		b.WriteString(n.name)
	case *indexNode:
		printNode(b, n.x)
		if n.optional {
			b.WriteString("?.")
		}
		b.WriteByte('[')
		printNode(b, n.idx)
		b.WriteByte(']')
	case *callNode:
		if n.callee != nil {
			printNode(b, n.callee)
		} else {
			b.WriteString(n.name)
		}
		if n.optional {
			b.WriteString("?.")
		}
		printArgs(b, n.args)
	case *methodNode:
		printNode(b, n.recv)
		if n.optional {
			b.WriteString("?.")
		} else {
			b.WriteByte('.')
		}
		b.WriteString(n.name)
		printArgs(b, n.args)
	case *unaryNode:
		b.WriteString("(")
		b.WriteString(n.op)
		printNode(b, n.x)
		b.WriteString(")")
	case *binaryNode:
		b.WriteByte('(')
		printNode(b, n.x)
		b.WriteString(" " + n.op + " ")
		printNode(b, n.y)
		b.WriteByte(')')
	case *condNode:
		b.WriteByte('(')
		printNode(b, n.c)
		b.WriteString(" ? ")
		printNode(b, n.a)
		b.WriteString(" : ")
		printNode(b, n.b)
		b.WriteByte(')')
	case *arrowNode:
		b.WriteByte('(')
		b.WriteString(strings.Join(n.params, ", "))
		b.WriteString(") => ")
		printNode(b, n.body)
	case *tmplNode:
		b.WriteByte('`')
		for i, s := range n.strs {
			r := strings.NewReplacer("\\", "\\\\", "`", "\\`", "${", "\\${", "\n", "\\n", "\r", "\\r", "\t", "\\t")
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
