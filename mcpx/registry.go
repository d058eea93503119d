package mcpx

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/host/vault"
	"github.com/pkuinfo/harness/plugin"
)

func init() {
	// Version 300: the first of the "later packages" range (host/store).
	store.Register(store.Migration{Version: 300, Name: "remote plugins (mcpx)", SQL: `
CREATE TABLE mcpx_remote_plugins (
	id           TEXT PRIMARY KEY,
	url          TEXT NOT NULL,
	token        TEXT NOT NULL DEFAULT '',
	server       TEXT NOT NULL,
	modes        TEXT NOT NULL,
	enabled      INTEGER NOT NULL DEFAULT 1,
	installed_at INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL
)`})
}

// RemotePlugin is one installed remote plugin: the server as last
// described, its permission modes and whether it is enabled. The token is
// kept by the Registry and never serialised, so it cannot reach the model.
type RemotePlugin struct {
	ID       string                      `json:"id"`
	Server   RemoteServer                `json:"server"`
	Modes    map[plugin.Effect]host.Mode `json:"modes"`
	Enabled  bool                        `json:"enabled"`
	HasToken bool                        `json:"hasToken"`
	// Problem says why the plugin cannot be used as stored (List only: a
	// token that does not open); "" when it can.
	Problem     string    `json:"problem,omitempty"`
	InstalledAt time.Time `json:"installedAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	token       string
}

// Client returns a RemoteClient for the plugin's server with its token.
func (p *RemotePlugin) Client() *RemoteClient {
	return &RemoteClient{URL: p.Server.URL, Token: p.token}
}

// Tool returns the plugin's tool named name, or nil.
func (p *RemotePlugin) Tool(name string) *RemoteTool {
	for i := range p.Server.Tools {
		if p.Server.Tools[i].Name == name {
			return &p.Server.Tools[i]
		}
	}
	return nil
}

// Registry keeps the installed remote plugins in the host's database
// (table mcpx_remote_plugins, migration 300). It is safe for concurrent use.
type Registry struct {
	db  *store.DB
	now func() time.Time
}

// NewRegistry returns the Registry on db.
func NewRegistry(db *store.DB) *Registry { return &Registry{db: db, now: time.Now} }

// RemoteModes are the starting modes of a remote plugin: a Community
// plugin's (host.DefaultModes): read auto, everything else ask.
func RemoteModes() map[plugin.Effect]host.Mode {
	return host.DefaultModes(&plugin.Manifest{}, false)
}

// Add installs srv as plugin srv.PluginID with token, which is kept sealed
// with the data directory's vault.Box (label "mcpx_remote_plugins/<id>").
// An id that is already installed, as a remote plugin or in the host, is a
// *host.Conflict.
func (r *Registry) Add(ctx context.Context, srv *RemoteServer, token string) (*RemotePlugin, error) {
	b, err := json.Marshal(srv)
	if err != nil {
		return nil, err
	}
	if token != "" {
		if token, err = r.seal(srv.PluginID, token); err != nil {
			return nil, err
		}
	}
	modes, _ := json.Marshal(modesJSON(RemoteModes()))
	now := r.now().UnixMilli()
	err = r.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM mcpx_remote_plugins WHERE id = ?) + (SELECT COUNT(*) FROM plugins WHERE id = ?)`,
			srv.PluginID, srv.PluginID).Scan(&n); err != nil {
			return fmt.Errorf("mcpx: add %s: %w", srv.PluginID, err)
		}
		if n > 0 {
			return &host.Conflict{Msg: fmt.Sprintf("plugin %s is already installed; use plugins update-remote %s", srv.PluginID, srv.PluginID)}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mcpx_remote_plugins (id, url, token, server, modes, enabled, installed_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)`,
			srv.PluginID, srv.URL, token, string(b), string(modes), now, now)
		if err != nil {
			return fmt.Errorf("mcpx: add %s: %w", srv.PluginID, err)
		}
		return store.BumpChanges(ctx, tx) // the tool list changed
	})
	if err != nil {
		return nil, err
	}
	return r.Get(ctx, srv.PluginID)
}

// Replace stores a newly described server for an installed plugin (the
// tool list refreshed by update-remote). The id must not change. Replace
// does not judge the new tools: a caller that must not let a tool run
// without asking asks Refresh first.
func (r *Registry) Replace(ctx context.Context, id string, srv *RemoteServer) error {
	if srv.PluginID != id {
		return &host.Conflict{Msg: fmt.Sprintf("the server at %s now calls itself %s, not %s; remove and add it again", srv.URL, srv.PluginID, id)}
	}
	b, err := json.Marshal(srv)
	if err != nil {
		return err
	}
	return r.exec(ctx, id, `UPDATE mcpx_remote_plugins SET server = ?, updated_at = ? WHERE id = ?`, string(b), r.now().UnixMilli(), id)
}

// SetMode sets the permission mode of one effect of a remote plugin.
func (r *Registry) SetMode(ctx context.Context, id string, e plugin.Effect, m host.Mode) error {
	p, err := r.Get(ctx, id)
	if err != nil {
		return err
	}
	p.Modes[e] = m
	b, _ := json.Marshal(modesJSON(p.Modes))
	return r.exec(ctx, id, `UPDATE mcpx_remote_plugins SET modes = ? WHERE id = ?`, string(b), id)
}

// SetEnabled enables or disables a remote plugin.
func (r *Registry) SetEnabled(ctx context.Context, id string, on bool) error {
	return r.exec(ctx, id, `UPDATE mcpx_remote_plugins SET enabled = ? WHERE id = ?`, on, id)
}

// Remove uninstalls a remote plugin and forgets its token.
func (r *Registry) Remove(ctx context.Context, id string) error {
	return r.exec(ctx, id, `DELETE FROM mcpx_remote_plugins WHERE id = ?`, id)
}

// exec runs one change to a remote plugin's row and bumps the host's
// change counter with it (store.BumpChanges), so cached tool lists follow.
func (r *Registry) exec(ctx context.Context, id, q string, args ...any) error {
	return r.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("mcpx: %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &host.NotFound{What: fmt.Sprintf("no remote plugin %q is installed", id)}
		}
		return store.BumpChanges(ctx, tx)
	})
}

// Get returns one installed remote plugin; an unknown id is *host.NotFound.
func (r *Registry) Get(ctx context.Context, id string) (*RemotePlugin, error) {
	row := r.db.SQL.QueryRowContext(ctx, `SELECT id, url, token, server, modes, enabled, installed_at, updated_at FROM mcpx_remote_plugins WHERE id = ?`, id)
	p, err := scanRemote(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &host.NotFound{What: fmt.Sprintf("no remote plugin %q is installed", id)}
	}
	if err != nil {
		return nil, err
	}
	return p, r.unseal(p)
}

// List returns every installed remote plugin, by id.
func (r *Registry) List(ctx context.Context) ([]*RemotePlugin, error) {
	rows, err := r.db.SQL.QueryContext(ctx, `SELECT id, url, token, server, modes, enabled, installed_at, updated_at FROM mcpx_remote_plugins ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("mcpx: list remote plugins: %w", err)
	}
	defer rows.Close()
	var out []*RemotePlugin
	for rows.Next() {
		p, err := scanRemote(rows)
		if err != nil {
			return nil, err
		}
		// One token that does not open must not hide every remote plugin: the
		// plugin is listed without it, saying why.
		if err := r.unseal(p); err != nil {
			p.token, p.Problem = "", err.Error()
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// sealedPrefix starts a token column sealed by the vault; a token without
// it was stored in plain text by an older harness and is used as it is.
const sealedPrefix = "sealed:"

func tokenLabel(id string) string { return "mcpx_remote_plugins/" + id }

func (r *Registry) seal(id, token string) (string, error) {
	box, err := vault.Open(r.db.Dir(), vault.DefaultKeyring())
	if err != nil {
		return "", fmt.Errorf("mcpx: keeping the token of %s: %w", id, err)
	}
	return sealedPrefix + base64.StdEncoding.EncodeToString(box.Seal(tokenLabel(id), []byte(token))), nil
}

// unseal opens p's sealed token in place.
func (r *Registry) unseal(p *RemotePlugin) error {
	enc, ok := strings.CutPrefix(p.token, sealedPrefix)
	if !ok {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	var plain []byte
	if err == nil {
		var box *vault.Box
		if box, err = vault.Open(r.db.Dir(), vault.DefaultKeyring()); err == nil {
			plain, err = box.Open(tokenLabel(p.ID), b)
		}
	}
	if err != nil {
		return fmt.Errorf("mcpx: the token of remote plugin %s does not open: %w (remove it and add it again)", p.ID, err)
	}
	p.token = string(plain)
	return nil
}

func scanRemote(row interface{ Scan(...any) error }) (*RemotePlugin, error) {
	var (
		p                RemotePlugin
		url, srv, modes  string
		installed, updat int64
	)
	if err := row.Scan(&p.ID, &url, &p.token, &srv, &modes, &p.Enabled, &installed, &updat); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(srv), &p.Server); err != nil {
		return nil, fmt.Errorf("mcpx: remote plugin %s: %w", p.ID, err)
	}
	p.Server.URL = url
	p.HasToken = p.token != ""
	p.InstalledAt, p.UpdatedAt = time.UnixMilli(installed).UTC(), time.UnixMilli(updat).UTC()
	var m map[string]string
	if err := json.Unmarshal([]byte(modes), &m); err != nil {
		return nil, fmt.Errorf("mcpx: remote plugin %s: modes: %w", p.ID, err)
	}
	p.Modes = map[plugin.Effect]host.Mode{}
	for _, e := range plugin.Effects {
		p.Modes[e] = host.ModeAsk // a lost row never opens a door
		if s, ok := m[e.String()]; ok {
			if mode, err := host.ParseMode(s); err == nil {
				p.Modes[e] = mode
			}
		}
	}
	return &p, nil
}

func modesJSON(m map[plugin.Effect]host.Mode) map[string]string {
	out := map[string]string{}
	for e, mode := range m {
		out[e.String()] = string(mode)
	}
	return out
}
