package abilities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// Plugins gives the installed plugin with an id; *host.Host implements it.
// Set uses it to check that a plugin declares an ability's group, that
// campusPage.open and verify.treehole reach only declared campus services,
// and that a schedule names one of the plugin's tools.
type Plugins interface {
	Plugin(ctx context.Context, id string) (*plugin.Plugin, error)
}

// Set is the host's interp.Abilities. Build it with New. It is safe for
// concurrent use.
type Set struct {
	db      *store.DB
	campus  interp.CampusClient
	plugins Plugins
	now     func() time.Time
	sched   *Scheduler
	ops     map[string]handler
}

// handler runs one operation. args is nil or an *expr.Object; the result is
// an expr value. Errors are plain; Call adds "ability GROUP.OP:".
type handler func(ctx context.Context, c *call) (any, error)

// call is one operation call with its decoded context.
type call struct {
	interp.AbilityCall
	args *args
	p    *plugin.Plugin   // nil when the Set has no Plugins
	man  *plugin.Manifest // p.Manifest, or nil
}

// Option configures New.
type Option func(*Set)

// WithCampus sets the campus client verify.treehole sends Treehole
// requests through (normally a *campus.Client); without it verify fails.
func WithCampus(c interp.CampusClient) Option { return func(s *Set) { s.campus = c } }

// WithPlugins sets where declarations are read from (normally the Host,
// which BindHost sets too).
func WithPlugins(p Plugins) Option { return func(s *Set) { s.plugins = p } }

// WithClock sets the clock (to-do times, schedules, TOTP codes); the
// default is time.Now.
func WithClock(now func() time.Time) Option { return func(s *Set) { s.now = now } }

// New returns the abilities on db. db carries the tables of migrations
// 100–199, applied by store.Open.
func New(db *store.DB, opts ...Option) *Set {
	s := &Set{db: db, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	s.sched = &Scheduler{set: s}
	s.ops = map[string]handler{
		"verify.treehole":         s.verifyTreehole,
		"verify.treeholeSendCode": s.verifySendCode,
		"otp.code":                s.otpCode,
		"todos.list":              s.todosList,
		"todos.add":               s.todosAdd,
		"todos.update":            s.todosUpdate,
		"todos.setDone":           s.todosSetDone,
		"todos.remove":            s.todosRemove,
		"timetable.get":           s.timetableGet,
		"timetable.upsert":        s.timetableUpsert,
		"timetable.remove":        s.timetableRemove,
		"scheduler.list":          s.sched.list,
		"scheduler.create":        s.sched.create,
		"scheduler.update":        s.sched.update,
		"scheduler.remove":        s.sched.remove,
		"browser.open":            s.browserOpen,
		"campusPage.open":         s.campusPageOpen,
		"sms.awaitCode":           s.smsAwaitCode,
		"files.pick":              s.filesPick,
		"crypto.sha256":           s.cryptoSHA256,
		"cloud.call":              s.cloudCall,
	}
	return s
}

// Scheduler returns the scheduler behind the scheduler group, for the
// `harness serve` loop (Scheduler.RunDue).
func (s *Set) Scheduler() *Scheduler { return s.sched }

// Call implements interp.Abilities. It refuses, with an *interp.Error of
// kind "ability" naming the operation: an operation not in the catalogue;
// a group the plugin does not declare; an operation whose effect is
// stronger than c.ToolEffect. Then it runs the operation; its errors are
// kind "ability" too.
func (s *Set) Call(ctx context.Context, c interp.AbilityCall) (any, error) {
	name := c.Group + "." + c.Op
	op, ok := plugin.LookupAbility(name)
	h := s.ops[name]
	if !ok || h == nil {
		return nil, abilityErr(name, "unknown ability (see the host abilities table)")
	}
	if !c.ToolEffect.AtLeast(op.Effect) {
		return nil, abilityErr(name, fmt.Sprintf("the operation is %s, stronger than this %s tool", op.Effect, c.ToolEffect))
	}
	cl := &call{AbilityCall: c}
	if s.plugins != nil {
		p, err := s.plugins.Plugin(ctx, c.Plugin)
		if err != nil {
			return nil, abilityErr(name, err.Error())
		}
		cl.p, cl.man = p, p.Manifest
		if !slices.Contains(p.Manifest.Abilities, c.Group) {
			return nil, abilityErr(name, fmt.Sprintf("%s is not in the abilities of plugin %s", c.Group, c.Plugin))
		}
	}
	a, err := newArgs(c.Args)
	if err != nil {
		return nil, abilityErr(name, err.Error())
	}
	cl.args = a
	v, err := h(ctx, cl)
	if err != nil {
		var ie *interp.Error
		if errors.As(err, &ie) {
			return nil, ie
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A Cloud refusal stays reachable (errors.As): it keeps the consent request the faces
		// turn into the consent panel. Other errors are the ability's message only.
		if ce := (*cloud.Error)(nil); errors.As(err, &ce) {
			return nil, interp.Wrap(interp.KindAbility, "ability "+name+": "+err.Error(), err)
		}
		return nil, abilityErr(name, err.Error())
	}
	return v, nil
}

func abilityErr(name, msg string) *interp.Error {
	return &interp.Error{Kind: interp.KindAbility, Msg: "ability " + name + ": " + msg}
}

// owns reports whether the caller is the app's built-in plugin of the same
// name as group (source "builtin:GROUP", which no document can have): the
// user's own list of that group, which changes every entry in it.
func (c *call) owns(group string) bool {
	return c.p != nil && c.Plugin == group && c.p.Source == "builtin:"+group
}

// obj builds an ordered object from key, value pairs.
func obj(kv ...any) *expr.Object {
	o := expr.NewObject(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}
