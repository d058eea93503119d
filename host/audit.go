package host

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pkuinfo/harness/plugin"
)

// AuditEntry is one tool call in the audit log (docs/HOST-API.md "Tools and permissions": who, what,
// effect, outcome, duration). Outcome is "ok", "error", "refused",
// "confirm" (a confirmation was asked for; its answer is a later entry),
// "approved" (the person said yes to a confirmation: Error names it and why it
// was asked; the run's own entry follows), or "running": the tool was started
// and its end is not recorded yet (the call is still running, or the host
// stopped, or the end could not be written — the call then failed with an
// *AuditFailure whose Ran is true).
type AuditEntry struct {
	ID      int64         `json:"id"`
	At      time.Time     `json:"at"`
	Actor   Actor         `json:"actor"`
	Plugin  string        `json:"plugin"`
	Tool    string        `json:"tool"`
	Effect  plugin.Effect `json:"effect"`
	Outcome string        `json:"outcome"`
	Error   string        `json:"error,omitempty"`
	// DurationUs is how long the call took in the host, in microseconds.
	DurationUs int64 `json:"durationUs"`
}

// AuditTimeout is how long one audit write may wait (for a database
// connection and SQLite's write lock) before the call fails with an
// *AuditFailure. The write does not end with the caller's context: a client
// that goes away does not take the record with it.
const AuditTimeout = 30 * time.Second

// AuditFailure is the error of a call whose audit record could not be
// written: every call, refused or not, is in the audit log, so a call that
// cannot be recorded fails rather than going unrecorded.
//
// Ran false: the tool did not run. A call to run is first recorded as
// "running"; when that cannot be written the tool is never started. A
// refusal or a confirmation that cannot be recorded fails the same way (no
// confirmation is left waiting). Ran true: the tool ran — its effect, if it
// has one, happened — and only its outcome could not be recorded; the log
// shows the call as "running", and the result is not returned. A client must
// not simply repeat such a call: a write may then happen twice.
type AuditFailure struct {
	Plugin, Tool string
	// Ran says whether the tool ran.
	Ran bool
	// Outcome is the outcome that could not be recorded: "running" (the
	// start), "ok", "error", "refused" or "confirm".
	Outcome string
	// Err is the database's error.
	Err error
}

// Error says what happened to the call and why the record is missing.
func (e *AuditFailure) Error() string {
	if e.Ran {
		return fmt.Sprintf("host: %s.%s ran (outcome %s), but its audit record could not be completed: %v; the audit log shows the call as running, and its result is withheld (do not repeat a write without checking)",
			e.Plugin, e.Tool, e.Outcome, e.Err)
	}
	return fmt.Sprintf("host: %s.%s did not run: its audit record (%s) could not be written: %v", e.Plugin, e.Tool, e.Outcome, e.Err)
}

// Unwrap returns the database's error.
func (e *AuditFailure) Unwrap() error { return e.Err }

// auditCtx is ctx without its cancellation, bounded by AuditTimeout.
func auditCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), AuditTimeout)
}

// audit writes one complete entry for a call that does not run (refused,
// waiting for a confirmation, failed before it ran). An entry that cannot be
// written is an *AuditFailure (Ran false).
func (h *Host) audit(ctx context.Context, req CallRequest, e plugin.Effect, outcome, msg string, d time.Duration) error {
	actx, cancel := auditCtx(ctx)
	defer cancel()
	_, err := h.stmtAudit.ExecContext(actx, h.now().UnixMilli(), string(req.Actor), req.Plugin, req.Tool, e.String(), outcome, msg, d.Microseconds())
	if err != nil {
		slog.Error("host: audit log", "plugin", req.Plugin, "tool", req.Tool, "outcome", outcome, "err", err)
		return &AuditFailure{Plugin: req.Plugin, Tool: req.Tool, Outcome: outcome, Err: err}
	}
	return nil
}

// auditStart records a call about to run as "running" and returns its entry's
// id for auditEnd. An entry that cannot be written is an *AuditFailure (Ran
// false): the caller must not run the tool.
func (h *Host) auditStart(ctx context.Context, req CallRequest, e plugin.Effect) (int64, error) {
	actx, cancel := auditCtx(ctx)
	defer cancel()
	res, err := h.stmtAudit.ExecContext(actx, h.now().UnixMilli(), string(req.Actor), req.Plugin, req.Tool, e.String(), "running", "", 0)
	var id int64
	if err == nil {
		id, err = res.LastInsertId()
	}
	if err != nil {
		slog.Error("host: audit log", "plugin", req.Plugin, "tool", req.Tool, "outcome", "running", "err", err)
		return 0, &AuditFailure{Plugin: req.Plugin, Tool: req.Tool, Outcome: "running", Err: err}
	}
	return id, nil
}

// auditEnd records the outcome of the call auditStart recorded as id. An
// outcome that cannot be written is an *AuditFailure with Ran true.
func (h *Host) auditEnd(ctx context.Context, id int64, req CallRequest, outcome, msg string, d time.Duration) error {
	actx, cancel := auditCtx(ctx)
	defer cancel()
	res, err := h.db.SQL.ExecContext(actx, `UPDATE audit SET outcome = ?, error = ?, duration_us = ? WHERE id = ? AND outcome = 'running'`,
		outcome, msg, d.Microseconds(), id)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n != 1 {
			err = fmt.Errorf("audit entry %d is gone", id)
		}
	}
	if err != nil {
		slog.Error("host: audit log", "plugin", req.Plugin, "tool", req.Tool, "outcome", outcome, "entry", id, "err", err)
		return &AuditFailure{Plugin: req.Plugin, Tool: req.Tool, Ran: true, Outcome: outcome, Err: err}
	}
	return nil
}

// unpend drops a confirmation whose asking could not be recorded: no call
// waits for an answer the audit log does not know was asked.
func (h *Host) unpend(id string) {
	h.mu.Lock()
	delete(h.pending, id)
	h.mu.Unlock()
}

// Audit returns the latest limit entries of the audit log, newest first,
// optionally only those of one plugin ("" for all).
func (h *Host) Audit(ctx context.Context, pluginID string, limit int) ([]AuditEntry, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	rows, err := h.db.SQL.QueryContext(ctx, `SELECT id, at, actor, plugin, tool, effect, outcome, error, duration_us FROM audit
		WHERE ?1 = '' OR plugin = ?1 ORDER BY id DESC LIMIT ?2`, pluginID, limit)
	if err != nil {
		return nil, fmt.Errorf("host: audit: %w", err)
	}
	defer rows.Close()
	out := []AuditEntry{}
	for rows.Next() {
		var (
			a      AuditEntry
			at, us int64
			actor  string
			effect string
		)
		if err := rows.Scan(&a.ID, &at, &actor, &a.Plugin, &a.Tool, &effect, &a.Outcome, &a.Error, &us); err != nil {
			return nil, err
		}
		a.At, a.Actor, a.DurationUs = time.UnixMilli(at).UTC(), Actor(actor), us
		a.Effect, _ = plugin.ParseEffect(effect)
		out = append(out, a)
	}
	return out, rows.Err()
}

// Retention of Housekeeping.
const (
	// AuditRetention is how long audit entries are kept.
	AuditRetention = 90 * 24 * time.Hour
	// StaleKVRetention is how long an expired KV entry is kept for `cache`
	// staleOnError after it expired (docs/DECISIONS.md §10 keeps it until it is
	// overwritten; a host may drop it later, interp/kvstore.PurgeExpired).
	StaleKVRetention = 7 * 24 * time.Hour
)

// Housekeeping drops audit entries older than AuditRetention and KV
// entries that expired more than StaleKVRetention ago; `harness serve` runs
// it at start. It returns how many rows of each it removed.
func (h *Host) Housekeeping(ctx context.Context) (audit, kv int, err error) {
	now := h.now()
	res, err := h.db.SQL.ExecContext(ctx, `DELETE FROM audit WHERE at < ?`, now.Add(-AuditRetention).UnixMilli())
	if err != nil {
		return 0, 0, fmt.Errorf("host: housekeeping: %w", err)
	}
	n, _ := res.RowsAffected()
	kv, err = h.db.KV().PurgeExpired(ctx, now.Add(-StaleKVRetention))
	if err != nil {
		return int(n), 0, fmt.Errorf("host: housekeeping: %w", err)
	}
	return int(n), kv, nil
}
