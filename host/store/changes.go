package store

import (
	"context"
	"database/sql"
	"fmt"
)

// The change counter (version 20, host security range): one number that
// every change to what the agent may be offered bumps — plugins installed,
// removed, enabled, updated or rolled back, their versions and their
// permission modes — by triggers, so that changes made by another process
// on the same database (a CLI command while `harness serve` runs) count
// too. Tables of other packages that shape the tool list (remote plugins)
// bump it with BumpChanges in their write transactions.
func init() {
	Register(Migration{Version: 20, Name: "change counter of the offered tools", SQL: `
CREATE TABLE change_counter (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
);
INSERT INTO change_counter (id, n) VALUES (1, 0);
CREATE TRIGGER plugins_changed_i AFTER INSERT ON plugins BEGIN UPDATE change_counter SET n = n + 1; END;
CREATE TRIGGER plugins_changed_u AFTER UPDATE ON plugins BEGIN UPDATE change_counter SET n = n + 1; END;
CREATE TRIGGER plugins_changed_d AFTER DELETE ON plugins BEGIN UPDATE change_counter SET n = n + 1; END;
CREATE TRIGGER versions_changed_i AFTER INSERT ON plugin_versions BEGIN UPDATE change_counter SET n = n + 1; END;
CREATE TRIGGER versions_changed_d AFTER DELETE ON plugin_versions BEGIN UPDATE change_counter SET n = n + 1; END;
CREATE TRIGGER modes_changed_i AFTER INSERT ON modes BEGIN UPDATE change_counter SET n = n + 1; END;
CREATE TRIGGER modes_changed_u AFTER UPDATE ON modes BEGIN UPDATE change_counter SET n = n + 1; END;
CREATE TRIGGER modes_changed_d AFTER DELETE ON modes BEGIN UPDATE change_counter SET n = n + 1; END;`})
}

// Execer is what BumpChanges runs on: a *sql.DB or a *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// BumpChanges bumps the change counter, for a package whose own table
// shapes the tool list; call it in the transaction that changes the table.
func BumpChanges(ctx context.Context, e Execer) error {
	if _, err := e.ExecContext(ctx, `UPDATE change_counter SET n = n + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("store: change counter: %w", err)
	}
	return nil
}

// Changes returns the change counter: it differs from an earlier reading
// exactly when something the agent may be offered changed since (see the
// counter's migration). One indexed read; a cache of the tool list is keyed
// by it.
func (s *DB) Changes(ctx context.Context) (int64, error) {
	var n int64
	if err := s.SQL.QueryRowContext(ctx, `SELECT n FROM change_counter WHERE id = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: change counter: %w", err)
	}
	return n, nil
}
