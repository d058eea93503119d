package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/campus/campustest"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/host/vault"
)

// TestCampusSignInAPINoSecrets drives the campus sign-in routes against the stand-ins (password,
// QR, binding with a late SMS, expiry renewal through a tool call) and then scans every output of
// the run for the test password, the authenticator secret and every token and session cookie the
// stand-ins handed out: API answers, the log, audit rows (through GET /v1/audit and the table),
// the plugin-visible tool results, and the database file itself.
func TestCampusSignInAPINoSecrets(t *testing.T) {
	defer func(g time.Duration) { qrPollGap = g }(qrPollGap)
	qrPollGap = 0 // the QR polls below come one after the other
	st := campustest.New()
	defer st.Close()
	t.Setenv(campus.EndpointsEnv, st.Env())
	t.Setenv("HARNESS_KEYRING", "off")
	var logs bytes.Buffer
	oldLog := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.SetOutput(&logs)
	defer func() { slog.SetDefault(oldLog); log.SetOutput(os.Stderr) }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := filepath.Join(t.TempDir(), "data")
	h, db, err := openHost(ctx, &hostFlags{data: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := api.New(h, api.Options{})
	for _, s := range []ServeSetup{campusRoutes, abilityServe} {
		if err := s(ctx, h, srv); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var answers bytes.Buffer
	post := func(path, body string, want int) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers.Write(b)
		if resp.StatusCode != want {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	getAll := func(path string) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers.Write(b)
	}

	// A QR sign-in to Treehole before any other sign-in (no device id kept yet).
	st.Set(func(s *campustest.Stand) { s.QRScanAfter = 1 })
	m := post("/v1/campus/qr", `{"service":"treehole"}`, 200)
	if m = post("/v1/campus/qr/poll", `{"id":"`+m["id"].(string)+`"}`, 200); m["status"] != "signed_in" {
		t.Fatalf("first QR sign-in: %v", m)
	}
	st.Set(func(s *campustest.Stand) { s.QRScanAfter = 0 })
	// Wrong password: E01 in both languages.
	m = post("/v1/campus/login", `{"services":["card"],"username":"2000000000","password":"nope"}`, 200)
	if r := m["results"].([]any)[0].(map[string]any); r["code"] != "E01" || r["errorZh"] != "IAAA：用户名或密码错误" || r["error"] != "IAAA: wrong user name or password" {
		t.Fatalf("wrong password: %v", m)
	}
	// As an attacker would: unknown services and fields (no base URL can be smuggled in), guessed
	// QR ids, a binding never started, a service that does not exist.
	post("/v1/campus/login", `{"services":["nowhere"],"username":"u","password":"p"}`, 400)
	post("/v1/campus/login", `{"username":"u"}`, 400)
	post("/v1/campus/login", `{"username":"u","password":"p","bases":{"iaaa":"http://evil.example"}}`, 400)
	post("/v1/campus/login", `not json`, 400)
	post("/v1/campus/qr/poll", `{"id":"000000000000000000000000"}`, 404)
	post("/v1/campus/qr", `{"service":"../iaaa"}`, 400)
	post("/v1/campus/bind/finish", `{"code":"123456"}`, 404)
	post("/v1/campus/logout", `{"service":"nowhere"}`, 404)
	// Treehole's SMS check is due: the sign-in succeeds and says the check is pending.
	st.Set(func(s *campustest.Stand) { s.TreeholeSMS = true })
	m = post("/v1/campus/login", `{"services":["treehole"],"username":"2000000000","password":"`+campustest.Password+`"}`, 200)
	if r := m["results"].([]any)[0].(map[string]any); r["ok"] != true || r["pending"] != "sms" {
		t.Fatalf("pending SMS: %v", m)
	}
	if m = post("/v1/campus/treehole/sms", `{}`, 200); m["sent"] != true {
		t.Fatalf("send: %v", m)
	}
	post("/v1/campus/treehole/sms", `{"code":"000000"}`, 400)
	if m = post("/v1/campus/treehole/sms", `{"code":"`+campustest.SMSCode+`"}`, 200); m["verified"] != true {
		t.Fatalf("verify: %v", m)
	}
	// Every service, password remembered.
	m = post("/v1/campus/login", `{"username":"2000000000","password":"`+campustest.Password+`","remember":true}`, 200)
	for _, r := range m["results"].([]any) {
		if r.(map[string]any)["ok"] != true {
			t.Fatalf("login: %v", r)
		}
	}
	// QR: waiting, then scanned on the second poll.
	st.Set(func(s *campustest.Stand) { s.QRScanAfter = 2 })
	m = post("/v1/campus/qr", `{"service":"treehole"}`, 200)
	if !strings.HasPrefix(m["image"].(string), "data:image/png;base64,") {
		t.Fatalf("qr: %v", m)
	}
	id := m["id"].(string)
	if m = post("/v1/campus/qr/poll", `{"id":"`+id+`"}`, 200); m["status"] != "waiting" {
		t.Fatalf("poll 1: %v", m)
	}
	if m = post("/v1/campus/qr/poll", `{"id":"`+id+`"}`, 200); m["status"] != "signed_in" {
		t.Fatalf("poll 2: %v", m)
	}
	post("/v1/campus/qr/poll", `{"id":"`+id+`"}`, 404)
	post("/v1/campus/qr", `{"service":"its"}`, 400)
	// Binding with the SMS code given in a later request.
	if m = post("/v1/campus/bind", `{"username":"2000000000","password":"`+campustest.Password+`"}`, 200); m["smsSentTo"] != "138****0000" {
		t.Fatalf("bind: %v", m)
	}
	post("/v1/campus/bind/finish", `{"code":"000000"}`, 400)
	if m = post("/v1/campus/bind/finish", `{"code":"`+campustest.SMSCode+`"}`, 200); m["bound"] != true {
		t.Fatalf("bind finish: %v", m)
	}
	// Now IAAA wants the authenticator; the host supplies it on the silent renewal.
	st.Expire("card")
	m = post("/v1/tools/wallet.balance/call", `{"actor":"user"}`, 200)
	if !strings.Contains(answers.String(), `"balance":123.45`) {
		t.Fatalf("wallet.balance after expiry: %v", m)
	}
	getAll("/v1/campus")
	getAll("/v1/audit")
	getAll("/v1/otp")
	post("/v1/campus/logout", `{"service":"its"}`, 200)

	// The scan.
	secrets := append([]string{campustest.Password, campustest.BindSecret}, st.Issued()...)
	rows, _ := db.SQL.QueryContext(ctx, `SELECT plugin, tool, outcome, error FROM audit`)
	var audit bytes.Buffer
	for rows.Next() {
		var a, b, c, d string
		rows.Scan(&a, &b, &c, &d)
		audit.WriteString(a + b + c + d)
	}
	rows.Close()
	db.SQL.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	file, _ := os.ReadFile(db.Path())
	if len(st.Issued()) < 10 {
		t.Fatalf("the stand-ins issued only %d credentials", len(st.Issued()))
	}
	for name, out := range map[string][]byte{"API answers": answers.Bytes(), "log": logs.Bytes(), "audit": audit.Bytes(), "database file": file} {
		for _, s := range secrets {
			if bytes.Contains(out, []byte(s)) {
				t.Errorf("%s contains the secret %q", name, s)
			}
		}
	}
	if !strings.Contains(audit.String(), "wallet") {
		t.Error("the audit has no wallet row: the scan saw nothing")
	}
}

// Opening a host seals the session rows and the authenticator secret an older version stored in
// plain text, before any campus request.
func TestHostOpenSealsPlainRows(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	db.SQL.ExecContext(ctx, `INSERT INTO campus_sessions (service, token, cookies, created_at) VALUES ('card', 'plain.card.jwt', '{}', 1)`)
	db.SQL.ExecContext(ctx, `INSERT INTO otp_secret (id, secret, set_at) VALUES (1, 'JBSWY3DPEHPK3PXP', 1)`)
	db.Close()
	_, db, err = openHost(ctx, &hostFlags{data: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var plain int
	db.SQL.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM campus_sessions WHERE token != '') + (SELECT count(*) FROM otp_secret WHERE secret != '')`).Scan(&plain)
	if plain != 0 {
		t.Fatalf("%d plain rows left after the host opened", plain)
	}
	if _, err := os.Stat(vault.KeyFile(dir)); err != nil {
		t.Fatalf("no key file beside the data directory: %v", err)
	}
}

// campusAPI serves the campus routes of a fresh host against the stand-ins.
func campusAPI(t *testing.T) (*campustest.Stand, *httptest.Server) {
	t.Helper()
	st := campustest.New()
	t.Cleanup(st.Close)
	t.Setenv(campus.EndpointsEnv, st.Env())
	t.Setenv("HARNESS_KEYRING", "off")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, db, err := openHost(ctx, &hostFlags{data: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := api.New(h, api.Options{})
	if err := campusRoutes(ctx, h, srv); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return st, ts
}

func postJSON(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// A wrong password given to POST /v1/campus/login for every service reaches IAAA once, not once
// per service: IAAA locks an account after failed attempts.
func TestCampusLoginAPIStopsAtRefusal(t *testing.T) {
	st, ts := campusAPI(t)
	code, m := postJSON(t, ts.URL+"/v1/campus/login", `{"username":"2000000000","password":"nope"}`)
	if code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	if n := st.Count("iaaa POST /iaaa/oauthlogin.do") + st.Count("its POST /cas/webLogin"); n != 1 {
		t.Fatalf("the wrong password was sent %d times, want once: %v", n, m)
	}
	if r := m["results"].([]any)[0].(map[string]any); r["code"] != "E01" {
		t.Fatalf("%v", m)
	}
}

// The web app decides how often it polls a QR sign-in; the host asks IAAA no more often than the
// documented schedule (every 3 s, docs/CAMPUS-PROTOCOLS.md §2.3), however fast the polls come.
func TestCampusQRPollPaced(t *testing.T) {
	st, ts := campusAPI(t)
	_, m := postJSON(t, ts.URL+"/v1/campus/qr", `{"service":"card"}`)
	id, _ := m["id"].(string)
	for i := 0; i < 20; i++ {
		if code, m := postJSON(t, ts.URL+"/v1/campus/qr/poll", `{"id":"`+id+`"}`); code != 200 || m["status"] != "waiting" {
			t.Fatalf("poll %d: %d %v", i, code, m)
		}
	}
	if n := st.Count("iaaa POST /iaaa/oauthlogin4QRCode.do"); n != 1 {
		t.Fatalf("20 quick polls asked IAAA %d times, want once", n)
	}
}
