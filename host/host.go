package host

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/plugin"
)

// Host keeps the installed plugins and runs their tools for the user, the
// agent and the scheduler (docs/HOST-API.md). It is safe for concurrent use; several
// Hosts (a CLI command and `harness serve`) may share one store.
type Host struct {
	db        *store.DB
	abilities interp.Abilities
	campus    interp.CampusClient
	fetcher   plugin.Fetcher
	transport http.RoundTripper
	now       func() time.Time
	privNet   bool
	loadLimit time.Duration // how long reading one plugin source may take (LoadTimeout)
	remotes   Remotes       // nil: no remote plugins

	builtinList []*Builtin          // WithBuiltins, in order
	builtins    map[string]*Builtin // by id
	formerIDs   map[string]string   // a built-in's former id → its id

	// Statements on every call's path, parsed once.
	stmtTool, stmtAudit *sql.Stmt

	mu        sync.Mutex
	loaded    map[string]*plugin.Plugin // content hash → parsed plugin
	reviews   map[string]*reviewed      // content hash → reviewed files (Install installs exactly these)
	pending   map[string]*Confirmation  // confirmation id → the call waiting for the user
	turns     map[string]*turnEntry     // turnKey → what the turn has read (TurnState)
	drawnDocs map[string]drawnDoc       // NoteDrawn handle → the turn that drew it
}

// Option configures New.
type Option func(*Host)

// WithAbilities sets the host abilities tools reach through `ability:`
// steps (seed 004 "Host abilities"). Without it every ability step fails
// with kind "ability". When a also implements HostBinder, New calls BindHost
// with the new Host, so that the scheduler ability can run tools through
// Host.RunTool.
func WithAbilities(a interp.Abilities) Option { return func(h *Host) { h.abilities = a } }

// WithCampus sets the client that signs `campus:` requests with the user's
// session (seed 004 "What the plugin declares"). Without it campus requests
// fail. When c implements HostBinder, New calls BindHost too.
func WithCampus(c interp.CampusClient) Option { return func(h *Host) { h.campus = c } }

// WithFetcher sets how install links are fetched (plugin.Fetcher); the
// default is plugin.HTTPFetcher (https only). Tests point GitHub links at an
// httptest server with a Fetcher of their own.
func WithFetcher(f plugin.Fetcher) Option { return func(h *Host) { h.fetcher = f } }

// WithTransport sets the transport for plugins' public https requests; the
// default is interp's, which dials public addresses only.
func WithTransport(rt http.RoundTripper) Option { return func(h *Host) { h.transport = rt } }

// WithClock sets the clock (Unix time for schedules, cache expiry, update
// checks and the audit log); the default is time.Now.
func WithClock(now func() time.Time) Option { return func(h *Host) { h.now = now } }

// HostBinder is implemented by an Abilities or CampusClient that needs the
// Host it serves, such as the scheduler ability, which runs tools with
// RunTool as ActorScheduler.
type HostBinder interface {
	BindHost(h *Host)
}

// New returns a Host on db. It does not install anything; call
// InstallOfficial at start-up to install the bundled official plugins.
func New(db *store.DB, opts ...Option) (*Host, error) {
	if db == nil {
		return nil, errors.New("host: no store")
	}
	h := &Host{
		db:        db,
		fetcher:   &plugin.HTTPFetcher{},
		now:       time.Now,
		loadLimit: LoadTimeout,
		loaded:    map[string]*plugin.Plugin{},
		reviews:   map[string]*reviewed{},
		pending:   map[string]*Confirmation{},
		turns:     map[string]*turnEntry{},
		drawnDocs: map[string]drawnDoc{},
	}
	for _, o := range opts {
		o(h)
	}
	var err error
	if h.stmtTool, err = db.SQL.Prepare(`SELECT p.enabled, v.seq, v.hash,
		COALESCE((SELECT group_concat(m.effect || '=' || m.mode) FROM modes m WHERE m.plugin = p.id), ''), p.official
		FROM plugins p JOIN plugin_versions v ON v.plugin = p.id AND v.seq = p.current WHERE p.id = ?`); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if h.stmtAudit, err = db.SQL.Prepare(`INSERT INTO audit (at, actor, plugin, tool, effect, outcome, error, duration_us)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if err := h.registerBuiltins(); err != nil {
		return nil, err
	}
	for _, x := range []any{h.abilities, h.campus} {
		if b, ok := x.(HostBinder); ok {
			b.BindHost(h)
		}
	}
	return h, nil
}

// Store returns the host's database, for packages that keep their own
// tables in it (host abilities, campus sessions).
func (h *Host) Store() *store.DB { return h.db }

// Now returns the host's clock reading.
func (h *Host) Now() time.Time { return h.now() }

// options returns the interpreter options every run of this host uses.
func (h *Host) options() interp.Options {
	return interp.Options{
		Transport:         h.transport,
		Campus:            h.campus,
		Abilities:         h.abilities,
		KV:                h.db.KV(),
		Now:               h.now,
		AllowPrivateAddrs: h.privNet,
	}
}

// RunTool runs one tool of an installed, enabled plugin as actor, with the
// permission rules of Call, and returns its result (an expr value). It is
// the hook the scheduler ability uses (actor ActorScheduler). A call that
// would need the user's confirmation is an error (*Refusal with
// NeedsConfirmation set), since RunTool has no one to ask; use Call to get a
// Confirmation instead.
func (h *Host) RunTool(ctx context.Context, actor Actor, pluginID, tool string, input any) (any, error) {
	res, err := h.Call(ctx, CallRequest{Actor: actor, Plugin: pluginID, Tool: tool, Input: input})
	if err != nil {
		return nil, err
	}
	if res.Confirmation != nil {
		return nil, &Refusal{Plugin: pluginID, Tool: tool, Actor: actor, NeedsConfirmation: true,
			Reason: fmt.Sprintf("%s.%s needs the user's confirmation (%s)", pluginID, tool, res.Confirmation.Reason)}
	}
	return res.Value, nil
}
