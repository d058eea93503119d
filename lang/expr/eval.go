package expr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/pkuinfo/harness/lang/diag"
)

// maxCallDepth bounds nested function calls (a callback inside a callback…). Recursion is
// impossible by construction, but a function value can be passed to itself.
const maxCallDepth = 100

// frame holds the parameters of one arrow-function call; parent is the frame the arrow closed
// over.
type frame struct {
	parent *frame
	vals   []any
	buf    [2]any
}

// state is one evaluation: the variables, the budget, the current arrow frame and the Expr
// whose functions are visible.
type state struct {
	ctx    context.Context
	vars   Vars
	b      *Budget
	left   int64 // operations reserved from b and not yet spent
	frame  *frame
	scope  *Expr
	depth  int
	calls  []*Call
	args   []any
	frames []*frame // reusable frames by call depth (see Func.noCapture)
}

// Eval evaluates x with the variables vars, charging b (nil: a fresh budget of
// DefaultBudget). The error is a *RuntimeError with the position of the failing node, kind
// "expression" or "limit"; a cancelled ctx stops the evaluation with kind "limit".
func (x *Expr) Eval(ctx context.Context, vars Vars, b *Budget) (v any, err error) {
	if b == nil {
		b = NewBudget(DefaultBudget)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if r, ok := x.root.(*binaryNode); ok && r.fast != nil {
		if v, ok := r.evalRootFast(ctx, vars, b); ok {
			return v, nil
		}
	}
	st := &state{ctx: ctx, vars: vars, b: b, scope: x}
	defer st.finish(&v, &err)
	return x.root.eval(st)
}

// finish ends an evaluation: it returns the unspent reservation to the budget and turns a panic
// (a bug in a builtin) into an error, so that one bad plugin cannot bring the host down.
func (st *state) finish(v *any, err *error) {
	st.b.release(st.left)
	st.left = 0
	if r := recover(); r != nil {
		*v = nil
		*err = &RuntimeError{Kind: "expression", Msg: fmt.Sprintf("internal error: %v (please report this)", r)}
	}
}

// tick charges one operation for evaluating a node.
func (st *state) tick(p diag.Pos) error {
	if st.left > 0 {
		st.left--
		return nil
	}
	return st.take(p, 1)
}

// take spends n operations, reserving more from the budget when the local reserve is short; it
// also looks at the context at every reservation.
func (st *state) take(p diag.Pos, n int64) error {
	if n <= st.left {
		st.left -= n
		return nil
	}
	if err := st.ctx.Err(); err != nil {
		return &RuntimeError{Pos: p, Msg: "evaluation stopped: " + err.Error(), Kind: "limit", err: err}
	}
	need := n - st.left
	st.left = 0
	got, err := st.b.reserve(need, need+budgetChunk)
	if err != nil {
		return &RuntimeError{Pos: p, Msg: err.Error(), Kind: "limit", err: err}
	}
	st.left = got - need
	return nil
}

func (st *state) charge(p diag.Pos, n int) error {
	if n <= 0 {
		return nil
	}
	return st.take(p, int64(n))
}

func rtErr(p diag.Pos, format string, args ...any) error {
	return &RuntimeError{Pos: p, Msg: fmt.Sprintf(format, args...), Kind: "expression"}
}

func evalChainOf(n node, st *state) (any, bool, error) {
	if c, ok := n.(chainNode); ok {
		return c.evalChain(st)
	}
	v, err := n.eval(st)
	return v, false, err
}

func (n *litNode) eval(st *state) (any, error) {
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	return n.v, nil
}

func (n *identNode) eval(st *state) (any, error) {
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	if n.idx >= 0 {
		f := st.frame
		for i := 0; i < n.up; i++ {
			f = f.parent
		}
		return f.vals[n.idx], nil
	}
	if st.vars != nil {
		if v, ok := st.vars.Lookup(n.name); ok {
			return v, nil
		}
	}
	if f := st.scope.env.lookupFunc(n.name, st.scope.limit); f != nil {
		return f.fn, nil
	}
	if b := st.scope.env.lookupBuiltin(n.name); b != nil {
		return &Func{name: n.name, builtin: b}, nil
	}
	if n.name == "undefined" {
		return nil, rtErr(n.p, "unknown name 'undefined' (there is no undefined; use null)")
	}
	return nil, rtErr(n.p, "unknown name '%s'", n.name)
}

func (n *listNode) eval(st *state) (any, error) {
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(n.elems))
	for i, e := range n.elems {
		v, err := e.eval(st)
		if err != nil {
			return nil, err
		}
		if n.spread != nil && n.spread[i] {
			switch x := v.(type) {
			case []any:
				if err := st.charge(e.Pos(), len(x)); err != nil {
					return nil, err
				}
				out = append(out, x...)
			case nil:
			default:
				return nil, rtErr(e.Pos(), "cannot spread %s into a list", describe(v))
			}
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

func (n *objectNode) eval(st *state) (any, error) {
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	o := NewObject(len(n.props))
	for _, p := range n.props {
		v, err := p.val.eval(st)
		if err != nil {
			return nil, err
		}
		if p.spread {
			switch x := v.(type) {
			case *Object:
				if err := st.charge(p.p, x.Len()); err != nil {
					return nil, err
				}
				for _, e := range x.ents {
					o.Set(e.key, e.val)
				}
			case nil:
			default:
				return nil, rtErr(p.val.Pos(), "cannot spread %s into an object", describe(v))
			}
			continue
		}
		key := p.key
		if p.keyNode != nil {
			k, err := p.keyNode.eval(st)
			if err != nil {
				return nil, err
			}
			switch x := k.(type) {
			case string:
				key = x
			case float64:
				key = FormatNumber(x)
			case bool, nil:
				key, _ = ToText(x)
				if x == nil {
					key = "null"
				}
			default:
				return nil, rtErr(p.keyNode.Pos(), "an object key must be a string or a number, got %s", describe(k))
			}
		}
		o.Set(key, v)
	}
	return o, nil
}

func (n *memberNode) eval(st *state) (any, error) {
	v, _, err := n.evalChain(st)
	return v, err
}

func (n *memberNode) evalChain(st *state) (any, bool, error) {
	if err := st.tick(n.p); err != nil {
		return nil, false, err
	}
	x, short, err := evalChainOf(n.x, st)
	if err != nil || short {
		return nil, short, err
	}
	if x == nil && n.optional {
		return nil, true, nil
	}
	v, err := property(x, n.name, n.p)
	if err != nil && n.optional {
		// x?.name on a number, boolean, string or node reads as null (docs/DECISIONS.md §1).
		return nil, false, nil
	}
	return v, false, err
}

// property reads .name of x (docs/DECISIONS.md §1): a missing key is null; reading from null, a
// number, a boolean or a string (except .length) is an error.
func property(x any, name string, p diag.Pos) (any, error) {
	switch o := x.(type) {
	case *Object:
		v, _ := o.Get(name)
		return v, nil
	case []any:
		if name == "length" {
			return float64(len(o)), nil
		}
		return nil, nil
	case string:
		if name == "length" {
			return float64(utf8.RuneCountInString(o)), nil
		}
	case nil:
		return nil, rtErr(p, "cannot read property '%s' of null (use ?.)", name)
	case *Node:
		return nil, rtErr(p, "cannot read property '%s' of an HTML node; use attr(node, '%s') or htmlText(node)", name, name)
	}
	return nil, rtErr(p, "cannot read property '%s' of %s", name, describe(x))
}

func (n *indexNode) eval(st *state) (any, error) {
	v, _, err := n.evalChain(st)
	return v, err
}

func (n *indexNode) evalChain(st *state) (any, bool, error) {
	if err := st.tick(n.p); err != nil {
		return nil, false, err
	}
	x, short, err := evalChainOf(n.x, st)
	if err != nil || short {
		return nil, short, err
	}
	if x == nil && n.optional {
		return nil, true, nil
	}
	i, err := n.idx.eval(st)
	if err != nil {
		return nil, false, err
	}
	v, err := index(x, i, n.p)
	if err != nil && n.optional {
		return nil, false, nil // x?.[i] where x cannot be indexed reads as null
	}
	return v, false, err
}

// index reads x[i]: list elements by integer index (null when out of range), object keys by
// string (numbers are spelled as in JavaScript), characters of a string.
func index(x, i any, p diag.Pos) (any, error) {
	switch o := x.(type) {
	case []any:
		switch k := i.(type) {
		case float64:
			if k >= 0 && k < float64(len(o)) && k == math.Trunc(k) {
				return o[int(k)], nil
			}
			return nil, nil
		case string:
			return property(o, k, p)
		}
	case *Object:
		switch k := i.(type) {
		case string:
			v, _ := o.Get(k)
			return v, nil
		case float64:
			v, _ := o.Get(FormatNumber(k))
			return v, nil
		}
	case string:
		switch k := i.(type) {
		case float64:
			if k < 0 || k != math.Trunc(k) {
				return nil, nil
			}
			j := int(k)
			if isASCII(o) {
				if j < len(o) {
					return o[j : j+1], nil
				}
				return nil, nil
			}
			for _, r := range o {
				if j == 0 {
					return string(r), nil
				}
				j--
			}
			return nil, nil
		case string:
			return property(o, k, p)
		}
	case nil:
		return nil, rtErr(p, "cannot read index %s of null (use ?.[])", quoteKey(i))
	}
	return nil, rtErr(p, "cannot index %s with %s", describe(x), describe(i))
}

func quoteKey(k any) string {
	switch x := k.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return FormatNumber(x)
	}
	return describe(k)
}

func (n *unaryNode) eval(st *state) (any, error) {
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	x, err := n.x.eval(st)
	if err != nil {
		return nil, err
	}
	switch n.op {
	case "!":
		return !Truthy(x), nil
	case "-":
		if f, ok := x.(float64); ok {
			return -f, nil
		}
	case "+":
		if f, ok := x.(float64); ok {
			return f, nil
		}
	}
	return nil, rtErr(n.p, "cannot apply unary '%s' to %s (use num(x) to read a number)", n.op, describe(x))
}

// opcode is a binary operator, resolved at parse time.
type opcode uint8

const (
	opOther opcode = iota // refused operators; never evaluated
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opLT
	opLE
	opGT
	opGE
	opEq
	opNe
	opAnd
	opOr
	opNullish
)

var opcodes = map[string]opcode{
	"+": opAdd, "-": opSub, "*": opMul, "/": opDiv, "%": opMod,
	"<": opLT, "<=": opLE, ">": opGT, ">=": opGE,
	"==": opEq, "===": opEq, "!=": opNe, "!==": opNe,
	"&&": opAnd, "||": opOr, "??": opNullish,
}

// evalNum evaluates n, returning a number unboxed (isNum) so that arithmetic chains allocate
// only for their final result; any other value comes back in v.
func evalNum(st *state, n node) (f float64, v any, isNum bool, err error) {
	if b, ok := n.(*binaryNode); ok && b.opc <= opGE && b.opc != opOther {
		return b.evalNum(st)
	}
	v, err = n.eval(st)
	if x, ok := v.(float64); ok {
		return x, nil, true, err
	}
	return 0, v, false, err
}

func (n *binaryNode) evalNum(st *state) (float64, any, bool, error) {
	if n.fast != nil {
		if f, v, isNum, done := n.evalFast(st); done {
			return f, v, isNum, nil
		}
	}
	if err := st.tick(n.p); err != nil {
		return 0, nil, false, err
	}
	a, x, aNum, err := evalNum(st, n.x)
	if err != nil {
		return 0, nil, false, err
	}
	b, y, bNum, err := evalNum(st, n.y)
	if err != nil {
		return 0, nil, false, err
	}
	if aNum && bNum {
		switch n.opc {
		case opAdd:
			return a + b, nil, true, nil
		case opSub:
			return a - b, nil, true, nil
		case opMul:
			return a * b, nil, true, nil
		case opDiv:
			return a / b, nil, true, nil
		case opMod:
			return math.Mod(a, b), nil, true, nil
		case opLT:
			return 0, a < b, false, nil
		case opLE:
			return 0, a <= b, false, nil
		case opGT:
			return 0, a > b, false, nil
		case opGE:
			return 0, a >= b, false, nil
		}
	}
	if aNum {
		x = a
	}
	if bNum {
		y = b
	}
	v, err := n.apply(st, x, y)
	if f, ok := v.(float64); ok && err == nil {
		return f, nil, true, nil
	}
	return 0, v, false, err
}

func (n *binaryNode) eval(st *state) (any, error) {
	switch n.opc {
	case opAnd, opOr, opNullish:
	case opEq, opNe:
	default:
		f, v, isNum, err := n.evalNum(st)
		if isNum {
			return boxNumber(f), err
		}
		return v, err
	}
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	x, err := n.x.eval(st)
	if err != nil {
		return nil, err
	}
	switch n.opc { // short-circuit operators
	case opAnd:
		if !Truthy(x) {
			return x, nil
		}
		return n.y.eval(st)
	case opOr:
		if Truthy(x) {
			return x, nil
		}
		return n.y.eval(st)
	case opNullish:
		if x != nil {
			return x, nil
		}
		return n.y.eval(st)
	}
	y, err := n.y.eval(st)
	if err != nil {
		return nil, err
	}
	return n.apply(st, x, y)
}

// apply is a non-short-circuit operator on two evaluated operands.
func (n *binaryNode) apply(st *state, x, y any) (any, error) {
	a, aNum := x.(float64)
	b, bNum := y.(float64)
	if aNum && bNum {
		switch n.opc {
		case opAdd:
			return a + b, nil
		case opSub:
			return a - b, nil
		case opMul:
			return a * b, nil
		case opDiv:
			return a / b, nil
		case opMod:
			return math.Mod(a, b), nil
		case opLT:
			return a < b, nil
		case opLE:
			return a <= b, nil
		case opGT:
			return a > b, nil
		case opGE:
			return a >= b, nil
		case opEq:
			return a == b, nil
		case opNe:
			return a != b, nil
		}
	}
	switch n.opc {
	case opEq, opNe:
		var eq bool
		switch xv := x.(type) {
		case []any, *Object: // a deep comparison costs what it visits, as it visits
			var err error
			if eq, err = strictEqual(x, y, &stCharger{st, n.p}); err != nil {
				return nil, err
			}
		case string:
			if ys, ok := y.(string); ok && len(xv) == len(ys) && len(xv) >= WalkBytesPerOp {
				if err := st.charge(n.p, len(xv)/WalkBytesPerOp); err != nil {
					return nil, err
				}
			}
			eq, _ = strictEqual(x, y, nil)
		default:
			eq, _ = strictEqual(x, y, nil)
		}
		return eq == (n.opc == opEq), nil
	case opAdd:
		xs, xStr := x.(string)
		ys, yStr := y.(string)
		if !xStr && !yStr {
			break
		}
		var err error
		if !xStr {
			if xs, err = concatText(st, x, n.x.Pos()); err != nil {
				return nil, err
			}
		}
		if !yStr {
			if ys, err = concatText(st, y, n.y.Pos()); err != nil {
				return nil, err
			}
		}
		if k := (len(xs) + len(ys)) / 1024; k > 0 {
			if err := st.charge(n.p, k); err != nil {
				return nil, err
			}
		}
		return xs + ys, nil
	case opLT, opLE, opGT, opGE:
		xs, xStr := x.(string)
		ys, yStr := y.(string)
		if xStr && yStr {
			var c int
			if len(xs) > WalkBytesPerOp && len(ys) > WalkBytesPerOp { // long texts: paid per KB
				var err error
				if c, err = CompareStrings(xs, ys, &stCharger{st, n.p}); err != nil {
					return nil, err
				}
			} else {
				c = strings.Compare(xs, ys)
			}
			switch n.opc {
			case opLT:
				return c < 0, nil
			case opLE:
				return c <= 0, nil
			case opGT:
				return c > 0, nil
			default:
				return c >= 0, nil
			}
		}
		return nil, rtErr(n.p, "cannot compare %s with %s using '%s' (both sides must be numbers or both strings)", describe(x), describe(y), n.op)
	}
	return nil, rtErr(n.p, "cannot apply '%s' to %s and %s (use num(x) to read a number)", n.op, describe(x), describe(y))
}

// concatText is how a non-string reads when `+` joins it to a string: as JavaScript's String(),
// except lists and objects, which read as JSON.
func concatText(st *state, v any, p diag.Pos) (string, error) {
	switch v.(type) {
	case nil:
		return "null", nil
	case *Node:
		return "", rtErr(p, "cannot join an HTML node to a string; use htmlText(node)")
	case *Func:
		return "", rtErr(p, "cannot join a function to a string")
	case []any, *Object:
		return st.text(v, p)
	default:
		return ToText(v)
	}
}

// stCharger charges an evaluation's budget at a position: the Charger of the engine's own
// walks (comparison, text of a value).
type stCharger struct {
	st *state
	p  diag.Pos
}

func (c *stCharger) Charge(n int) error { return c.st.charge(c.p, n) }

// text is ToText of a list or object, charged as it is written and limited to MaxText; a
// longer text is a limit error at p.
func (st *state) text(v any, p diag.Pos) (string, error) {
	t, err := TextOf(v, MaxText, &stCharger{st, p})
	if err != nil {
		var re *RuntimeError
		if errors.As(err, &re) {
			return "", err
		}
		if errors.Is(err, ErrTooLarge) {
			return "", &RuntimeError{Pos: p, Kind: "limit", Msg: err.Error(), err: err}
		}
		return "", rtErr(p, "%v", err)
	}
	return t, nil
}

func (n *condNode) eval(st *state) (any, error) {
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	c, err := n.c.eval(st)
	if err != nil {
		return nil, err
	}
	if Truthy(c) {
		return n.a.eval(st)
	}
	return n.b.eval(st)
}

func (n *arrowNode) eval(st *state) (any, error) {
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	return &Func{params: n.params, body: n.body, frame: st.frame, expr: st.scope, noCapture: n.noCapture}, nil
}

func (n *tmplNode) eval(st *state) (any, error) {
	if err := st.tick(n.p); err != nil {
		return nil, err
	}
	// Every hole first (in order, each text charged per KB), then the text in one buffer of
	// the exact size.
	var buf [4]string
	texts := buf[:0]
	size := 0
	for _, s := range n.strs {
		size += len(s)
	}
	for i, x := range n.exprs {
		v, err := x.eval(st)
		if err != nil {
			return nil, err
		}
		var t string
		switch v.(type) {
		case []any, *Object:
			if t, err = st.text(v, n.exprs[i].Pos()); err != nil {
				return nil, err
			}
		default:
			if t, err = ToText(v); err != nil {
				return nil, rtErr(n.exprs[i].Pos(), "%v", err)
			}
		}
		if size += len(t); size > MaxText {
			return nil, &RuntimeError{Pos: n.p, Kind: "limit", Msg: (&SizeError{Limit: MaxText}).Error()}
		}
		if k := size/1024 - (size-len(t))/1024; k > 0 && len(t) > 1024 {
			if err := st.charge(n.p, k); err != nil {
				return nil, err
			}
		}
		texts = append(texts, t)
	}
	b := make([]byte, 0, size)
	for i, s := range n.strs {
		b = append(b, s...)
		if i < len(texts) {
			b = append(b, texts[i]...)
		}
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// evalArgs evaluates args onto the state's argument stack, with extra slots in front for a
// receiver, and returns the stack base.
func (st *state) evalArgs(args []node, front any, hasFront bool) (int, error) {
	base := len(st.args)
	if hasFront {
		st.args = append(st.args, front)
	}
	for _, a := range args {
		v, err := a.eval(st)
		if err != nil {
			st.args = st.args[:base]
			return base, err
		}
		st.args = append(st.args, v)
	}
	return base, nil
}

func (n *callNode) eval(st *state) (any, error) {
	v, _, err := n.evalChain(st)
	return v, err
}

func (n *callNode) evalChain(st *state) (any, bool, error) {
	if err := st.tick(n.p); err != nil {
		return nil, false, err
	}
	var f *Func
	var b *builtin
	if n.callee != nil {
		c, short, err := evalChainOf(n.callee, st)
		if err != nil || short {
			return nil, short, err
		}
		if c == nil && n.optional {
			return nil, true, nil
		}
		fn, ok := c.(*Func)
		if !ok {
			return nil, false, rtErr(n.p, "cannot call %s", describe(c))
		}
		f = fn
	} else if u, bi := resolve(&n.res, st.scope.env, st.scope.limit, n.name); u != nil {
		f = u.fn
	} else if b = bi; b == nil {
		v, ok := st.lookupVar(n.name)
		fn, isFn := v.(*Func)
		switch {
		case !ok:
			return nil, false, rtErr(n.p, "unknown function '%s'", n.name)
		case !isFn:
			return nil, false, rtErr(n.p, "'%s' is %s, not a function", n.name, describe(v))
		}
		f = fn
	}
	if f != nil && f.builtin != nil {
		b = f.builtin
	}
	base, err := st.evalArgs(n.args, nil, false)
	if err != nil {
		return nil, false, err
	}
	args := st.args[base:len(st.args):len(st.args)]
	var v any
	if b != nil {
		v, err = st.callBuiltin(b, args, n.p)
	} else {
		v, err = st.callFunc(f, args, n.p)
	}
	st.args = st.args[:base]
	return v, false, err
}

func (st *state) lookupVar(name string) (any, bool) {
	if st.vars == nil {
		return nil, false
	}
	return st.vars.Lookup(name)
}

func (n *methodNode) eval(st *state) (any, error) {
	v, _, err := n.evalChain(st)
	return v, err
}

func (n *methodNode) evalChain(st *state) (any, bool, error) {
	if err := st.tick(n.p); err != nil {
		return nil, false, err
	}
	recv, short, err := evalChainOf(n.recv, st)
	if err != nil || short {
		return nil, short, err
	}
	if recv == nil && n.optional {
		return nil, true, nil
	}
	if recv == nil {
		return nil, false, rtErr(n.p, "cannot call method '%s' of null (use ?.)", n.name)
	}
	_, b := resolve(&n.res, st.scope.env, 0, n.name)
	if b == nil || !b.method {
		if b != nil {
			return nil, false, rtErr(n.p, "'%s' is not a method; call it as %s(x, …)", n.name, n.name)
		}
		return nil, false, rtErr(n.p, "%s has no method '%s'", describe(recv), n.name)
	}
	base, err := st.evalArgs(n.args, recv, true)
	if err != nil {
		return nil, false, err
	}
	args := st.args[base:len(st.args):len(st.args)]
	v, err := st.callBuiltin(b, args, n.p)
	st.args = st.args[:base]
	return v, false, err
}

// callBuiltin runs b with args, reusing a Call per nesting depth.
func (st *state) callBuiltin(b *builtin, args []any, p diag.Pos) (any, error) {
	if len(args) < b.minArgs || b.maxArgs >= 0 && len(args) > b.maxArgs {
		return nil, rtErr(p, "%s: %s", b.name, arityText(b, len(args)))
	}
	if st.depth >= maxCallDepth {
		return nil, &RuntimeError{Pos: p, Kind: "limit", Msg: fmt.Sprintf("function calls nest too deeply (more than %d)", maxCallDepth)}
	}
	for len(st.calls) <= st.depth {
		st.calls = append(st.calls, &Call{st: st, Budget: st.b})
	}
	c := st.calls[st.depth]
	c.Env, c.Pos, c.Name = st.scope.env, p, b.name
	st.depth++
	v, err := b.fn(c, args)
	st.depth--
	if err != nil {
		var re *RuntimeError
		if errors.As(err, &re) {
			return nil, err
		}
		var le *limitError
		if errors.As(err, &le) || errors.Is(err, ErrTooLarge) {
			return nil, &RuntimeError{Pos: p, Kind: "limit", Msg: b.name + ": " + err.Error(), err: err}
		}
		var be *BudgetError
		if errors.As(err, &be) {
			return nil, &RuntimeError{Pos: p, Kind: "limit", Msg: err.Error(), err: err}
		}
		return nil, &RuntimeError{Pos: p, Kind: "expression", Msg: b.name + ": " + err.Error(), err: err}
	}
	return v, nil
}

func arityText(b *builtin, n int) string {
	plural := func(k int) string {
		if k == 1 {
			return "1 argument"
		}
		return strconv.Itoa(k) + " arguments"
	}
	switch {
	case b.maxArgs < 0:
		return fmt.Sprintf("takes at least %s, got %d", plural(b.minArgs), n)
	case b.minArgs == b.maxArgs:
		return fmt.Sprintf("takes %s, got %d", plural(b.minArgs), n)
	}
	return fmt.Sprintf("takes %d to %s, got %d", b.minArgs, plural(b.maxArgs), n)
}

// callFunc calls a function value with args; missing parameters are null, extra arguments are
// ignored (as in JavaScript, so map's (item, index) suits x => … too).
func (st *state) callFunc(f *Func, args []any, p diag.Pos) (any, error) {
	if f.builtin != nil {
		// A builtin passed as a function gets only its required arguments, so that
		// rows.map(num) is num(row) and not num(row, index).
		n := min(len(args), max(f.builtin.minArgs, 1))
		return st.callBuiltin(f.builtin, append([]any(nil), args[:n]...), p)
	}
	if st.depth >= maxCallDepth {
		return nil, &RuntimeError{Pos: p, Kind: "limit", Msg: fmt.Sprintf("function calls nest too deeply (more than %d)", maxCallDepth)}
	}
	var fr *frame
	if f.noCapture {
		// No closure can outlive this call: reuse the frame kept for this depth.
		for len(st.frames) <= st.depth {
			st.frames = append(st.frames, &frame{})
		}
		fr = st.frames[st.depth]
		fr.parent = f.frame
	} else {
		fr = &frame{parent: f.frame}
	}
	if len(f.params) <= len(fr.buf) {
		fr.vals = fr.buf[:len(f.params)]
	} else {
		fr.vals = make([]any, len(f.params))
	}
	n := copy(fr.vals, args)
	clear(fr.vals[n:])
	savedFrame, savedScope := st.frame, st.scope
	st.frame, st.scope = fr, f.expr
	st.depth++
	v, err := f.body.eval(st)
	st.depth--
	st.frame, st.scope = savedFrame, savedScope
	return v, err
}
