package expr

import (
	"context"
	"math"
)

// Fast path for branch-free numeric subtrees.
//
// A subtree made only of the operators + - * / % (and unary - +), number literals and names,
// optionally topped by one of < <= > >=, evaluates every one of its nodes whenever it is
// evaluated: it has no && || ?? ?: ?. and no call. Its cost (one operation per node,
// docs/DECISIONS.md §2) is therefore known at parse time. compileFast compiles such a subtree once
// into Go closures over unboxed float64 values, and evalFast charges its whole cost at once.
//
// The fast path only ever handles the case where every operand is a number and the budget can
// afford the whole subtree. Anything else (a string operand, an unknown name, a function, a
// budget that runs out inside the subtree, a cancelled context) refunds the bulk charge and
// evaluates the subtree node by node as before, so results, errors, their positions and the
// operations spent are exactly those of the tree walk.

// numFn evaluates a compiled numeric subtree; ok is false when some operand is not a number.
// m is vars when vars is a MapVars (read directly, without the interface call), fr the current
// arrow frame.
type numFn func(m MapVars, vars Vars, fr *frame) (f float64, ok bool)

// fastCode is the compiled form of a maximal numeric subtree rooted at a binaryNode.
type fastCode struct {
	fn    numFn
	nodes int64 // operations the subtree costs: one per node
	cmp   bool  // the root is a comparison: fn returns 1 for true, 0 for false
}

// compileFast finds the maximal numeric subtrees of root and attaches their compiled form to
// their root binaryNode.
func compileFast(root node) {
	walk(root, func(n node) bool {
		b, ok := n.(*binaryNode)
		if !ok || b.opc == opOther || b.opc > opGE {
			return true
		}
		if fn, cnt, ok := compileNum(b, true); ok {
			b.fast = &fastCode{fn: fn, nodes: cnt, cmp: b.opc >= opLT}
			return false
		}
		return true
	})
}

// compileNum compiles n when it is a numeric subtree; top allows a comparison at its root.
func compileNum(n node, top bool) (numFn, int64, bool) {
	switch x := n.(type) {
	case *litNode:
		c, ok := x.v.(float64)
		if !ok {
			return nil, 0, false
		}
		return func(MapVars, Vars, *frame) (float64, bool) { return c, true }, 1, true
	case *identNode:
		return compileIdent(x), 1, true
	case *unaryNode:
		if x.op != "-" && x.op != "+" {
			return nil, 0, false
		}
		f, cnt, ok := compileNum(x.x, false)
		if !ok {
			return nil, 0, false
		}
		if x.op == "+" {
			return f, cnt + 1, true
		}
		return func(m MapVars, vars Vars, fr *frame) (float64, bool) {
			a, ok := f(m, vars, fr)
			return -a, ok
		}, cnt + 1, true
	case *binaryNode:
		if x.opc == opOther || x.opc > opGE || (x.opc >= opLT && !top) {
			return nil, 0, false
		}
		fx, cx, ok := compileNum(x.x, false)
		if !ok {
			return nil, 0, false
		}
		fy, cy, ok := compileNum(x.y, false)
		if !ok {
			return nil, 0, false
		}
		return compileBinary(x.opc, fx, fy, x.y), cx + cy + 1, true
	}
	return nil, 0, false
}

func compileIdent(x *identNode) numFn {
	if x.idx >= 0 {
		up, idx := x.up, x.idx
		return func(m MapVars, vars Vars, fr *frame) (float64, bool) {
			for i := 0; i < up; i++ {
				fr = fr.parent
			}
			v, ok := fr.vals[idx].(float64)
			return v, ok
		}
	}
	name := x.name
	return func(m MapVars, vars Vars, fr *frame) (float64, bool) {
		var v any
		var ok bool
		if m != nil {
			v, ok = m[name]
		} else if vars != nil {
			v, ok = vars.Lookup(name)
		}
		f, isNum := v.(float64)
		return f, ok && isNum
	}
}

// compileBinary returns the closure of one operator; a number literal on the right is folded
// into the closure (it is still counted as a node).
func compileBinary(op opcode, fx, fy numFn, y node) numFn {
	if l, ok := y.(*litNode); ok {
		c := l.v.(float64)
		switch op {
		case opAdd:
			return func(m MapVars, vars Vars, fr *frame) (float64, bool) { a, ok := fx(m, vars, fr); return a + c, ok }
		case opSub:
			return func(m MapVars, vars Vars, fr *frame) (float64, bool) { a, ok := fx(m, vars, fr); return a - c, ok }
		case opMul:
			return func(m MapVars, vars Vars, fr *frame) (float64, bool) { a, ok := fx(m, vars, fr); return a * c, ok }
		case opDiv:
			return func(m MapVars, vars Vars, fr *frame) (float64, bool) { a, ok := fx(m, vars, fr); return a / c, ok }
		}
	}
	switch op {
	case opAdd:
		return func(m MapVars, vars Vars, fr *frame) (float64, bool) {
			a, ok := fx(m, vars, fr)
			if !ok {
				return 0, false
			}
			b, ok := fy(m, vars, fr)
			return a + b, ok
		}
	case opSub:
		return func(m MapVars, vars Vars, fr *frame) (float64, bool) {
			a, ok := fx(m, vars, fr)
			if !ok {
				return 0, false
			}
			b, ok := fy(m, vars, fr)
			return a - b, ok
		}
	case opMul:
		return func(m MapVars, vars Vars, fr *frame) (float64, bool) {
			a, ok := fx(m, vars, fr)
			if !ok {
				return 0, false
			}
			b, ok := fy(m, vars, fr)
			return a * b, ok
		}
	case opDiv:
		return func(m MapVars, vars Vars, fr *frame) (float64, bool) {
			a, ok := fx(m, vars, fr)
			if !ok {
				return 0, false
			}
			b, ok := fy(m, vars, fr)
			return a / b, ok
		}
	case opMod:
		return func(m MapVars, vars Vars, fr *frame) (float64, bool) {
			a, ok := fx(m, vars, fr)
			if !ok {
				return 0, false
			}
			b, ok := fy(m, vars, fr)
			return math.Mod(a, b), ok
		}
	}
	return func(m MapVars, vars Vars, fr *frame) (float64, bool) { // opLT, opLE, opGT, opGE
		a, ok := fx(m, vars, fr)
		if !ok {
			return 0, false
		}
		b, ok := fy(m, vars, fr)
		var r bool
		switch op {
		case opLT:
			r = a < b
		case opLE:
			r = a <= b
		case opGT:
			r = a > b
		default:
			r = a >= b
		}
		if r {
			return 1, ok
		}
		return 0, ok
	}
}

// evalFast runs n's compiled subtree. done is false when the fast path does not apply and the
// caller must walk the tree; nothing has then been charged.
func (n *binaryNode) evalFast(st *state) (f float64, v any, isNum, done bool) {
	c := n.fast
	if st.left < c.nodes && !st.reserveBulk(c.nodes) {
		return 0, nil, false, false
	}
	st.left -= c.nodes
	m, _ := st.vars.(MapVars)
	r, ok := c.fn(m, st.vars, st.frame)
	if !ok {
		st.left += c.nodes
		return 0, nil, false, false
	}
	if c.cmp {
		return 0, r != 0, false, true
	}
	return r, nil, true, true
}

// reserveBulk tops the local reserve up to at least n operations, as the node-by-node path
// would over its n ticks. It reports false, changing nothing, when the budget cannot afford n
// or the context is done: the node-by-node path then fails at the exact node.
func (st *state) reserveBulk(n int64) bool {
	if st.ctx.Err() != nil {
		return false
	}
	need := n - st.left
	got, ok := st.b.tryReserve(need, need+budgetChunk)
	if !ok {
		return false
	}
	st.left += got
	return true
}

// evalRootFast evaluates an Expr whose root is a compiled numeric subtree without setting up a
// state: it charges the subtree's cost straight to b. ok is false, with nothing charged, when
// the tree walk must run instead (see evalFast).
func (n *binaryNode) evalRootFast(ctx context.Context, vars Vars, b *Budget) (v any, ok bool) {
	c := n.fast
	if ctx.Err() != nil {
		return nil, false
	}
	if _, ok := b.tryReserve(c.nodes, c.nodes); !ok {
		return nil, false
	}
	defer func() {
		if r := recover(); r != nil { // a Vars that panics: let the tree walk report it
			b.release(c.nodes)
			v, ok = nil, false
		}
	}()
	m, _ := vars.(MapVars)
	r, ok := c.fn(m, vars, nil)
	if !ok {
		b.release(c.nodes)
		return nil, false
	}
	if c.cmp {
		return r != 0, true
	}
	return boxNumber(r), true
}
