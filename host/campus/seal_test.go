package campus

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/campus/campustest"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/host/vault"
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
	c := &Client{Sessions: NewSQLSessions(db)}
	req, _ := http.NewRequest("GET", "/x", nil)
	var ne *NotSignedInError
	if _, err := c.Do(ctx, "treehole", req); !errors.As(err, &ne) {
		t.Fatalf("a sealed value moved to another row: %v", err)
	}
}

// TestLostKey: when the key that sealed the rows is gone (the key file lost or replaced, so the
// vault made a new key), the sealed rows read as not signed in, with a reason and the command,
// the remembered password as not remembered; a new sign-in replaces them; nothing panics.
func TestLostKey(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	if res := r.signer.SignIn(ctx, "card", campustest.User, campustest.Password, SignInOptions{}); !res.OK {
		t.Fatal(res.Err)
	}
	r.acc.Save(ctx, AccountIAAA, campustest.User, campustest.Password, true, time.Now())
	other, _ := vault.NewBox(bytes.Repeat([]byte{7}, 32))
	ss := &SQLSessions{DB: r.db.SQL, Box: other}
	acc := &Accounts{DB: r.db.SQL, Box: other}
	sg := &Signer{Sessions: ss, Accounts: acc, Bases: r.stand.Bases()}
	c := &Client{Sessions: ss, Bases: r.stand.Bases(), Renew: sg.Renew}
	req, _ := http.NewRequest("GET", "/berserker-app/ykt/tsm/queryCard", nil)
	_, err := c.Do(ctx, "card", req)
	var ne *NotSignedInError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "another key") || !strings.HasSuffix(err.Error(), "run harness campus login card") {
		t.Fatalf("request: %v", err)
	}
	if list, err := ss.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("list: %v %v", list, err)
	}
	if _, _, ok, err := acc.Password(ctx, AccountIAAA); ok || err != nil {
		t.Fatalf("password: %v %v", ok, err)
	}
	if res := sg.SignIn(ctx, "card", campustest.User, campustest.Password, SignInOptions{}); !res.OK {
		t.Fatal(res.Err)
	}
	req, _ = http.NewRequest("GET", "/berserker-app/ykt/tsm/queryCard", nil)
	resp, err := c.Do(ctx, "card", req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
