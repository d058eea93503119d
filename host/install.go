package host

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/pkuinfo/harness/plugin"
	"github.com/pkuinfo/harness/plugins"
)

// Install installs the plugin whose review had content hash hash: exactly
// the files that were reviewed, nothing else (docs/HOST-API.md "Plugins"). When the
// review is no longer held in memory (another process reviewed it, or the
// host restarted) and src is given, src is fetched again and installed only
// if its hash is still hash; otherwise the error is a *Conflict saying the
// content changed since the review. Installing an id that is already
// installed is a *Conflict (use Update). Permission modes start from
// DefaultModes.
func (h *Host) Install(ctx context.Context, src, hash string) (*Installed, error) {
	h.mu.Lock()
	r := h.reviews[hash]
	h.mu.Unlock()
	if r == nil {
		if src == "" {
			return nil, &Conflict{Msg: fmt.Sprintf("nothing with hash %s was reviewed; review the plugin first", hash)}
		}
		var err error
		if r, err = h.fetch(ctx, src); err != nil {
			return nil, err
		}
		if r.p.Hash != hash {
			return nil, &Conflict{Msg: fmt.Sprintf("%s changed since it was reviewed (reviewed %s, now %s); review it again", src, hash, r.p.Hash)}
		}
	}
	if err := h.insertNew(ctx, r); err != nil {
		return nil, err
	}
	return h.Show(ctx, r.p.Manifest.ID)
}

// insertNew writes a plugin that is not installed yet.
func (h *Host) insertNew(ctx context.Context, r *reviewed) error {
	id := r.p.Manifest.ID
	if err := h.builtinID(id, r.p); err != nil {
		return err
	}
	return h.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM plugins WHERE id = ?`, id).Scan(&n); err != nil {
			return fmt.Errorf("host: install %s: %w", id, err)
		}
		if n > 0 {
			return &Conflict{Msg: fmt.Sprintf("plugin %s is already installed; use update", id)}
		}
		now := h.now().UnixMilli()
		if _, err := tx.ExecContext(ctx, `INSERT INTO plugins (id, source, official, current, installed_at, checked_at) VALUES (?, ?, ?, 1, ?, ?)`,
			id, r.source, r.official, now, now); err != nil {
			return fmt.Errorf("host: install %s: %w", id, err)
		}
		if err := insertVersion(ctx, tx, id, 1, r.p, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, removedKey(id)); err != nil {
			return fmt.Errorf("host: install %s: %w", id, err)
		}
		return writeModes(ctx, tx, id, DefaultModes(r.p.Manifest, r.official))
	})
}

// insertVersion writes one version of a plugin and its files.
func insertVersion(ctx context.Context, tx *sql.Tx, id string, seq int, p *plugin.Plugin, now int64) error {
	decl, err := json.Marshal(DeclarationsOf(p))
	if err != nil {
		return fmt.Errorf("host: %s: declarations: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO plugin_versions (plugin, seq, version, hash, declarations, fetched_at) VALUES (?, ?, ?, ?, ?, ?)`,
		id, seq, p.Manifest.Version, p.Hash, string(decl), now); err != nil {
		return fmt.Errorf("host: %s: write version: %w", id, err)
	}
	for path, b := range p.Files {
		if _, err := tx.ExecContext(ctx, `INSERT INTO plugin_files (plugin, seq, path, content) VALUES (?, ?, ?, ?)`, id, seq, path, b); err != nil {
			return fmt.Errorf("host: %s: write %s: %w", id, path, err)
		}
	}
	return nil
}

func removedKey(id string) string { return "official-removed:" + id }

// InstallOfficial installs the bundled official documents (package plugins)
// that are not installed, marked Official with their GitHub link as source
// (docs/HOST-API.md "Plugins"). An official plugin the user removed stays
// removed. When the bundled copy of an installed official plugin is a newer
// version, it is offered as an update by the rules of Update. The built-in
// plugins (WithBuiltins) are installed first, the same way; a built-in
// whose code changed with the app is made current at once. It returns what
// it did, one outcome per plugin.
func (h *Host) InstallOfficial(ctx context.Context) ([]*UpdateOutcome, error) {
	built, err := h.installBuiltins(ctx)
	if err != nil {
		return built, err
	}
	// Parsing six documents on every start costs more than hashing their
	// bytes: skip everything when the bundle is the one handled last time.
	digest, err := bundleDigest()
	if err != nil {
		return built, err
	}
	var seen string
	err = h.db.SQL.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'official-bundle'`).Scan(&seen)
	if err == nil && seen == digest {
		return built, nil
	}
	out, err := h.installOfficial(ctx)
	out = append(built, out...)
	if err != nil {
		return out, err
	}
	if _, err := h.db.SQL.ExecContext(ctx, `INSERT OR REPLACE INTO settings (key, value) VALUES ('official-bundle', ?)`, digest); err != nil {
		return out, fmt.Errorf("host: official plugins: %w", err)
	}
	return out, nil
}

// bundleDigest hashes every embedded official file, path and bytes.
func bundleDigest() (string, error) {
	sum := sha256.New()
	for _, name := range officialNames() {
		err := fs.WalkDir(plugins.FS(), name, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(plugins.FS(), path)
			fmt.Fprintf(sum, "%s\x00%d\x00", path, len(b))
			sum.Write(b)
			return err
		})
		if err != nil {
			return "", fmt.Errorf("host: official plugins: %w", err)
		}
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

func (h *Host) installOfficial(ctx context.Context) ([]*UpdateOutcome, error) {
	var out []*UpdateOutcome
	for _, name := range officialNames() {
		r, err := h.fetch(ctx, OfficialSource+name)
		if err != nil {
			return out, err
		}
		id := r.p.Manifest.ID
		var removed int
		if err := h.db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM settings WHERE key = ?`, removedKey(id)).Scan(&removed); err != nil {
			return out, fmt.Errorf("host: official %s: %w", id, err)
		}
		if removed > 0 {
			continue
		}
		cur, err := h.Show(ctx, id)
		var nf *NotFound
		switch {
		case errors.As(err, &nf):
			if err := h.insertNew(ctx, r); err != nil {
				var c *Conflict
				if errors.As(err, &c) {
					continue // another process installed it just now
				}
				return out, err
			}
			out = append(out, &UpdateOutcome{ID: id, Status: StatusInstalled, To: r.p.Manifest.Version, Note: "installed " + r.p.Manifest.Version})
		case err != nil:
			return out, err
		case cur.Hash != r.p.Hash && semverLess(cur.Version, r.p.Manifest.Version):
			o, err := h.offer(ctx, id, r)
			if err != nil {
				return out, err
			}
			out = append(out, o)
		}
	}
	return out, nil
}
