package campus

import (
	"bytes"
	"context"
	"testing"

	"github.com/pkuinfo/harness/host/store"
)

// TestPlainRowsSealed: rows stored in plain text before migration 210 are
// sealed on first use, and nothing of the token or cookies is left in the
// database file in plain text.
func TestPlainRowsSealed(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO campus_sessions (service, token, cookies, device, created_at) VALUES
		('treehole', 'plain.jwt.TOKEN', '{"pku_uid":"COOKIEVAL"}', 'abcdefabcdef', 1)`); err != nil {
		t.Fatal(err)
	}
	ss := NewSQLSessions(db)
	s, ok, err := ss.Get(ctx, "treehole")
	if err != nil || !ok || s.Token != "plain.jwt.TOKEN" || s.Cookies["pku_uid"] != "COOKIEVAL" || s.Device != "abcdefabcdef" {
		t.Fatalf("%+v %v %v", s, ok, err)
	}
	var token, cookies string
	var sealed []byte
	db.SQL.QueryRowContext(ctx, `SELECT token, cookies, sealed FROM campus_sessions WHERE service = 'treehole'`).Scan(&token, &cookies, &sealed)
	if token != "" || cookies != "{}" || len(sealed) == 0 || bytes.Contains(sealed, []byte("TOKEN")) {
		t.Fatalf("row after migration: token %q cookies %q sealed %d bytes", token, cookies, len(sealed))
	}
	if err := ss.Put(ctx, &Session{Service: "card", Token: "card.jwt.TOKEN"}); err != nil {
		t.Fatal(err)
	}
	db.SQL.ExecContext(ctx, `VACUUM`)
	var n int
	db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM campus_sessions WHERE token != '' OR cookies != '{}'`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows with plain secrets", n)
	}
	// A sealed value moved to another row does not open there.
	db.SQL.ExecContext(ctx, `UPDATE campus_sessions SET sealed = (SELECT sealed FROM campus_sessions WHERE service = 'card') WHERE service = 'treehole'`)
	if _, _, err := NewSQLSessions(db).Get(ctx, "treehole"); err == nil {
		t.Fatal("a sealed value opened in another row")
	}
}
