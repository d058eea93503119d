package host

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

// NotFound is the error for an unknown plugin, tool, data source or
// confirmation.
type NotFound struct {
	What string
	// Plugin, when set, is the id of the plugin that is not installed (the error is "no plugin
	// … is installed"), for front ends that say so in another language.
	Plugin string
}

// Error says what was not found.
func (e *NotFound) Error() string { return "host: " + e.What }

// Conflict is the error for a request that does not fit the current state:
// installing an id that is installed, accepting an update that is not held,
// rolling back without a previous version, installing content that differs
// from what was reviewed.
type Conflict struct {
	Msg string
	// Reason, when set, names the conflict for front ends that say it in another language:
	// ConflictNoPrevious, ConflictNoNewer or ConflictNoHeld, with Plugin, Current (the version in
	// use) and Newer (the version Rollforward restores, or "").
	Reason, Plugin, Current, Newer string
}

// Reasons of a Conflict.
const (
	ConflictNoPrevious = "no-previous" // Rollback: nothing older is kept
	ConflictNoNewer    = "no-newer"    // Rollforward: no version a rollback left
	ConflictNoHeld     = "no-held"     // AcceptUpdate, HeldReview: no update waits for review
)

// Error says what conflicts.
func (e *Conflict) Error() string { return "host: " + e.Msg }

// Unreadable is the error for a plugin source that cannot be read: a
// malformed install link, a server that does not answer or answers with an
// error, a missing folder or PLUGIN.md, files over the size limits. It is
// the requester's to fix, not a fault of the host.
type Unreadable struct {
	Source string
	Err    error
}

// Error names the source and what went wrong.
func (e *Unreadable) Error() string { return fmt.Sprintf("host: %s: %v", e.Source, e.Err) }

// Unwrap returns the loader's error.
func (e *Unreadable) Unwrap() error { return e.Err }

// Invalid is the error for a plugin that does not validate; Diagnostics
// holds its errors (docs/DECISIONS.md §7).
type Invalid struct {
	Source      string
	Diagnostics []diag.Diagnostic
}

// Error lists the first diagnostics, one per line, as FILE:LINE:COL:
// message; for a local folder FILE includes the folder.
func (e *Invalid) Error() string {
	s := fmt.Sprintf("host: %s does not validate:", e.Source)
	for i, d := range e.Diagnostics {
		if i == 10 {
			s += fmt.Sprintf("\n  … and %d more", len(e.Diagnostics)-10)
			break
		}
		if filepath.IsAbs(e.Source) {
			d.File = filepath.Join(e.Source, d.File)
		}
		s += "\n  " + d.String()
	}
	return s
}

// ToolDecl is what a tool declares, as kept per version for update checks.
type ToolDecl struct {
	Name      string        `json:"name"`
	Effect    plugin.Effect `json:"effect"`
	UserOnly  bool          `json:"userOnly,omitempty"`
	Untrusted bool          `json:"untrusted,omitempty"`
	// CallsUserOnly lists, sorted, the userOnly tools this tool (when not
	// userOnly itself) reaches through `call` steps, directly or through
	// other tools; a new entry makes an update wider (Widened).
	CallsUserOnly []string `json:"callsUserOnly,omitempty"`
}

// Declarations are what a plugin may reach and do (seed 004 "What the
// plugin declares"): the reach the review sheet shows and the update rules
// compare.
type Declarations struct {
	Campus    []string   `json:"campus"`
	Network   []string   `json:"network"`
	Abilities []string   `json:"abilities"`
	Cloud     []string   `json:"cloud,omitempty"`
	Remote    string     `json:"remote,omitempty"`
	Tools     []ToolDecl `json:"tools"`
}

// DeclarationsOf returns the declarations of a loaded plugin.
func DeclarationsOf(p *plugin.Plugin) Declarations {
	m := p.Manifest
	d := Declarations{
		Campus:    nonNil(m.Campus),
		Network:   nonNil(m.Network),
		Abilities: nonNil(m.Abilities),
		Tools:     []ToolDecl{},
	}
	if m.Cloud != nil {
		d.Cloud = m.Cloud.Uses
	}
	if m.Remote != nil {
		d.Remote = m.Remote.MCP
	}
	for _, t := range p.Tools {
		td := ToolDecl{Name: t.Name, Effect: t.Effect, UserOnly: t.UserOnly, Untrusted: t.Untrusted}
		if !t.UserOnly {
			td.CallsUserOnly = userOnlyReach(p, t)
		}
		d.Tools = append(d.Tools, td)
	}
	return d
}

// userOnlyReach lists, sorted, the userOnly tools t reaches through call
// steps, following calls through every tool on the way (a cycle, which the
// validator refuses, is followed once).
func userOnlyReach(p *plugin.Plugin, t *plugin.Tool) []string {
	seen := map[string]bool{t.Name: true}
	var out []string
	var walk func(steps []*plugin.Step)
	walk = func(steps []*plugin.Step) {
		for _, st := range steps {
			if st.Kind == plugin.StepCall && !seen[st.Call] {
				seen[st.Call] = true
				if c := p.Tool(st.Call); c != nil {
					if c.UserOnly {
						out = append(out, c.Name)
					}
					walk(c.Steps)
				}
			}
			for _, b := range [][]*plugin.Step{st.Steps, st.Then, st.Else, st.Try, st.Catch} {
				walk(b)
			}
		}
	}
	walk(t.Steps)
	slices.Sort(out)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// Installed is one installed plugin as List and Show report it.
type Installed struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// NameEn is the manifest's i18n.en name, "" when it has none (then Name is for every
	// language).
	NameEn string `json:"nameEn,omitempty"`
	// Kind is "" for a PLUGIN.md document, KindBuiltin for a built-in
	// plugin (Go in the app), KindRemote for a remote one (no version, hash,
	// updates or modes of its own here).
	Kind        string    `json:"kind,omitempty"`
	Version     string    `json:"version"`
	Hash        string    `json:"hash"`
	Source      string    `json:"source"`
	Official    bool      `json:"official"`
	Enabled     bool      `json:"enabled"`
	AutoUpdate  bool      `json:"autoUpdate"`
	InstalledAt time.Time `json:"installedAt"`
	CheckedAt   time.Time `json:"checkedAt,omitzero"`
	// Note is the last update's note, e.g. "updated to 1.3.0".
	Note string `json:"note,omitempty"`
	// Previous is the version rollback restores, "" when there is none.
	Previous string `json:"previous,omitempty"`
	// Forward is the newer version a rollback left, which Rollforward restores; "" when none.
	Forward string `json:"forward,omitempty"`
	// Held is an update waiting for the user (its declarations are wider).
	Held *HeldUpdate `json:"held,omitempty"`
	// Declarations of the current version.
	Declarations Declarations `json:"declarations"`
	// Problem says why the stored version cannot run (it no longer
	// validates, e.g. after an update of the host); "" when it can.
	Problem string `json:"problem,omitempty"`
}

// HeldUpdate is an update that waits for the user's review: its version,
// hash and what it widens.
type HeldUpdate struct {
	Version string   `json:"version"`
	Hash    string   `json:"hash"`
	Widened []string `json:"widened"`
	// Widenings is Widened as data (see Widening).
	Widenings []Widening `json:"-"`
}

// record is a plugins row.
type record struct {
	id, source, note              string
	official, enabled, autoUpdate bool
	current                       int
	previous, held, forward       sql.NullInt64
	checkedAt, installedAt        int64
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (h *Host) record(ctx context.Context, q querier, id string) (*record, error) {
	var r record
	err := q.QueryRowContext(ctx, `SELECT id, source, note, official, enabled, auto_update, current, previous, held, forward, checked_at, installed_at
		FROM plugins WHERE id = ?`, id).Scan(&r.id, &r.source, &r.note, &r.official, &r.enabled, &r.autoUpdate,
		&r.current, &r.previous, &r.held, &r.forward, &r.checkedAt, &r.installedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFound{What: fmt.Sprintf("no plugin %q is installed", id), Plugin: id}
	}
	if err != nil {
		return nil, fmt.Errorf("host: plugin %s: %w", id, err)
	}
	return &r, nil
}

// version is a plugin_versions row.
type version struct {
	seq     int
	version string
	hash    string
	decl    Declarations
}

func (h *Host) version(ctx context.Context, q querier, id string, seq int) (*version, error) {
	var (
		v    = version{seq: seq}
		decl string
	)
	err := q.QueryRowContext(ctx, `SELECT version, hash, declarations FROM plugin_versions WHERE plugin = ? AND seq = ?`,
		id, seq).Scan(&v.version, &v.hash, &decl)
	if err != nil {
		return nil, fmt.Errorf("host: plugin %s version #%d: %w", id, seq, err)
	}
	if err := json.Unmarshal([]byte(decl), &v.decl); err != nil {
		return nil, fmt.Errorf("host: plugin %s version #%d: declarations: %w", id, seq, err)
	}
	return &v, nil
}

func (h *Host) files(ctx context.Context, q querier, id string, seq int) (map[string][]byte, error) {
	rows, err := q.QueryContext(ctx, `SELECT path, content FROM plugin_files WHERE plugin = ? AND seq = ?`, id, seq)
	if err != nil {
		return nil, fmt.Errorf("host: files of %s #%d: %w", id, seq, err)
	}
	defer rows.Close()
	files := map[string][]byte{}
	for rows.Next() {
		var p string
		var b []byte
		if err := rows.Scan(&p, &b); err != nil {
			return nil, err
		}
		files[p] = b
	}
	return files, rows.Err()
}

// Plugin returns the current version of an installed plugin, parsed. Parsed
// plugins are cached by content hash, so a call costs one small query.
func (h *Host) Plugin(ctx context.Context, id string) (*plugin.Plugin, error) {
	var (
		hash string
		seq  int
	)
	err := h.db.SQL.QueryRowContext(ctx, `SELECT v.hash, v.seq FROM plugins p JOIN plugin_versions v
		ON v.plugin = p.id AND v.seq = p.current WHERE p.id = ?`, id).Scan(&hash, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFound{What: fmt.Sprintf("no plugin %q is installed", id), Plugin: id}
	}
	if err != nil {
		return nil, fmt.Errorf("host: plugin %s: %w", id, err)
	}
	return h.parsed(ctx, id, seq, hash)
}

func (h *Host) parsed(ctx context.Context, id string, seq int, hash string) (*plugin.Plugin, error) {
	h.mu.Lock()
	p := h.loaded[hash]
	h.mu.Unlock()
	if p != nil {
		return p, nil
	}
	if b := h.builtins[id]; b != nil {
		return h.builtinParsed(b, hash)
	}
	files, err := h.files(ctx, h.db.SQL, id, seq)
	if err != nil {
		return nil, err
	}
	p, diags, err := plugin.LoadFiles(ctx, files)
	if err != nil {
		return nil, fmt.Errorf("host: plugin %s: %w", id, err)
	}
	if diag.HasErrors(diags) {
		return nil, &Invalid{Source: id, Diagnostics: errorsOnly(diags)}
	}
	if p.Hash != hash {
		return nil, fmt.Errorf("host: plugin %s: stored files hash to %s, the database says %s", id, p.Hash, hash)
	}
	// The install link is the document's name for a Cloud provider: a server function runs the
	// version (link and hash) the person consented to (seed 003 "服务端函数").
	var source string
	if err := h.db.SQL.QueryRowContext(ctx, `SELECT source FROM plugins WHERE id = ?`, id).Scan(&source); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("host: plugin %s: %w", id, err)
	}
	p.Source = source
	h.mu.Lock()
	h.loaded[hash] = p
	h.mu.Unlock()
	return p, nil
}

func errorsOnly(ds []diag.Diagnostic) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, d := range ds {
		if d.Severity == diag.Error {
			out = append(out, d)
		}
	}
	return out
}

// List returns every installed plugin, by id, then the remote plugins
// (WithRemotes), by id.
func (h *Host) List(ctx context.Context) ([]*Installed, error) {
	rows, err := h.db.SQL.QueryContext(ctx, `SELECT id FROM plugins ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("host: list: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	out := make([]*Installed, 0, len(ids))
	for _, id := range ids {
		in, err := h.Show(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	if h.remotes != nil {
		remote, err := h.remotes.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range remote {
			out = append(out, installedRemote(p))
		}
	}
	return out, nil
}

// Show returns one installed plugin, or remote plugin.
func (h *Host) Show(ctx context.Context, id string) (*Installed, error) {
	r, err := h.record(ctx, h.db.SQL, id)
	if isNotFound(err) && h.remotes != nil {
		if p, rerr := h.remotes.Get(ctx, id); rerr == nil {
			return installedRemote(p), nil
		}
	}
	if err != nil {
		return nil, err
	}
	cur, err := h.version(ctx, h.db.SQL, id, r.current)
	if err != nil {
		return nil, err
	}
	name, nameEn, problem := id, "", ""
	if p, err := h.parsed(ctx, id, cur.seq, cur.hash); err == nil {
		name = p.Manifest.Name
		if p.Manifest.I18n != nil && p.Manifest.I18n.En != nil {
			nameEn = p.Manifest.I18n.En.Name
		}
	} else {
		problem = err.Error()
	}
	in := &Installed{
		ID: id, Name: name, NameEn: nameEn, Problem: problem, Version: cur.version, Hash: cur.hash, Source: r.source,
		Official: r.official, Enabled: r.enabled, AutoUpdate: r.autoUpdate,
		InstalledAt: time.UnixMilli(r.installedAt).UTC(), Note: r.note, Declarations: cur.decl,
	}
	if h.builtins[id] != nil {
		in.Kind = KindBuiltin
	}
	if r.checkedAt > 0 {
		in.CheckedAt = time.UnixMilli(r.checkedAt).UTC()
	}
	if r.previous.Valid {
		pv, err := h.version(ctx, h.db.SQL, id, int(r.previous.Int64))
		if err != nil {
			return nil, err
		}
		in.Previous = pv.version
	}
	if r.forward.Valid {
		fv, err := h.version(ctx, h.db.SQL, id, int(r.forward.Int64))
		if err != nil {
			return nil, err
		}
		in.Forward = fv.version
	}
	if r.held.Valid {
		hv, err := h.version(ctx, h.db.SQL, id, int(r.held.Int64))
		if err != nil {
			return nil, err
		}
		in.Held = &HeldUpdate{Version: hv.version, Hash: hv.hash, Widened: Widened(cur.decl, hv.decl), Widenings: Widenings(cur.decl, hv.decl)}
	}
	return in, nil
}

// SetEnabled enables or disables an installed plugin. A disabled plugin's
// tools cannot run and are not offered to the agent.
func (h *Host) SetEnabled(ctx context.Context, id string, on bool) error {
	err := h.setFlag(ctx, id, "enabled", on)
	if isNotFound(err) && h.remotes != nil {
		if rerr := h.remotes.SetEnabled(ctx, id, on); !isNotFound(rerr) {
			return rerr
		}
	}
	return err
}

// SetAutoUpdate switches automatic updates (at serve start) on or off for
// one plugin (seed 004 "Updates": "Users can turn off automatic updates").
// An explicit Update still checks.
func (h *Host) SetAutoUpdate(ctx context.Context, id string, on bool) error {
	return h.setFlag(ctx, id, "auto_update", on)
}

func (h *Host) setFlag(ctx context.Context, id, col string, on bool) error {
	res, err := h.db.SQL.ExecContext(ctx, `UPDATE plugins SET `+col+` = ? WHERE id = ?`, on, id)
	if err != nil {
		return fmt.Errorf("host: %s %s: %w", col, id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &NotFound{What: fmt.Sprintf("no plugin %q is installed", id), Plugin: id}
	}
	return nil
}

// Remove uninstalls a plugin: RemoveWith keeping what it stored with the Cloud provider.
func (h *Host) Remove(ctx context.Context, id string) error {
	_, err := h.RemoveWith(ctx, id, RemoveOptions{})
	return err
}

// RemoveOptions are RemoveWith's options. DeleteCloudData also deletes every store key the
// plugin kept with the current Cloud provider (the provider must answer).
type RemoveOptions struct {
	DeleteCloudData bool `json:"deleteCloudData"`
}

// The CloudData of a Removed.
const (
	CloudDataNone    = "none"    // the plugin declares no Cloud use
	CloudDataDeleted = "deleted" // its store keys with the current provider were deleted
	CloudDataKept    = "kept"    // they stay on the provider, deleted before a later consent
)

// Removed is what RemoveWith did: the plugin id, CloudData (CloudDataNone, CloudDataDeleted
// or CloudDataKept) and Closing, how many of its Cloud channels the provider has not
// confirmed closed yet (their keys are forgotten; the host closes them when it can).
type Removed struct {
	ID        string `json:"removed"`
	CloudData string `json:"cloudData"`
	Closing   int    `json:"closingChannels"`
}

// RemoveWith uninstalls a plugin: its versions, files, modes, KV entries and cached data
// sources, and its Cloud consent, local mirror and channel keys (its channels are closed on
// the provider, cloud.Manager.ForgetPlugin), so an install under the same id later starts
// unconsented. What it stored with the provider is deleted with opts.DeleteCloudData (with
// the provider unreachable it fails with cloud.CodeOffline and removes nothing); otherwise it
// is kept there and deleted before a plugin under the same id is next allowed to use that
// provider. The audit log keeps its past calls. A remote plugin is removed with its token.
func (h *Host) RemoveWith(ctx context.Context, id string, opts RemoveOptions) (*Removed, error) {
	r, err := h.record(ctx, h.db.SQL, id)
	if isNotFound(err) && h.remotes != nil {
		if rerr := h.remotes.Remove(ctx, id); !isNotFound(rerr) {
			if rerr != nil {
				return nil, rerr
			}
			return &Removed{ID: id, CloudData: CloudDataNone}, nil
		}
	}
	if err != nil {
		return nil, err
	}
	out := &Removed{ID: id, CloudData: CloudDataNone}
	if p, perr := h.Plugin(ctx, id); perr != nil || cloud.DeclOfPlugin(p) != nil {
		out.CloudData = CloudDataKept
		if opts.DeleteCloudData {
			out.CloudData = CloudDataDeleted
		}
	}
	// Cloud first: a failure leaves the plugin installed; a removal that fails after it leaves
	// it installed but unconsented, never removed with its consent kept.
	m := cloud.For(h.db)
	if err := m.ForgetPlugin(ctx, id, cloud.RemoveOptions{DeleteData: opts.DeleteCloudData}); err != nil {
		return nil, err
	}
	closing, err := m.Closing(ctx, id)
	if err != nil {
		return nil, err
	}
	out.Closing = len(closing)
	err = h.db.Tx(ctx, func(tx *sql.Tx) error {
		if r.official {
			// The user removed it: InstallOfficial must not bring it back.
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO settings (key, value) VALUES (?, '1')`, removedKey(id)); err != nil {
				return fmt.Errorf("host: remove %s: %w", id, err)
			}
		}
		for _, q := range []string{
			`DELETE FROM plugins WHERE id = ?`, // cascades to versions, files, modes
			`DELETE FROM datasource_cache WHERE plugin = ?`,
			`DELETE FROM kv WHERE plugin = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return fmt.Errorf("host: remove %s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
