package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
)

func TestRegisterOnceAndReuse(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	ids := client.FileIdentityStore{Path: filepath.Join(t.TempDir(), "identity.json")}
	c1 := ts.newClient(t, ids)
	dev, err := c1.Device(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !protocol.ValidID(dev.DeviceID) {
		t.Fatalf("device id %q", dev.DeviceID)
	}
	// A second client over the same identity store is the same device: no new registration.
	c2 := ts.newClient(t, ids)
	dev2, err := c2.Device(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dev2.DeviceID != dev.DeviceID || dev2.SignPub() != dev.SignPub() {
		t.Errorf("reloaded device %s, want %s", dev2.DeviceID, dev.DeviceID)
	}
	if n := ts.count("POST /v1/devices"); n != 1 {
		t.Errorf("%d registrations, want 1", n)
	}
	p, err := c2.Plugin("demo", "store")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Store(false).Put(ctx, "k", 1, client.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// Deleting the device wipes it on the server and locally; the next call registers anew.
	if err := p.DeleteDevice(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := ids.Load(ctx); got != nil {
		t.Errorf("identity still stored after DeleteDevice")
	}
	dev3, err := c2.Device(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dev3.DeviceID == dev.DeviceID {
		t.Errorf("same device id after DeleteDevice")
	}
}

func TestRefusesHardProofOfWork(t *testing.T) {
	// A provider asking for 29 bits (more than MAX_POW_DIFFICULTY) is refused before any work.
	posts := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/meta" {
			posts++
			http.Error(w, "unexpected", http.StatusTeapot)
			return
		}
		m := protocol.MetaResponse{Protocol: 1, Services: []string{"store"}, Limits: protocol.DefaultLimits(),
			Pow: protocol.MetaPow{Difficulty: 29, Salt: "c2FsdA"}, Pages: []protocol.MetaPage{}, Functions: []protocol.MetaFunction{},
			Operator: protocol.Operator{Name: "greedy"}}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(m)
	}))
	defer hs.Close()
	c, err := client.New(client.Config{BaseURL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Device(context.Background())
	want := "cloud client: the provider asks for proof-of-work difficulty 29; clients refuse more than 28"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if posts != 0 {
		t.Errorf("%d requests besides /v1/meta", posts)
	}
}

func TestStoreEndToEnd(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	c := ts.newClient(t, nil)
	p, err := c.Plugin("card-share", "store")
	if err != nil {
		t.Fatal(err)
	}
	secret := map[string]any{"pin": "SECRET-4821", "n": 7}
	e2e := p.Store(true)
	v, err := e2e.Put(ctx, "prefs/main", secret, client.PutOptions{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if v < 1 {
		t.Fatalf("version %d", v)
	}
	var got map[string]any
	ver, err := e2e.GetJSON(ctx, "prefs/main", &got)
	if err != nil {
		t.Fatal(err)
	}
	if ver != v || got["pin"] != "SECRET-4821" || got["n"] != float64(7) {
		t.Errorf("GetJSON = %v, %v; want %v, %v", ver, got, v, secret)
	}
	// What the server holds is one envelope, with no trace of the plaintext.
	puts := ts.storage.stored()
	if len(puts) != 1 {
		t.Fatalf("server stored %d values, want 1", len(puts))
	}
	var env protocol.Envelope
	if err := json.Unmarshal(puts[0].Value, &env); err != nil || env.Validate() != nil {
		t.Fatalf("server holds %s, not an envelope (%v)", puts[0].Value, err)
	}
	for _, leak := range []string{"SECRET-4821", "pin", "prefs/main"} {
		if bytes.Contains(puts[0].Value, []byte(leak)) {
			t.Errorf("server-side value contains %q: %s", leak, puts[0].Value)
		}
	}
	// The same value read without the key is the envelope; the plaintext store is readable.
	raw, err := p.Store(false).Get(ctx, "prefs/main")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw.Value, puts[0].Value) {
		t.Errorf("plaintext read = %s, want the envelope %s", raw.Value, puts[0].Value)
	}
	if raw.ExpiresAt.IsZero() {
		t.Errorf("no expiry on a value written with a TTL")
	}
	// Without e2e the value is stored as is, so the check above can fail.
	if _, err := p.Store(false).Put(ctx, "plain", secret, client.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if puts := ts.storage.stored(); !bytes.Contains(puts[len(puts)-1].Value, []byte("SECRET-4821")) {
		t.Errorf("plaintext put stored %s", puts[len(puts)-1].Value)
	}
	// A plaintext value read through the e2e store is refused, not passed through.
	if _, err := e2e.Get(ctx, "plain"); err == nil || !strings.Contains(err.Error(), "not an envelope") && !strings.Contains(err.Error(), "envelope") {
		t.Errorf("e2e Get of a plaintext value: err = %v", err)
	}
	// An envelope moved to another key does not open there.
	if _, err := p.Store(false).Put(ctx, "moved", json.RawMessage(puts[0].Value), client.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e2e.Get(ctx, "moved"); err == nil || !strings.Contains(err.Error(), `sealed for key "prefs/main"`) {
		t.Errorf("e2e Get of a moved envelope: err = %v", err)
	}
	// Another plugin of the same device cannot open it either (its own key and namespace).
	other, _ := c.Plugin("other", "store")
	if it, err := other.Store(true).Get(ctx, "prefs/main"); err != nil || it != nil {
		t.Errorf("other plugin's Get = %v, %v; want nil, nil (separate namespace)", it, err)
	}
}

func TestStoreIfVersion(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	p, err := ts.newClient(t, nil).Plugin("demo", "store")
	if err != nil {
		t.Fatal(err)
	}
	st := p.Store(true)
	steps := []struct {
		name    string
		ifVer   *int64
		want    int64
		wantErr protocol.ErrorCode
	}{
		{"create", client.IfVersion(0), 1, ""},
		{"create again", client.IfVersion(0), 0, protocol.CodeConflict},
		{"update v1", client.IfVersion(1), 2, ""},
		{"stale v1", client.IfVersion(1), 0, protocol.CodeConflict},
		{"unconditional", nil, 3, ""},
		{"update v3", client.IfVersion(3), 4, ""},
	}
	for i, s := range steps {
		got, err := st.Put(ctx, "counter", map[string]int{"count": i}, client.PutOptions{IfVersion: s.ifVer})
		if s.wantErr != "" {
			if !client.IsCode(err, s.wantErr) {
				t.Errorf("%s: err = %v, want %s", s.name, err, s.wantErr)
			}
			var pe *protocol.Error
			if errors.As(err, &pe) && pe.Status != 409 {
				t.Errorf("%s: status %d, want 409", s.name, pe.Status)
			}
			continue
		}
		if err != nil || got != s.want {
			t.Errorf("%s: Put = %d, %v; want %d", s.name, got, err, s.want)
		}
	}
	var cur struct{ Count int }
	ver, err := st.GetJSON(ctx, "counter", &cur)
	if err != nil || ver != 4 || cur.Count != 5 {
		t.Errorf("GetJSON = %d %+v %v; want 4 {Count:5}", ver, cur, err)
	}
	for _, k := range []string{"history/a", "history/b", "other"} {
		if _, err := st.Put(ctx, k, k, client.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := st.List(ctx, "history/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range list {
		keys = append(keys, it.Key)
	}
	if strings.Join(keys, ",") != "history/a,history/b" {
		t.Errorf("List(history/) = %v", keys)
	}
	if err := st.Delete(ctx, "counter"); err != nil {
		t.Fatal(err)
	}
	if it, err := st.Get(ctx, "counter"); it != nil || err != nil {
		t.Errorf("Get after Delete = %v, %v", it, err)
	}
	// Bad keys are refused before any request.
	for _, k := range []string{"", "a/../b", "./x", "a//b/..", "sp ace", strings.Repeat("k", 257)} {
		if _, err := st.Put(ctx, k, 1, client.PutOptions{}); err == nil {
			t.Errorf("Put(%q) succeeded", k)
		}
	}
}

func TestTokenRefresh(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	p, err := ts.newClient(t, nil).Plugin("demo", "store")
	if err != nil {
		t.Fatal(err)
	}
	st := p.Store(false)
	if _, err := st.Put(ctx, "a", 1, client.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if p.Minted() != 1 {
		t.Fatalf("minted %d tokens for two requests, want 1", p.Minted())
	}
	// Nine minutes on, the token has less than a minute left: the client mints a new one first.
	ts.clock.Advance(9*time.Minute + 30*time.Second)
	if _, err := st.Get(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if p.Minted() != 2 {
		t.Errorf("minted %d tokens after 9.5 minutes, want 2", p.Minted())
	}
	// Eleven minutes later the old token would be refused; the current one is fresh.
	ts.clock.Advance(11 * time.Minute)
	if _, err := st.Get(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if p.Minted() != 3 || ts.count("POST /v1/auth/token") != 3 {
		t.Errorf("minted %d (server saw %d), want 3", p.Minted(), ts.count("POST /v1/auth/token"))
	}
}

func TestConcurrentTokenMint(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	p, err := ts.newClient(t, nil).Plugin("demo", "store")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			_, err := p.Token(ctx)
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if p.Minted() != 1 || ts.count("POST /v1/devices") != 1 {
		t.Errorf("16 concurrent Token calls minted %d tokens and registered %d devices, want 1 and 1", p.Minted(), ts.count("POST /v1/devices"))
	}
}

func TestTokenWithSkewedClock(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	// The phone's clock is 30 minutes slow; the server accepts ±5 minutes.
	c, err := client.New(client.Config{BaseURL: ts.URL, Now: func() time.Time { return time.Now().Add(-30 * time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plugin("demo", "store")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Store(false).Put(ctx, "k", true, client.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := ts.count("POST /v1/auth/token"); n != 2 {
		t.Errorf("%d token requests, want 2 (refused, then corrected)", n)
	}
	// The correction sticks: the token is fresh by the server's clock, so no new mint.
	if _, err := p.Store(false).Get(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if p.Minted() != 1 {
		t.Errorf("minted %d, want 1", p.Minted())
	}
}
