package expr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/pkuinfo/harness/lang/diag"
)

// Env is the per-plugin environment: the builtins (registered by stdlib.NewEnv), the user
// functions of `shared:` and `functions:` (Define), a parse cache keyed by source and a regex
// compile cache (docs/DECISIONS.md §2, "compiled once per plugin"). It is safe for concurrent use.
// A tool's own functions go in a layer made with Extend, which sees everything of its parent
// and may shadow a shared function of the same name (seed: "the tool's own definition wins").
type Env struct {
	parent *Env
	shared *envShared

	mu       sync.RWMutex
	builtins map[string]*builtin
	funcs    map[string]*userFunc
	order    []string // user function names in definition order
	parses   map[string]*Expr
	tmpls    map[string]*Template
}

// envShared is what every layer of one plugin's Env shares.
type envShared struct {
	seq atomic.Int64 // numbers user functions in definition order across layers
	gen atomic.Int64 // bumped by every Register and Define: invalidates resolution caches

	reMu    sync.Mutex
	regexes map[string]*regexEntry
}

type regexEntry struct {
	re   *regexp.Regexp
	size int // instructions of the compiled program
	err  error
}

// Cache bounds: a plugin's sources are finite, but expressions built at run time (a pattern
// from input) must not grow a cache without limit.
const (
	maxParseCache = 4096
	maxRegexCache = 512
)

// builtin is one registered standard-library function.
type builtin struct {
	name      string
	fn        Builtin
	method    bool
	minArgs   int
	maxArgs   int    // -1: any number
	regexArgs uint32 // bit i: argument i is a regex pattern, checked statically when a literal
	funcArgs  uint32 // bit i: argument i may be an arrow function
}

type userFunc struct {
	name string
	seq  int64
	fn   *Func
	expr *Expr
}

// NewEnv returns an empty Env with no builtins; stdlib.NewEnv returns one with the library.
func NewEnv() *Env {
	return &Env{
		shared:   &envShared{regexes: map[string]*regexEntry{}},
		builtins: map[string]*builtin{},
		funcs:    map[string]*userFunc{},
		parses:   map[string]*Expr{},
		tmpls:    map[string]*Template{},
	}
}

// Extend returns a layer over e for one tool: it shares e's builtins, functions and regex cache,
// and has its own user functions (which shadow e's) and its own parse cache, since the same
// source may call a different function there.
func (e *Env) Extend() *Env {
	return &Env{
		parent:   e,
		shared:   e.shared,
		builtins: map[string]*builtin{},
		funcs:    map[string]*userFunc{},
		parses:   map[string]*Expr{},
		tmpls:    map[string]*Template{},
	}
}

// Builtin is a standard-library function: it receives the evaluated arguments (the receiver
// first for a method call) and returns a value of the model or an error. It must charge the
// budget (c.Charge) before doing work proportional to its input, must not keep args or c after
// it returns (both are reused), and must not modify any argument. An error becomes a
// *RuntimeError at the call ("LINE:COL: name: message"), of kind "limit" when made by Limitf.
type Builtin func(c *Call, args []any) (any, error)

// BuiltinOption adjusts a registration.
type BuiltinOption func(*builtin)

// Method makes the builtin callable as a method on its first argument: x.name(y) is name(x, y)
// (docs/DECISIONS.md §5).
func Method() BuiltinOption { return func(b *builtin) { b.method = true } }

// Args declares how many arguments the builtin takes (max -1 for any number); Check reports
// calls outside the range and the evaluator refuses them.
func Args(min, max int) BuiltinOption {
	return func(b *builtin) { b.minArgs, b.maxArgs = min, max }
}

// RegexArg marks argument i (0-based, the receiver of a method call counting as 0) as a regex
// pattern: Check compiles it when it is a string literal and reports a bad pattern at its
// position.
func RegexArg(i int) BuiltinOption { return func(b *builtin) { b.regexArgs |= 1 << uint(i) } }

// Register adds (or replaces) the builtin name. It is meant for start-up, before the Env is
// shared.
func (e *Env) Register(name string, fn Builtin, opts ...BuiltinOption) {
	b := &builtin{name: name, fn: fn, maxArgs: -1}
	for _, o := range opts {
		o(b)
	}
	e.mu.Lock()
	e.builtins[name] = b
	e.mu.Unlock()
	e.shared.gen.Add(1)
}

// Builtins returns the names of every builtin visible from e, sorted.
func (e *Env) Builtins() []string {
	seen := map[string]bool{}
	for x := e; x != nil; x = x.parent {
		x.mu.RLock()
		for k := range x.builtins {
			seen[k] = true
		}
		x.mu.RUnlock()
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// IsMethod reports whether name is a builtin callable as a method.
func (e *Env) IsMethod(name string) bool {
	b := e.lookupBuiltin(name)
	return b != nil && b.method
}

func (e *Env) lookupBuiltin(name string) *builtin {
	for x := e; x != nil; x = x.parent {
		x.mu.RLock()
		b := x.builtins[name]
		x.mu.RUnlock()
		if b != nil {
			return b
		}
	}
	return nil
}

// lookupFunc finds the user function name defined before limit (a sequence number).
func (e *Env) lookupFunc(name string, limit int64) *userFunc {
	for x := e; x != nil; x = x.parent {
		x.mu.RLock()
		f := x.funcs[name]
		x.mu.RUnlock()
		if f != nil && f.seq < limit {
			return f
		}
	}
	return nil
}

// Functions returns the user functions visible from e, in definition order (parents first).
func (e *Env) Functions() []string {
	var out []string
	if e.parent != nil {
		out = e.parent.Functions()
	}
	e.mu.RLock()
	out = append(out, e.order...)
	e.mu.RUnlock()
	return out
}

// Expr is a parsed expression, bound to the Env that parsed it.
type Expr struct {
	src   string
	full  string // the text positions refer to: src itself, or the whole template
	root  node
	env   *Env
	limit int64 // user functions with a sequence number below limit are visible
	fn    bool  // the body of a function defined with Define: a top-level arrow is its shape
}

// Source returns the expression's text.
func (x *Expr) Source() string { return x.src }

// IsArrow reports whether the expression is an arrow function (the shape a function body must
// have).
func (x *Expr) IsArrow() bool { _, ok := x.root.(*arrowNode); return ok }

// Params returns an arrow function's parameter names, or nil.
func (x *Expr) Params() []string {
	if a, ok := x.root.(*arrowNode); ok {
		return a.params
	}
	return nil
}

// Parse parses an expression (docs/DECISIONS.md §2). Results are cached by source, so parsing the
// same text twice returns the same *Expr. The error is an ErrorList with every syntax problem,
// forbidden constructs included, each at its line:column in src.
func (e *Env) Parse(src string) (*Expr, error) {
	e.mu.RLock()
	x := e.parses[src]
	e.mu.RUnlock()
	if x != nil {
		return x, nil
	}
	x, err := e.parse(src)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if len(e.parses) < maxParseCache {
		if y := e.parses[src]; y != nil {
			x = y
		} else {
			e.parses[src] = x
		}
	}
	e.mu.Unlock()
	return x, nil
}

func (e *Env) parse(src string) (*Expr, error) {
	root, errs := parseExpr(src)
	if len(errs) > 0 {
		return nil, errs.Err()
	}
	return &Expr{src: src, full: src, root: root, env: e, limit: math.MaxInt64}, nil
}

// Define adds the user function name (from `functions:` or `shared:`, docs/DECISIONS.md §4). fn must
// be an arrow function parsed by e. The body sees only functions defined before it, so recursion
// is impossible by construction; a name defined twice in the same layer is an error.
func (e *Env) Define(name string, fn *Expr) error {
	if fn == nil {
		return fmt.Errorf("function %s: no expression", name)
	}
	a, ok := fn.root.(*arrowNode)
	if !ok {
		return &Error{Pos: fn.root.Pos(), Msg: fmt.Sprintf("function '%s' must be an arrow function, e.g. (c) => htmlText(c).trim()", name)}
	}
	if !isIdentName(name) {
		return fmt.Errorf("function name %q is not a valid name", name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, dup := e.funcs[name]; dup {
		return fmt.Errorf("function '%s' is defined twice", name)
	}
	// A fresh tree: the cached *Expr may also be used elsewhere, and its visibility limit is
	// specific to this definition.
	root, errs := parseExpr(fn.src)
	if len(errs) > 0 {
		return errs.Err()
	}
	a = root.(*arrowNode)
	seq := e.shared.seq.Add(1)
	body := &Expr{src: fn.src, full: fn.src, root: a, env: e, limit: seq, fn: true}
	f := &Func{name: name, params: a.params, body: a.body, expr: body, noCapture: !containsArrow(a.body)}
	e.funcs[name] = &userFunc{name: name, seq: seq, fn: f, expr: body}
	e.order = append(e.order, name)
	e.shared.gen.Add(1)
	return nil
}

// resolution is a call site's cached lookup of its function, valid while gen is current.
type resolution struct {
	gen int64
	env *Env
	u   *userFunc
	b   *builtin
}

// resolve finds the user function or builtin name for a call site in scope, through the site's
// cache.
// Method call sites pass limit 0: methods are builtins only.
func resolve(cache *atomic.Pointer[resolution], env *Env, limit int64, name string) (*userFunc, *builtin) {
	gen := env.shared.gen.Load()
	if r := cache.Load(); r != nil && r.gen == gen && r.env == env {
		return r.u, r.b
	}
	r := &resolution{gen: gen, env: env}
	if r.u = env.lookupFunc(name, limit); r.u == nil {
		r.b = env.lookupBuiltin(name)
	}
	cache.Store(r)
	return r.u, r.b
}

// containsArrow reports whether an arrow function appears in n: only then can a call's frame
// be captured by a closure and outlive the call.
func containsArrow(n node) bool {
	found := false
	walk(n, func(m node) bool {
		if _, ok := m.(*arrowNode); ok {
			found = true
		}
		return !found
	})
	return found
}

// Function returns the Expr that defines the user function name (for checking its body), or
// nil.
func (e *Env) Function(name string) *Expr {
	if f := e.lookupFunc(name, math.MaxInt64); f != nil {
		return f.expr
	}
	return nil
}

func isIdentName(s string) bool {
	if s == "" || reservedWords[s] {
		return false
	}
	for i, r := range s {
		if i == 0 && !isIdentStart(r) || i > 0 && !isIdentPart(r) {
			return false
		}
	}
	return true
}

// Budget is the operation budget shared by a whole tool run (docs/DECISIONS.md §2): every
// evaluated node costs one operation, and builtins charge for the elements they visit. It is safe
// for concurrent use by the goroutines of an `each` step.
//
// An evaluation reserves operations from the Budget in small chunks and returns what it did not
// use when it ends, so counting costs no atomic operation per node. A single evaluation fails at
// exactly the limit; concurrent ones may stop up to one chunk per goroutine early, never late.
type Budget struct {
	limit    int64
	used     atomic.Int64
	exceeded atomic.Bool
}

// budgetChunk is how many operations an evaluation reserves at a time.
const budgetChunk = 256

// DefaultBudget is the operation budget of one run (docs/DECISIONS.md §2).
const DefaultBudget = 100_000

// NewBudget returns a budget of limit operations.
func NewBudget(limit int) *Budget { return &Budget{limit: int64(limit)} }

// ErrBudget is the cause (errors.Is) of every budget-exceeded error.
var ErrBudget = errors.New("expression budget exceeded")

// BudgetError is returned by Charge when the budget is spent. Its message is
// "expression budget exceeded (100000 operations)".
type BudgetError struct{ Limit int64 }

// Error returns the budget message, `expression budget exceeded (N operations)`.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("expression budget exceeded (%d operations)", e.Limit)
}

// Is makes errors.Is(err, ErrBudget) true.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// Charge spends n operations. Once the budget is exceeded every later charge fails too, so
// concurrent users all stop.
func (b *Budget) Charge(n int) error {
	if n <= 0 {
		return nil
	}
	_, err := b.reserve(int64(n), int64(n))
	return err
}

// reserve takes at least need and up to want operations, and reports how many it took.
func (b *Budget) reserve(need, want int64) (int64, error) {
	for {
		if b.exceeded.Load() {
			return 0, &BudgetError{Limit: b.limit}
		}
		u := b.used.Load()
		avail := b.limit - u
		if avail < need {
			b.exceeded.Store(true)
			b.used.Store(b.limit)
			return 0, &BudgetError{Limit: b.limit}
		}
		take := min(want, avail)
		if b.used.CompareAndSwap(u, u+take) {
			return take, nil
		}
	}
}

// tryReserve is reserve that changes nothing when the budget cannot afford need.
func (b *Budget) tryReserve(need, want int64) (int64, bool) {
	for {
		if b.exceeded.Load() {
			return 0, false
		}
		u := b.used.Load()
		avail := b.limit - u
		if avail < need {
			return 0, false
		}
		take := min(want, avail)
		if b.used.CompareAndSwap(u, u+take) {
			return take, true
		}
	}
}

// release gives back n reserved operations that were not spent.
func (b *Budget) release(n int64) {
	if n > 0 && !b.exceeded.Load() {
		b.used.Add(-n)
	}
}

// Used returns the operations spent, at most the limit.
func (b *Budget) Used() int { return int(min(b.used.Load(), b.limit)) }

// Limit returns the budget's size.
func (b *Budget) Limit() int { return int(b.limit) }

// Vars supplies the values of the names in scope of one evaluation (input, constants, now,
// let-bound names…; docs/DECISIONS.md §4). Lookup reports false for a name not in scope; a name in
// scope whose step did not run reads as (nil, true).
type Vars interface {
	Lookup(name string) (any, bool)
}

// MapVars is Vars over a Go map of model values.
type MapVars map[string]any

// Lookup implements Vars.
func (m MapVars) Lookup(name string) (any, bool) { v, ok := m[name]; return v, ok }

// Call is what a builtin receives besides its arguments: the run's budget and context, the Env,
// the call's position and name, and a way to call function arguments back.
type Call struct {
	Budget *Budget
	Env    *Env
	Pos    diag.Pos
	Name   string
	st     *state
}

// Context returns the evaluation's context.
func (c *Call) Context() context.Context { return c.st.ctx }

// Lookup reads a variable of the run (for instance `now`, which the date functions need).
func (c *Call) Lookup(name string) (any, bool) {
	if c.st.vars == nil {
		return nil, false
	}
	return c.st.vars.Lookup(name)
}

// Charge spends n operations of the run's budget; the error is a *RuntimeError of kind "limit"
// at the call's position.
func (c *Call) Charge(n int) error {
	if n <= 0 {
		return nil
	}
	return c.st.take(c.Pos, int64(n))
}

// CallFunc calls a function value (an arrow, a user function or a builtin value) with args.
// The call itself is not charged: a builtin charges one operation per element it visits before
// its loop (docs/DECISIONS.md §2), and the function's body charges for its own nodes. fn that is
// not a function is an error naming the builtin.
func (c *Call) CallFunc(fn any, args ...any) (any, error) {
	f, ok := fn.(*Func)
	if !ok {
		return nil, &RuntimeError{Pos: c.Pos, Kind: "expression", Msg: fmt.Sprintf("%s: expected a function such as x => x.name, got %s", c.Name, describe(fn))}
	}
	return c.st.callFunc(f, args, c.Pos)
}

// Remaining returns how many operations the run's budget can still pay for (what this
// evaluation has reserved included). A builtin whose output count is known only while it works
// (the matches of a regex) asks for no more than that, so that it never builds more than the
// budget pays for.
func (c *Call) Remaining() int {
	b := c.st.b
	return int(max(0, b.limit-b.used.Load()) + c.st.left)
}

// Regexp compiles a pattern through the Env's cache, charging one operation per 100 bytes of
// pattern and, when it is compiled, one per RegexInstPerOp instructions of the compiled program
// (at most MaxRegexInst); the error names the builtin.
func (c *Call) Regexp(pattern string) (*regexp.Regexp, error) {
	re, _, err := c.RegexpProg(pattern)
	return re, err
}

// RegexpProg is Regexp that also returns the instruction count of the compiled program: RE2's
// matching time is linear in the text times this size, which is what a builtin charges for a
// scan (one operation per KB of text per RegexInstPerOp instructions).
func (c *Call) RegexpProg(pattern string) (*regexp.Regexp, int, error) {
	if err := c.Charge(1 + len(pattern)/100); err != nil {
		return nil, 0, err
	}
	return c.Env.regexpCharged(pattern, c)
}

// Limitf returns an error that a builtin uses for a size limit (range over 10,000 items,
// repeat over 1,000…); the evaluator reports it with kind "limit".
func Limitf(format string, args ...any) error {
	return &limitError{msg: fmt.Sprintf(format, args...)}
}

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }
