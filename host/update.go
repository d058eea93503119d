package host

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/plugin"
	"github.com/pkuinfo/harness/plugins"
)

// officialNames is plugins.Names; tests replace it.
var officialNames = func() []string { return plugins.Names }

// testHookInUpdate, when set, runs inside an update's transaction after the
// new version is written and before it commits (the SIGKILL test).
var testHookInUpdate func()

// Update statuses (seed 004 "Updates"; docs/HOST-API.md "Plugins").
const (
	StatusCurrent   = "current"    // same content hash: nothing happened
	StatusApplied   = "applied"    // content changed, declarations not wider: applied
	StatusHeld      = "held"       // declarations wider: waits for the user (AcceptUpdate)
	StatusFailed    = "failed"     // the link could not be fetched or does not validate
	StatusSkipped   = "skipped"    // automatic updates are off, or checked within the day
	StatusInstalled = "installed"  // InstallOfficial installed a bundled document
	StatusMismatch  = "id-changed" // the link now serves a plugin with another id
)

// UpdateOutcome is what one update check did. Note is the line to show
// ("updated to 1.3.0"); Widened lists what a held update would add.
type UpdateOutcome struct {
	ID      string   `json:"id"`
	Status  string   `json:"status"`
	From    string   `json:"from,omitempty"`
	To      string   `json:"to,omitempty"`
	Note    string   `json:"note,omitempty"`
	Widened []string `json:"widened,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Widenings is Widened as data, for front ends that word it in another language.
	Widenings []Widening `json:"-"`
}

// AutoUpdateInterval is how often Host.AutoUpdate checks a plugin (seed 004
// "Updates": "when it starts (at most once a day)").
const AutoUpdateInterval = 24 * time.Hour

// Update checks one installed plugin's source again and applies the rules
// of seed 004 "Updates": the same content hash changes nothing; changed
// content whose declarations are not wider is applied with a note such as
// "updated to 1.3.0" (the replaced version becomes the one Rollback
// restores); wider declarations (see Widened) are held until AcceptUpdate.
// A source that cannot be fetched or does not validate gives StatusFailed
// with Error set and changes nothing. The error is non-nil only for an
// unknown plugin or a database failure.
func (h *Host) Update(ctx context.Context, id string) (*UpdateOutcome, error) {
	r, err := h.record(ctx, h.db.SQL, id)
	if err != nil {
		return nil, err
	}
	cur, err := h.version(ctx, h.db.SQL, id, r.current)
	if err != nil {
		return nil, err
	}
	nr, ferr := h.fetch(ctx, r.source)
	if ferr != nil {
		if _, err := h.db.SQL.ExecContext(ctx, `UPDATE plugins SET checked_at = ? WHERE id = ?`, h.now().UnixMilli(), id); err != nil {
			return nil, fmt.Errorf("host: update %s: %w", id, err)
		}
		return &UpdateOutcome{ID: id, Status: StatusFailed, From: cur.version, Error: ferr.Error()}, nil
	}
	nr.official = r.official // the source is the one installed; keep its kind
	return h.offer(ctx, id, nr)
}

// offer applies the update rules to a fetched candidate for plugin id.
func (h *Host) offer(ctx context.Context, id string, nr *reviewed) (*UpdateOutcome, error) {
	var out *UpdateOutcome
	err := h.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := h.record(ctx, tx, id)
		if err != nil {
			return err
		}
		cur, err := h.version(ctx, tx, id, r.current)
		if err != nil {
			return err
		}
		now := h.now().UnixMilli()
		out = &UpdateOutcome{ID: id, From: cur.version, To: nr.p.Manifest.Version}
		if nr.p.Manifest.ID != id {
			out.Status, out.To = StatusMismatch, ""
			out.Error = fmt.Sprintf("the source now serves plugin %q, not %q", nr.p.Manifest.ID, id)
			_, err := tx.ExecContext(ctx, `UPDATE plugins SET checked_at = ? WHERE id = ?`, now, id)
			return err
		}
		if nr.p.Hash == cur.hash {
			// The source is back to what runs: a held update it withdrew is dropped.
			out.Status, out.To = StatusCurrent, ""
			if _, err := tx.ExecContext(ctx, `UPDATE plugins SET checked_at = ?, held = NULL WHERE id = ?`, now, id); err != nil {
				return fmt.Errorf("host: update %s: %w", id, err)
			}
			return prune(ctx, tx, id)
		}
		widenings := Widenings(cur.decl, DeclarationsOf(nr.p))
		if len(widenings) > 0 {
			widened := Widened(cur.decl, DeclarationsOf(nr.p))
			out.Status, out.Widened, out.Widenings = StatusHeld, widened, widenings
			out.Note = fmt.Sprintf("update to %s waits for your review: %s", nr.p.Manifest.Version, strings.Join(widened, "; "))
			if r.held.Valid {
				hv, err := h.version(ctx, tx, id, int(r.held.Int64))
				if err != nil {
					return err
				}
				if hv.hash == nr.p.Hash {
					_, err := tx.ExecContext(ctx, `UPDATE plugins SET checked_at = ? WHERE id = ?`, now, id)
					return err
				}
			}
			seq, err := nextSeq(ctx, tx, id)
			if err != nil {
				return err
			}
			if err := insertVersion(ctx, tx, id, seq, nr.p, now); err != nil {
				return err
			}
			if testHookInUpdate != nil {
				testHookInUpdate()
			}
			if _, err := tx.ExecContext(ctx, `UPDATE plugins SET held = ?, checked_at = ? WHERE id = ?`, seq, now, id); err != nil {
				return fmt.Errorf("host: update %s: %w", id, err)
			}
			return prune(ctx, tx, id)
		}
		seq, err := nextSeq(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := insertVersion(ctx, tx, id, seq, nr.p, now); err != nil {
			return err
		}
		if testHookInUpdate != nil {
			testHookInUpdate()
		}
		out.Status = StatusApplied
		out.Note = updateNote(cur.version, nr.p.Manifest.Version)
		// A held update the new content supersedes is dropped, and so is a version a rollback left.
		if _, err := tx.ExecContext(ctx, `UPDATE plugins SET previous = current, current = ?, held = NULL, forward = NULL, checked_at = ?, note = ? WHERE id = ?`,
			seq, now, out.Note, id); err != nil {
			return fmt.Errorf("host: update %s: %w", id, err)
		}
		return prune(ctx, tx, id)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func nextSeq(ctx context.Context, tx *sql.Tx, id string) (int, error) {
	var seq int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM plugin_versions WHERE plugin = ?`, id).Scan(&seq); err != nil {
		return 0, fmt.Errorf("host: update %s: %w", id, err)
	}
	return seq, nil
}

// prune drops the versions that are neither current, previous nor held.
func prune(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM plugin_versions WHERE plugin = ?1 AND seq NOT IN (
		SELECT current FROM plugins WHERE id = ?1
		UNION SELECT previous FROM plugins WHERE id = ?1 AND previous IS NOT NULL
		UNION SELECT held FROM plugins WHERE id = ?1 AND held IS NOT NULL
		UNION SELECT forward FROM plugins WHERE id = ?1 AND forward IS NOT NULL)`, id)
	if err != nil {
		return fmt.Errorf("host: update %s: prune: %w", id, err)
	}
	return nil
}

// AcceptUpdate applies a held update after the user reviewed it (see
// HeldReview); the replaced version becomes the one Rollback restores.
// hash, when not "", must be the held update's content hash, so that the
// user accepts exactly what they reviewed. Without a held update, or with
// another hash, the error is a *Conflict.
func (h *Host) AcceptUpdate(ctx context.Context, id, hash string) (*UpdateOutcome, error) {
	var out *UpdateOutcome
	err := h.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := h.record(ctx, tx, id)
		if err != nil {
			return err
		}
		if !r.held.Valid {
			return &Conflict{Msg: fmt.Sprintf("plugin %s has no update waiting for review", id), Reason: ConflictNoHeld, Plugin: id}
		}
		cur, err := h.version(ctx, tx, id, r.current)
		if err != nil {
			return err
		}
		hv, err := h.version(ctx, tx, id, int(r.held.Int64))
		if err != nil {
			return err
		}
		if hash != "" && hash != hv.hash {
			return &Conflict{Msg: fmt.Sprintf("the update of %s waiting for review is %s, not %s; review it again", id, hv.hash, hash)}
		}
		out = &UpdateOutcome{ID: id, Status: StatusApplied, From: cur.version, To: hv.version, Note: updateNote(cur.version, hv.version)}
		if _, err := tx.ExecContext(ctx, `UPDATE plugins SET previous = current, current = held, held = NULL, forward = NULL, note = ? WHERE id = ?`, out.Note, id); err != nil {
			return fmt.Errorf("host: accept update of %s: %w", id, err)
		}
		return prune(ctx, tx, id)
	})
	return out, err
}

// Rollback restores the previous version of a plugin (seed 004 "Updates":
// "roll back to the previous version"). The host keeps one previous version, so after a
// rollback there is nothing older: the version it replaced is kept as the newer one, which
// Rollforward restores (and the next applied update drops). The note is "rolled back
// 1.1.0 → 1.0.0". Without a previous version the error is a *Conflict that says so (and names
// the newer version and `harness plugins rollforward` when there is one).
func (h *Host) Rollback(ctx context.Context, id string) (*UpdateOutcome, error) {
	var out *UpdateOutcome
	err := h.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := h.record(ctx, tx, id)
		if err != nil {
			return err
		}
		cur, err := h.version(ctx, tx, id, r.current)
		if err != nil {
			return err
		}
		if !r.previous.Valid {
			c := &Conflict{Msg: fmt.Sprintf("plugin %s has no previous version to roll back to: nothing older than %s is kept", id, cur.version),
				Reason: ConflictNoPrevious, Plugin: id, Current: cur.version}
			if r.forward.Valid {
				if fv, err := h.version(ctx, tx, id, int(r.forward.Int64)); err == nil {
					c.Msg += fmt.Sprintf(" (%s is newer: harness plugins rollforward %s)", fv.version, id)
					c.Newer = fv.version
				}
			}
			return c
		}
		pv, err := h.version(ctx, tx, id, int(r.previous.Int64))
		if err != nil {
			return err
		}
		out = &UpdateOutcome{ID: id, Status: StatusApplied, From: cur.version, To: pv.version,
			Note: "rolled back " + versionPair(cur, pv)}
		_, err = tx.ExecContext(ctx, `UPDATE plugins SET forward = current, current = previous, previous = NULL, note = ? WHERE id = ?`, out.Note, id)
		if err != nil {
			return fmt.Errorf("host: rollback %s: %w", id, err)
		}
		return nil
	})
	return out, err
}

// Rollforward undoes a Rollback: the newer version it left runs again and the rolled-back one
// becomes the previous version. The note is "rolled forward 1.0.0 → 1.1.0". Without such a
// version (no rollback, or an update applied since) the error is a *Conflict.
func (h *Host) Rollforward(ctx context.Context, id string) (*UpdateOutcome, error) {
	var out *UpdateOutcome
	err := h.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := h.record(ctx, tx, id)
		if err != nil {
			return err
		}
		cur, err := h.version(ctx, tx, id, r.current)
		if err != nil {
			return err
		}
		if !r.forward.Valid {
			return &Conflict{Msg: fmt.Sprintf("plugin %s has no newer version to roll forward to: %s is the newest kept", id, cur.version),
				Reason: ConflictNoNewer, Plugin: id, Current: cur.version}
		}
		fv, err := h.version(ctx, tx, id, int(r.forward.Int64))
		if err != nil {
			return err
		}
		out = &UpdateOutcome{ID: id, Status: StatusApplied, From: cur.version, To: fv.version,
			Note: "rolled forward " + versionPair(cur, fv)}
		_, err = tx.ExecContext(ctx, `UPDATE plugins SET previous = current, current = forward, forward = NULL, note = ? WHERE id = ?`, out.Note, id)
		if err != nil {
			return fmt.Errorf("host: rollforward %s: %w", id, err)
		}
		return nil
	})
	return out, err
}

// KeptVersion is one version of a plugin the host keeps: Role is "current" (runs), "previous"
// (Rollback restores it), "newer" (a rollback left it; Rollforward restores it) or "held" (an
// update waiting for review, AcceptUpdate applies it).
type KeptVersion struct {
	Role      string    `json:"role"`
	Version   string    `json:"version"`
	Hash      string    `json:"hash"`
	FetchedAt time.Time `json:"fetchedAt"`
}

// Versions lists the versions kept for plugin id, newest first by when they were fetched
// (at most four: current, previous, newer and held). The error is a *NotFound for an unknown
// plugin.
func (h *Host) Versions(ctx context.Context, id string) ([]KeptVersion, error) {
	r, err := h.record(ctx, h.db.SQL, id)
	if err != nil {
		return nil, err
	}
	roles := map[int64]string{int64(r.current): "current"}
	for role, seq := range map[string]sql.NullInt64{"previous": r.previous, "newer": r.forward, "held": r.held} {
		if seq.Valid {
			roles[seq.Int64] = role
		}
	}
	rows, err := h.db.SQL.QueryContext(ctx, `SELECT seq, version, hash, fetched_at FROM plugin_versions WHERE plugin = ? ORDER BY seq DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("host: versions of %s: %w", id, err)
	}
	defer rows.Close()
	var out []KeptVersion
	for rows.Next() {
		var seq, at int64
		var v KeptVersion
		if err := rows.Scan(&seq, &v.Version, &v.Hash, &at); err != nil {
			return nil, fmt.Errorf("host: versions of %s: %w", id, err)
		}
		role, ok := roles[seq]
		if !ok {
			continue // pruned at the next change
		}
		v.Role, v.FetchedAt = role, time.UnixMilli(at).UTC()
		out = append(out, v)
	}
	return out, rows.Err()
}

// updateNote is the note of an applied update: "updated 1.0.0 → 1.1.0", or "content changed,
// same version 1.0.0" when the manifest's version did not change.
func updateNote(from, to string) string {
	if from == to {
		return "content changed, same version " + to
	}
	return fmt.Sprintf("updated %s → %s", from, to)
}

// versionPair is "1.1.0 → 1.0.0" for a rollback note; when both have the same manifest
// version (content changed, same version), each is followed by the start of its content hash.
func versionPair(from, to *version) string {
	if from.version != to.version {
		return from.version + " → " + to.version
	}
	short := func(h string) string {
		if len(h) > 19 {
			return h[:19] + "…"
		}
		return h
	}
	return fmt.Sprintf("%s (%s) → %s (%s)", from.version, short(from.hash), to.version, short(to.hash))
}

// AutoUpdate is the start-up check of `harness serve`: it checks every
// plugin whose automatic updates are on and that was not checked within
// AutoUpdateInterval, and returns one outcome per plugin (StatusSkipped for
// the others).
func (h *Host) AutoUpdate(ctx context.Context) ([]*UpdateOutcome, error) {
	list, err := h.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []*UpdateOutcome
	for _, in := range list {
		if !in.AutoUpdate || h.now().Sub(in.CheckedAt) < AutoUpdateInterval {
			out = append(out, &UpdateOutcome{ID: in.ID, Status: StatusSkipped, From: in.Version})
			continue
		}
		o, err := h.Update(ctx, in.ID)
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Widened lists, in words, how the declarations next are wider than old
// (seed 004 "Updates": "a new campus service, host or ability, or a
// stronger effect"; also a new tool stronger than read). It also
// counts a new Cloud service, a changed remote server, a tool that is no
// longer userOnly, and a tool that is not userOnly newly reaching a userOnly
// one through `call` (ToolDecl.CallsUserOnly). An empty list means the update may be applied
// automatically.
func Widened(old, next Declarations) []string {
	var w []string
	for _, x := range Widenings(old, next) {
		w = append(w, x.String())
	}
	return w
}

// Widening is one way a version's declarations are wider than the one in use, as data so that
// each front end can say it in its language (Widened says it in English). Kind is one of the
// Widen… constants; Name is the campus service, website, ability, Cloud service, remote server
// or tool; From and To are a tool's effects for WidenEffect, To a new tool's for WidenNewTool.
type Widening struct {
	Kind     string        `json:"kind"`
	Name     string        `json:"name"`
	From, To plugin.Effect `json:"-"`
	// Callee is, for WidenCallsUserOnly, the userOnly tool that Name now calls.
	Callee string `json:"callee,omitempty"`
}

// The kinds of Widening.
const (
	WidenCampus   = "campus"   // a new campus service
	WidenWebsite  = "website"  // a new network host
	WidenAbility  = "ability"  // a new app feature (ability group)
	WidenCloud    = "cloud"    // a new Cloud service
	WidenRemote   = "remote"   // another remote server
	WidenNewTool  = "newTool"  // a new tool stronger than read
	WidenEffect   = "effect"   // a tool's effect is stronger
	WidenUserOnly = "userOnly" // a tool is no longer userOnly
	// WidenCallsUserOnly: a tool that is not userOnly now reaches a userOnly tool through call.
	WidenCallsUserOnly = "callsUserOnly"
)

// String is the English phrase of w, e.g. "new campus service card" or "tool now: read → write".
func (w Widening) String() string {
	switch w.Kind {
	case WidenCampus:
		return "new campus service " + w.Name
	case WidenWebsite:
		return "new website " + w.Name
	case WidenAbility:
		return "new app feature " + w.Name
	case WidenCloud:
		return "new cloud service " + w.Name
	case WidenRemote:
		return "remote server " + w.Name
	case WidenNewTool:
		return fmt.Sprintf("new %s tool %s", w.To, w.Name)
	case WidenEffect:
		return fmt.Sprintf("tool %s: %s → %s", w.Name, w.From, w.To)
	case WidenUserOnly:
		return fmt.Sprintf("tool %s is no longer userOnly", w.Name)
	case WidenCallsUserOnly:
		return fmt.Sprintf("tool %s now calls userOnly tool %s", w.Name, w.Callee)
	}
	return w.Kind + " " + w.Name
}

// Widenings lists how the declarations next are wider than old, in the order Widened words
// them; see Widened for the rules.
func Widenings(old, next Declarations) []Widening {
	var w []Widening
	for _, s := range next.Campus {
		if !slices.Contains(old.Campus, s) {
			w = append(w, Widening{Kind: WidenCampus, Name: s})
		}
	}
	for _, n := range next.Network {
		if !hostCovered(n, old.Network) {
			w = append(w, Widening{Kind: WidenWebsite, Name: n})
		}
	}
	for _, a := range next.Abilities {
		if !slices.Contains(old.Abilities, a) {
			w = append(w, Widening{Kind: WidenAbility, Name: a})
		}
	}
	for _, c := range next.Cloud {
		if !slices.Contains(old.Cloud, c) {
			w = append(w, Widening{Kind: WidenCloud, Name: c})
		}
	}
	if next.Remote != "" && next.Remote != old.Remote {
		w = append(w, Widening{Kind: WidenRemote, Name: next.Remote})
	}
	for _, t := range next.Tools {
		i := slices.IndexFunc(old.Tools, func(o ToolDecl) bool { return o.Name == t.Name })
		var before []string // the userOnly tools old's t reached through call
		if i >= 0 && !old.Tools[i].UserOnly {
			before = old.Tools[i].CallsUserOnly
		}
		for _, c := range t.CallsUserOnly {
			if i >= 0 && old.Tools[i].UserOnly {
				break // "no longer userOnly" below says it
			}
			if !slices.Contains(before, c) {
				w = append(w, Widening{Kind: WidenCallsUserOnly, Name: t.Name, Callee: c})
			}
		}
		if i < 0 {
			if t.Effect != plugin.EffectRead {
				w = append(w, Widening{Kind: WidenNewTool, Name: t.Name, To: t.Effect})
			}
			continue
		}
		o := old.Tools[i]
		if !o.Effect.AtLeast(t.Effect) {
			w = append(w, Widening{Kind: WidenEffect, Name: t.Name, From: o.Effect, To: t.Effect})
		}
		if o.UserOnly && !t.UserOnly {
			w = append(w, Widening{Kind: WidenUserOnly, Name: t.Name})
		}
	}
	return w
}

// hostCovered reports whether the network entry n reaches nothing the
// entries old did not: it is one of them, or (for "*.sub.example.com" or
// "sub.example.com") old's "*.example.com" already covers it.
func hostCovered(n string, old []string) bool {
	if slices.Contains(old, n) {
		return true
	}
	if h, ok := strings.CutPrefix(n, "*."); ok {
		// A wildcard is covered only by a wider wildcard, never by names.
		var wild []string
		for _, o := range old {
			if strings.HasPrefix(o, "*.") {
				wild = append(wild, o)
			}
		}
		return plugin.HostAllowed(h, wild)
	}
	return plugin.HostAllowed(n, old)
}

// semverLess reports whether version a is lower than b ("1.2.0" <
// "1.10.0"); pre-release and build suffixes are ignored, and text that is
// not a number compares as 0.
func semverLess(a, b string) bool {
	pa, pb := semverParts(a), semverParts(b)
	for i := range 3 {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func semverParts(v string) [3]int {
	v, _, _ = strings.Cut(v, "+")
	v, _, _ = strings.Cut(v, "-")
	var out [3]int
	for i, s := range strings.SplitN(v, ".", 3) {
		out[i], _ = strconv.Atoi(s)
	}
	return out
}

// HeldReview returns the review sheet of a plugin's held update, with
// Installed set to the version in use, and what it widens. Without a held
// update the error is a *Conflict.
func (h *Host) HeldReview(ctx context.Context, id string) (*Review, []string, error) {
	r, err := h.record(ctx, h.db.SQL, id)
	if err != nil {
		return nil, nil, err
	}
	if !r.held.Valid {
		return nil, nil, &Conflict{Msg: fmt.Sprintf("plugin %s has no update waiting for review", id), Reason: ConflictNoHeld, Plugin: id}
	}
	cur, err := h.version(ctx, h.db.SQL, id, r.current)
	if err != nil {
		return nil, nil, err
	}
	hv, err := h.version(ctx, h.db.SQL, id, int(r.held.Int64))
	if err != nil {
		return nil, nil, err
	}
	p, err := h.parsed(ctx, id, hv.seq, hv.hash)
	if err != nil {
		return nil, nil, err
	}
	rv := reviewOf(&reviewed{p: p, source: r.source, official: r.official})
	rv.Installed = cur.version
	return rv, Widened(cur.decl, hv.decl), nil
}
