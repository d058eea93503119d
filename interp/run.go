package interp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/html"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// Run runs one tool of a loaded plugin with the given input and returns its
// result, an expr value that is plain JSON (seed 004 "Tools" and "Steps";
// docs/DECISIONS.md §4, §6, §10). p must have loaded without errors
// (diag.HasErrors false): Run trusts the validator for the static rules
// and checks at run time only what depends on values.
//
// The input is validated and defaulted before any step runs (see
// validateInput). Every step then runs in order under the run's limits
// (limits.go), which a `call` shares. Cancelling ctx stops the run promptly.
// A result that holds an HTML node, or whose JSON is over 1 MB, is an error.
//
// The whole run — requests and their bodies, waits for a free connection,
// abilities, KV, expression evaluation and the result check — runs under one
// deadline, Options.TimeLimit (MaxRunTime when zero), shared by every tool a
// `call` runs. When it passes, Run returns a kind limit error naming the
// limit within runGrace of the deadline, even when a transport, campus
// client, ability or KV store ignores its context; such a call is left to
// finish on its own and its result is dropped.
//
// A tool marked userOnly runs only for the user (see WithActor), and a
// `call` runs its callee as the caller's actor, so a userOnly tool refuses a
// call from a run started by the agent or the scheduler.
//
// Errors are *Error, with the kind a `catch` would see, the file and
// position of the failing step or expression, and the step path.
func Run(ctx context.Context, p *plugin.Plugin, tool string, input any, o Options) (any, error) {
	if p == nil || p.Manifest == nil {
		return nil, errf(KindInput, "no plugin")
	}
	t := p.Tool(tool)
	if t == nil {
		names := make([]string, len(p.Tools))
		for i, t := range p.Tools {
			names[i] = t.Name
		}
		return nil, errf(KindInput, "plugin %s has no tool %q (it has %s)", p.Manifest.ID, tool, strings.Join(names, ", "))
	}
	limit := o.TimeLimit
	switch {
	case limit == 0:
		limit = MaxRunTime
	case limit < 0 || limit > MaxRunTime:
		return nil, errf(KindInput, "options: time limit %s is outside 0–%s", limit, fmtDur(MaxRunTime))
	}
	actor, _ := ctx.Value(actorKey{}).(string)
	switch actor {
	case "", ActorUser, ActorAgent, ActorScheduler:
	default:
		return nil, errf(KindInput, "unknown actor %q (want user, agent or scheduler)", actor)
	}
	if err := userOnlyErr(t, actor, ""); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, limit, &runTimeError{limit})
	defer cancel()
	clock := o.Now
	if clock == nil {
		clock = time.Now
	}
	r := &run{
		p:       p,
		o:       &o,
		clock:   clock,
		now:     clock(),
		actor:   actor,
		net:     newNetClient(p.Manifest.Network, p.Manifest.Campus, &o),
		budget:  expr.NewBudget(MaxOperations),
		replyAt: map[string]string{},
		docURL:  map[*html.Node]string{},
	}
	return r.guard(ctx, t, input)
}

// runGrace is how long Run waits, after the deadline or a cancellation, for
// the run to stop by itself before it returns without it.
const runGrace = 5 * time.Millisecond

// Actors of a run (WithActor): who started it (seed 003 permissions;
// host.Actor has the same values).
const (
	ActorUser      = "user"      // a person's own tap
	ActorAgent     = "agent"     // the assistant
	ActorScheduler = "scheduler" // a scheduled task
)

type actorKey struct{}

// WithActor returns a context under which Run runs tools as actor:
// ActorUser, ActorAgent or ActorScheduler (Host.Call sets it for every
// call). Without it a run is the user's: a person running a tool directly,
// as `harness plugin run` and recorded tests do. A userOnly tool, started
// directly or reached through `call`, refuses any actor but the user; an
// unknown actor is an input error.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// userOnlyErr refuses a userOnly tool to any actor but the user; via names
// the calling tool, or "" for the tool the run started with.
func userOnlyErr(t *plugin.Tool, actor, via string) *Error {
	if !t.UserOnly || actor == "" || actor == ActorUser {
		return nil
	}
	if via != "" {
		return errf(KindInput, "call: %s is userOnly: only a person's own tap can run it, and this run is the %s's (through %s)", t.Name, actor, via)
	}
	return errf(KindInput, "%s is userOnly: only a person's own tap can run it, not the %s", t.Name, actor)
}

// guard runs the tool on a goroutine of its own and returns its outcome,
// or, once ctx is done and the run has not stopped within runGrace, the
// context's error placed at the step that was running.
func (r *run) guard(ctx context.Context, t *plugin.Tool, input any) (any, error) {
	type outcome struct {
		v   any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := r.finish(ctx, t, input)
		done <- outcome{v, err}
	}()
	select {
	case out := <-done:
		return out.v, out.err
	case <-ctx.Done():
	}
	// The run's own error is better placed: give it a moment to arrive.
	grace := time.NewTimer(runGrace)
	defer grace.Stop()
	select {
	case out := <-done:
		return out.v, out.err
	case <-grace.C:
	}
	e := ctxErr(ctx)
	if st := r.current.Load(); st != nil {
		e = place(e, st)
	} else {
		e.File = t.File
	}
	return nil, e
}

// finish runs t and checks its result: the part of Run under the deadline.
func (r *run) finish(ctx context.Context, t *plugin.Tool, input any) (any, error) {
	v, err := r.callTool(ctx, t, input, 0)
	if err != nil {
		return nil, err
	}
	// The size is measured as the JSON is written, without keeping it, charged to the run's
	// budget per value and KB and stopped past expr.MaxText, so a result of shared sub-values
	// (2^n nodes built in n steps) cannot make the check itself run long.
	size, err := expr.JSONSize(v, expr.MaxText, expr.ContextCharger(ctx, r.budget))
	if err != nil && !errors.Is(err, expr.ErrTooLarge) {
		var e *Error
		switch {
		case errors.Is(err, expr.ErrBudget):
			e = &Error{Kind: KindLimit, Msg: "result: " + err.Error(), err: err}
		case ctxErr(ctx) != nil:
			e = ctxErr(ctx)
		default:
			e = &Error{Kind: KindExpression, Msg: "result: " + err.Error(), err: err}
		}
		if t.Return != nil {
			e.File, e.Pos = t.Return.File, t.Return.Pos
		}
		return nil, e
	}
	if err != nil || size > MaxResult {
		got := fmt.Sprintf("%d bytes", size)
		if err != nil {
			got = fmt.Sprintf("more than %d bytes", expr.MaxText)
		}
		e := limitErr("result", got, "1 MB")
		if t.Return != nil {
			e.File, e.Pos = t.Return.File, t.Return.Pos
		}
		return nil, e
	}
	return v, nil
}

// runTimeError is the cause of a run's context when the run time limit
// passes.
type runTimeError struct{ limit time.Duration }

func (e *runTimeError) Error() string {
	return fmt.Sprintf("time: the run took more than %s, the limit is %s", fmtDur(e.limit), fmtDur(e.limit))
}

// fmtDur writes whole seconds as "60 s" and anything else as Go does.
func fmtDur(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return d.String()
}

// run is the state one Run shares with everything it runs, calls included.
type run struct {
	p      *plugin.Plugin
	o      *Options
	clock  func() time.Time
	now    time.Time
	actor  string // who started the run (WithActor); "" is the user
	net    *netClient
	budget *expr.Budget
	steps  atomic.Int64
	// current is the step started last, for placing the time limit's
	// error when the run does not stop by itself.
	current atomic.Pointer[plugin.Step]

	srv *serverRun // set when the run is a server function's (RunServer)

	mu      sync.Mutex
	replyAt map[string]string     // let name → URL of the reply it holds (for extract's url pipe)
	docURL  map[*html.Node]string // parsed reply document → its URL
	lastURL string
}

// tool is the per-tool part of a scope: what every step of one tool
// invocation sees besides its own bindings.
type toolCtx struct {
	t     *plugin.Tool
	input *expr.Object
	lets  map[string]bool // every name some step of t binds
	now   float64
	srv   *serverRun // a server function's secrets and caller; nil for a tool
}

// scope is the variables of one level of a run (docs/DECISIONS.md §4): a tool
// body, an each iteration, a try or catch block. It implements expr.Vars.
// A scope is written only by the goroutine running its steps; children
// read their parents, which do not change while children run.
type scope struct {
	parent *scope
	tc     *toolCtx
	names  map[string]any
}

// child returns a scope over s; its map is made on the first binding.
func (s *scope) child() *scope { return &scope{parent: s, tc: s.tc} }

// Lookup implements expr.Vars.
func (s *scope) Lookup(name string) (any, bool) {
	for c := s; c != nil; c = c.parent {
		if v, ok := c.names[name]; ok {
			return v, true
		}
	}
	tc := s.tc
	switch name {
	case "input":
		return tc.input, true
	case "constants":
		if tc.t.AllConstants == nil {
			return nil, true
		}
		return tc.t.AllConstants, true
	case "now":
		return tc.now, true
	case "secrets", "caller":
		if tc.srv != nil {
			return tc.srv.lookup(name), true
		}
	}
	if tc.t.AllConstants != nil {
		if v, ok := tc.t.AllConstants.Get(name); ok {
			return v, true
		}
	}
	if tc.lets[name] {
		return nil, true // bound only on a path that did not run
	}
	return nil, false
}

func (s *scope) set(name string, v any) {
	if name != "" {
		if s.names == nil {
			s.names = make(map[string]any, 4)
		}
		s.names[name] = v
	}
}

// merge copies the bindings of a finished child block into s.
func (s *scope) merge(c *scope, skip string) {
	for k, v := range c.names {
		if k != skip {
			s.set(k, v)
		}
	}
}

// callTool validates input for t and runs t's steps and return.
func (r *run) callTool(ctx context.Context, t *plugin.Tool, input any, depth int) (any, error) {
	if t.Env == nil {
		return nil, errf(KindInput, "tool %s did not load (the plugin has validation errors)", t.Name)
	}
	in, err := validateInput(ctx, t, t.Env, input, r.budget)
	if err != nil {
		return nil, err
	}
	tc := &toolCtx{t: t, input: in, lets: map[string]bool{}, now: float64(r.now.UnixMilli()), srv: r.srv}
	collectLets(t.Steps, tc.lets)
	s := &scope{tc: tc, names: map[string]any{}}
	if _, err := r.runSteps(ctx, s, t.Steps, depth); err != nil {
		return nil, err
	}
	if t.Return == nil {
		return nil, nil
	}
	v, err := r.eval(ctx, s, t.Return)
	if err != nil {
		return nil, placeErr(ctx, err, t.File, t.Return.Pos, "return")
	}
	return v, nil
}

func collectLets(steps []*plugin.Step, into map[string]bool) {
	for _, st := range steps {
		if st.Let != "" {
			into[st.Let] = true
		}
		for _, b := range [][]*plugin.Step{st.Steps, st.Then, st.Else, st.Try, st.Catch} {
			collectLets(b, into)
		}
	}
}

// runSteps runs steps in order in s and returns the value of the last one.
func (r *run) runSteps(ctx context.Context, s *scope, steps []*plugin.Step, depth int) (any, error) {
	var last any
	for _, st := range steps {
		v, err := r.runStep(ctx, s, st, depth)
		if err != nil {
			return nil, err
		}
		s.set(st.Let, v)
		last = v
	}
	return last, nil
}

// runStep counts and runs one step, placing any error at the step.
func (r *run) runStep(ctx context.Context, s *scope, st *plugin.Step, depth int) (any, error) {
	if e := ctxErr(ctx); e != nil {
		return nil, place(e, st)
	}
	if n := r.steps.Add(1); n > MaxSteps {
		return nil, place(limitErr("steps", fmt.Sprintf("%d steps", n), fmt.Sprint(MaxSteps)), st)
	}
	r.current.Store(st)
	v, err := r.exec(ctx, s, st, depth)
	if err != nil {
		return nil, placeErr(ctx, err, st.File, st.Pos, st.Path)
	}
	return v, nil
}

// place fills in the step's place on an error that has none yet.
func place(e *Error, st *plugin.Step) *Error {
	if e.File == "" {
		e.File, e.Pos, e.Step = st.File, st.Pos, st.Path
	}
	return e
}

// placeErr turns any error from running a step or evaluating a field into
// an *Error placed at file/pos/step unless it already has a place.
func placeErr(ctx context.Context, err error, file string, pos diag.Pos, step string) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.File == "" {
			e.File, e.Pos, e.Step = file, pos, step
		}
		return e
	}
	var ee *plugin.EvalError
	if errors.As(err, &ee) {
		kind := ee.Kind
		if kind == "" {
			kind = KindExpression
		}
		// A cancelled or expired run shows as a limit error from expr; say which.
		if ce := ctxErr(ctx); ce != nil && kind == KindLimit && !errors.Is(err, expr.ErrBudget) {
			ce.File, ce.Pos, ce.Step = ee.File, ee.Pos, step
			return ce
		}
		return &Error{Kind: kind, Msg: ee.Msg, File: ee.File, Pos: ee.Pos, Step: step, err: err}
	}
	if errors.Is(err, expr.ErrBudget) {
		return &Error{Kind: KindLimit, Msg: err.Error(), File: file, Pos: pos, Step: step, err: err}
	}
	if ce := ctxErr(ctx); ce != nil {
		ce.File, ce.Pos, ce.Step = file, pos, step
		return ce
	}
	return &Error{Kind: KindExpression, Msg: err.Error(), File: file, Pos: pos, Step: step, err: err}
}

// eval evaluates an expression field in s.
func (r *run) eval(ctx context.Context, s expr.Vars, f *plugin.ExprField) (any, error) {
	if f == nil {
		return nil, nil
	}
	if f.Expr == nil {
		return f.Eval(ctx, s, r.budget) // the field's own "did not parse" error
	}
	// Evaluate directly and place only a failure: the common path allocates nothing here.
	v, err := f.Expr.Eval(ctx, s, r.budget)
	if err != nil {
		var re *expr.RuntimeError
		if errors.As(err, &re) {
			return nil, &plugin.EvalError{File: f.File, Pos: f.FilePos(re.Pos), Kind: re.Kind, Msg: re.Msg, Err: err}
		}
		return nil, err
	}
	return v, nil
}

// render renders a template field in s.
func (r *run) render(ctx context.Context, s expr.Vars, f *plugin.TemplateField) (any, error) {
	if f == nil {
		return nil, nil
	}
	if f.Tmpl == nil {
		return f.Render(ctx, s, r.budget)
	}
	v, err := f.Tmpl.Render(ctx, s, r.budget)
	if err != nil {
		var re *expr.RuntimeError
		if errors.As(err, &re) {
			return nil, &plugin.EvalError{File: f.File, Pos: f.FilePos(re.Pos), Kind: re.Kind, Msg: re.Msg, Err: err}
		}
		return nil, err
	}
	return v, nil
}

// renderText renders a template field to a string (docs/DECISIONS.md §3).
func (r *run) renderText(ctx context.Context, s expr.Vars, f *plugin.TemplateField) (string, error) {
	v, err := r.render(ctx, s, f)
	if err != nil {
		return "", err
	}
	txt, err := expr.TextOf(v, expr.MaxText, expr.ContextCharger(ctx, r.budget))
	if err != nil {
		e := walkErr(ctx, err, "text")
		if e.Kind != KindLimit {
			e = &Error{Kind: KindExpression, Msg: err.Error(), err: err}
		}
		if e.File == "" {
			e.File, e.Pos = f.File, f.Pos
		}
		return "", e
	}
	return txt, nil
}

// incomplete reports a step that did not decode fully (its plugin has
// validation errors), so that running it fails instead of panicking.
func incomplete(st *plugin.Step) bool {
	switch st.Kind {
	case plugin.StepRequest:
		return st.Request == nil
	case plugin.StepEach:
		return st.Each == nil || (st.Request == nil && st.Value == nil && st.Steps == nil)
	case plugin.StepPaginate:
		return st.Paginate == nil || st.Paginate.Request == nil || st.Paginate.Items == nil
	case plugin.StepExtract:
		return st.Extract == nil || st.Extract.From == nil
	case plugin.StepIf:
		return st.If == nil
	case plugin.StepCheck:
		return st.Check == nil
	case plugin.StepKV:
		return st.Key == nil
	case plugin.StepCache:
		return st.Cache == nil || st.Cache.Key == nil
	}
	return false
}

// exec runs one step by kind.
func (r *run) exec(ctx context.Context, s *scope, st *plugin.Step, depth int) (any, error) {
	if incomplete(st) {
		return nil, errf(KindExpression, "%s step is incomplete (the plugin has validation errors)", st.Kind)
	}
	switch st.Kind {
	case plugin.StepValue:
		return r.eval(ctx, s, st.Value)
	case plugin.StepRequest:
		return r.request(ctx, s, st.Request, st.As, st.Let)
	case plugin.StepEach:
		return r.each(ctx, s, st, depth)
	case plugin.StepPaginate:
		return r.paginate(ctx, s, st)
	case plugin.StepExtract:
		return r.extract(ctx, s, st)
	case plugin.StepIf:
		c, err := r.eval(ctx, s, st.If)
		if err != nil {
			return nil, err
		}
		if expr.Truthy(c) {
			return r.runSteps(ctx, s, st.Then, depth)
		}
		return r.runSteps(ctx, s, st.Else, depth)
	case plugin.StepCheck:
		c, err := r.eval(ctx, s, st.Check)
		if err != nil {
			return nil, err
		}
		if expr.Truthy(c) {
			return c, nil
		}
		msg := "check failed: " + st.Check.Src
		if st.Error != nil {
			if msg, err = r.renderText(ctx, s, st.Error); err != nil {
				return nil, err
			}
		}
		return nil, &Error{Kind: KindCheck, Msg: msg}
	case plugin.StepTry:
		return r.try(ctx, s, st, depth)
	case plugin.StepKV:
		return r.kv(ctx, s, st)
	case plugin.StepCache:
		return r.cache(ctx, s, st, depth)
	case plugin.StepCall:
		return r.call(ctx, s, st, depth)
	case plugin.StepAbility:
		return r.ability(ctx, s, st)
	}
	return nil, errf(KindExpression, "unknown step kind %v", st.Kind)
}

// try runs st.Try in a child scope; on success its bindings become
// visible, on failure they are discarded and st.Catch runs with `error`
// ({ message, kind }) in scope (docs/DECISIONS.md §4). A cancelled or expired
// run is not caught.
func (r *run) try(ctx context.Context, s *scope, st *plugin.Step, depth int) (any, error) {
	c := s.child()
	v, err := r.runSteps(ctx, c, st.Try, depth)
	if err == nil {
		s.merge(c, "")
		return v, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	e := placeErr(ctx, err, st.File, st.Pos, st.Path)
	ev := expr.NewObject(2)
	ev.Set("message", e.Msg)
	ev.Set("kind", e.Kind)
	c = s.child()
	c.set("error", ev)
	v, err = r.runSteps(ctx, c, st.Catch, depth)
	if err != nil {
		return nil, err
	}
	s.merge(c, "error")
	return v, nil
}

// call runs another tool of the same plugin with the run's limits
// (docs/DECISIONS.md §6).
func (r *run) call(ctx context.Context, s *scope, st *plugin.Step, depth int) (any, error) {
	callee := r.p.Tool(st.Call)
	if callee == nil {
		return nil, errf(KindInput, "call: no tool %q in this plugin", st.Call)
	}
	if caller := s.tc.t; !caller.Effect.AtLeast(callee.Effect) {
		return nil, errf(KindInput, "call: %s is a %s tool, stronger than this %s tool", callee.Name, callee.Effect, caller.Effect)
	}
	// A call runs as the caller's actor: it is no way around userOnly.
	if e := userOnlyErr(callee, r.actor, s.tc.t.Name); e != nil {
		return nil, e
	}
	if depth+1 > MaxCallDepth {
		return nil, limitErr("call", fmt.Sprintf("%d nested calls", depth+1), fmt.Sprint(MaxCallDepth))
	}
	in, err := r.eval(ctx, s, st.Input)
	if err != nil {
		return nil, err
	}
	v, err := r.callTool(ctx, callee, in, depth+1)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Kind == KindInput && e.File == callee.File && e.Step == "" {
			// Say which call gave the bad input.
			e.Msg = "call " + callee.Name + ": " + e.Msg
		}
		return nil, err
	}
	return v, nil
}

// ability calls a host ability after checking the group is declared and the
// op's effect is within the tool's (seed 004 "Host abilities").
func (r *run) ability(ctx context.Context, s *scope, st *plugin.Step) (any, error) {
	t := s.tc.t
	if r.srv != nil {
		return r.serverAbility(ctx, s, st)
	}
	op, ok := plugin.LookupAbility(st.Ability)
	if !ok {
		return nil, errf(KindAbility, "ability %s: unknown ability", st.Ability)
	}
	declared := false
	for _, g := range r.p.Manifest.Abilities {
		if g == op.Group {
			declared = true
		}
	}
	if !declared {
		return nil, errf(KindAbility, "ability %s: %s is not in abilities", st.Ability, op.Group)
	}
	if !t.Effect.AtLeast(op.Effect) {
		return nil, errf(KindAbility, "ability %s: the operation is %s, stronger than this %s tool", st.Ability, op.Effect, t.Effect)
	}
	args, err := r.eval(ctx, s, st.Args)
	if err != nil {
		return nil, err
	}
	if r.o.Abilities == nil {
		return nil, errf(KindAbility, "ability %s: this host provides no abilities", st.Ability)
	}
	if e := ctxErr(ctx); e != nil {
		return nil, e // a run past its deadline asks the host for nothing more
	}
	v, err := r.o.Abilities.Call(ctx, AbilityCall{
		Plugin: r.p.Manifest.ID, Tool: t.Name, Group: op.Group, Op: op.Op, Args: args, ToolEffect: t.Effect,
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		if ce := ctxErr(ctx); ce != nil {
			return nil, ce
		}
		return nil, &Error{Kind: KindAbility, Msg: fmt.Sprintf("ability %s: %v", st.Ability, err), err: err}
	}
	v, err = expr.FromGo(v)
	if err != nil {
		return nil, errf(KindAbility, "ability %s: bad result: %v", st.Ability, err)
	}
	return v, nil
}
