package expr

import (
	"sync/atomic"

	"github.com/pkuinfo/harness/lang/diag"
)

// node is an expression tree node. Every node knows its position (the first character of its
// operator or literal) and evaluates itself; the evaluator charges one operation per node.
type node interface {
	Pos() diag.Pos
	eval(st *state) (any, error)
}

// chainNode is a node that can be part of an optional chain (a?.b.c): evalChain reports whether
// an optional link met null, so that the whole chain is null (docs/DECISIONS.md §10).
type chainNode interface {
	node
	evalChain(st *state) (v any, short bool, err error)
}

type (
	litNode struct {
		p diag.Pos
		v any
	}
	// identNode is a name. up/idx locate an arrow parameter (up frames out, slot idx); idx < 0
	// means a global name: a variable, a user function or a builtin.
	identNode struct {
		p    diag.Pos
		name string
		up   int
		idx  int
	}
	listNode struct {
		p      diag.Pos
		elems  []node
		spread []bool // nil when no element is spread
	}
	objProp struct {
		p       diag.Pos
		key     string
		keyNode node // computed key [expr]
		val     node
		spread  bool
	}
	objectNode struct {
		p     diag.Pos
		props []objProp
	}
	memberNode struct {
		p        diag.Pos // of the property name
		x        node
		name     string
		optional bool // x?.name
	}
	indexNode struct {
		p        diag.Pos // of '['
		x, idx   node
		optional bool // x?.[idx]
	}
	// callNode calls a global function by name (user function, builtin, or a function value
	// held by a variable) or the function value of an arbitrary callee.
	callNode struct {
		p        diag.Pos // of the callee
		name     string
		callee   node // nil when name is a global function name
		args     []node
		optional bool // f?.(…)
		res      atomic.Pointer[resolution]
	}
	// methodNode is recv.name(args): the builtin name(recv, args…) (docs/DECISIONS.md §5).
	methodNode struct {
		p        diag.Pos // of the method name
		recv     node
		name     string
		args     []node
		optional bool // recv?.name(…)
		res      atomic.Pointer[resolution]
	}
	unaryNode struct {
		p  diag.Pos
		op string
		x  node
	}
	binaryNode struct {
		p     diag.Pos // of the operator
		op    string
		opc   opcode
		x, y  node
		paren bool      // written in parentheses (matters only for mixing ?? with || and &&)
		fast  *fastCode // compiled form when this is the root of a numeric subtree (fast.go)
	}
	condNode struct {
		p       diag.Pos
		c, a, b node
	}
	arrowNode struct {
		p         diag.Pos
		params    []string
		body      node
		noCapture bool // the body holds no arrow (see Func.noCapture)
	}
	tmplNode struct {
		p     diag.Pos
		strs  []string // len(strs) == len(exprs)+1
		exprs []node
	}
)

func (n *litNode) Pos() diag.Pos    { return n.p }
func (n *identNode) Pos() diag.Pos  { return n.p }
func (n *listNode) Pos() diag.Pos   { return n.p }
func (n *objectNode) Pos() diag.Pos { return n.p }
func (n *memberNode) Pos() diag.Pos { return n.p }
func (n *indexNode) Pos() diag.Pos  { return n.p }
func (n *callNode) Pos() diag.Pos   { return n.p }
func (n *methodNode) Pos() diag.Pos { return n.p }
func (n *unaryNode) Pos() diag.Pos  { return n.p }
func (n *binaryNode) Pos() diag.Pos { return n.p }
func (n *condNode) Pos() diag.Pos   { return n.p }
func (n *arrowNode) Pos() diag.Pos  { return n.p }
func (n *tmplNode) Pos() diag.Pos   { return n.p }

// walk calls f for n and every node below it, parents first; f returns false to skip children.
func walk(n node, f func(node) bool) {
	if n == nil || !f(n) {
		return
	}
	switch x := n.(type) {
	case *listNode:
		for _, e := range x.elems {
			walk(e, f)
		}
	case *objectNode:
		for _, p := range x.props {
			walk(p.keyNode, f)
			walk(p.val, f)
		}
	case *memberNode:
		walk(x.x, f)
	case *indexNode:
		walk(x.x, f)
		walk(x.idx, f)
	case *callNode:
		walk(x.callee, f)
		for _, a := range x.args {
			walk(a, f)
		}
	case *methodNode:
		walk(x.recv, f)
		for _, a := range x.args {
			walk(a, f)
		}
	case *unaryNode:
		walk(x.x, f)
	case *binaryNode:
		walk(x.x, f)
		walk(x.y, f)
	case *condNode:
		walk(x.c, f)
		walk(x.a, f)
		walk(x.b, f)
	case *arrowNode:
		walk(x.body, f)
	case *tmplNode:
		for _, e := range x.exprs {
			walk(e, f)
		}
	}
}
