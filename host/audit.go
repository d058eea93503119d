package host

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pkuinfo/harness/plugin"
)

// AuditEntry is one tool call in the audit log (issue 4 "State": who, what,
// effect, outcome, duration). Outcome is "ok", "error", "refused",
// "confirm" (a confirmation was asked for; its answer is a later entry) or
// "approved" (the person said yes to a confirmation: Error names it and why it
// was asked; the run's own entry follows).
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

// audit writes one entry. A failure to write is logged, not returned: the
// call's own outcome matters more to the caller.
func (h *Host) audit(ctx context.Context, req CallRequest, e plugin.Effect, outcome, msg string, d time.Duration) {
	_, err := h.stmtAudit.ExecContext(context.WithoutCancel(ctx), h.now().UnixMilli(), string(req.Actor), req.Plugin, req.Tool, e.String(), outcome, msg, d.Microseconds())
	if err != nil {
		slog.Warn("host: audit log", "err", err)
	}
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
	// staleOnError after it expired (SPEC-DECISIONS §10 keeps it until it is
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
