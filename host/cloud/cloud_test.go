package cloud

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/plugin"
)

func mustUse(t *testing.T, m *Manager, url string) *Meta {
	t.Helper()
	meta, err := m.Use(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

func wantCode(t *testing.T, err error, c Code) {
	t.Helper()
	if !IsCode(err, c) {
		t.Fatalf("err = %v, want code %s", err, c)
	}
}

func TestConsentFlow(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	d := storeDecl("counter", false)
	p, err := m.Plugin(d)
	if err != nil {
		t.Fatal(err)
	}
	// No provider: unavailable, not consent.
	_, err = p.Store().Put(ctx, "n", 1, PutOptions{})
	wantCode(t, err, CodeUnavailable)
	if _, err := m.Allow(ctx, d); !IsCode(err, CodeUnavailable) {
		t.Fatalf("Allow without a provider: %v", err)
	}

	mustUse(t, m, pr.URL)
	_, err = p.Store().Put(ctx, "n", 1, PutOptions{})
	wantCode(t, err, CodeConsentRequired)
	if _, err := p.Store().Get(ctx, "n"); !IsCode(err, CodeConsentRequired) {
		t.Fatalf("Get before consent: %v", err)
	}
	if n := pr.count("POST /v1/devices"); n != 0 {
		t.Fatalf("the device registered before any consent (%d registrations)", n)
	}

	c, err := m.Allow(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != strings.TrimPrefix(pr.URL, "http://") || c.At.IsZero() || len(c.DisclosureZh) != 1 || c.DisclosureEn[0] != d.DisclosureEn[0] {
		t.Fatalf("consent record = %+v", c)
	}
	v, err := p.Store().Put(ctx, "n", map[string]int{"count": 1}, PutOptions{IfVersion: client.IfVersion(0)})
	if err != nil || v != 1 {
		t.Fatalf("Put after consent = %d, %v", v, err)
	}
	var got struct{ Count int }
	if ver, err := p.Store().GetJSON(ctx, "n", &got); err != nil || ver != 1 || got.Count != 1 {
		t.Fatalf("GetJSON = %d %+v %v", ver, got, err)
	}
	// A stale ifVersion is the provider's conflict, as CodeProtocol.
	_, err = p.Store().Put(ctx, "n", 2, PutOptions{IfVersion: client.IfVersion(0)})
	wantCode(t, err, CodeProtocol)
	if !isWire(err, protocol.CodeConflict) {
		t.Fatalf("wire code of %v, want conflict", err)
	}

	// Revoked: refused again.
	if err := m.Revoke(ctx, d.Plugin); err != nil {
		t.Fatal(err)
	}
	_, err = p.Store().Get(ctx, "n")
	wantCode(t, err, CodeConsentRequired)

	// Allowed again, then its data cleared: gone on the provider and from the mirror.
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	if u, _ := m.Usage(ctx, d.Plugin); u.Keys != 1 || u.MaxKeys == 0 {
		t.Fatalf("usage before clearing = %+v", u)
	}
	if err := m.ClearPlugin(ctx, d); err != nil {
		t.Fatal(err)
	}
	if it, err := p.Store().Get(ctx, "n"); err != nil || it != nil {
		t.Fatalf("Get after clearing = %+v, %v", it, err)
	}
	if u, _ := m.Usage(ctx, d.Plugin); u.Keys != 0 {
		t.Fatalf("usage after clearing = %+v", u)
	}
	if ok, _ := m.Consented(ctx, d); !ok {
		t.Fatal("clearing the data withdrew the consent")
	}
}

func TestConsentNamesItsProvider(t *testing.T) {
	ctx := context.Background()
	a, b := newProvider(t, false), newProvider(t, false)
	m, _ := newManager(t)
	d := storeDecl("counter", false)
	p, _ := m.Plugin(d)
	mustUse(t, m, a.URL)
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Store().Put(ctx, "k", 1, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	mustUse(t, m, b.URL)
	_, err := p.Store().Put(ctx, "k", 1, PutOptions{})
	wantCode(t, err, CodeConsentRequired)
	mustUse(t, m, a.URL)
	if _, err := p.Store().Put(ctx, "k", 2, PutOptions{}); err != nil {
		t.Fatalf("back on the consented provider: %v", err)
	}
	// A plugin update that adds a service asks again.
	d2 := storeDecl("counter", false, "store", "channels")
	p2, _ := m.Plugin(d2)
	_, err = p2.Store().Get(ctx, "k")
	wantCode(t, err, CodeConsentRequired)
}

func TestE2ERefusesPlaintext(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("secret-notes", true)
	p, _ := m.Plugin(d)
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	_, err := p.Store().Put(ctx, "note", "my student number is 2100012345", PutOptions{Plaintext: true})
	wantCode(t, err, CodeE2ERequired)
	if n := len(pr.store.stored()); n != 0 {
		t.Fatalf("a refused plaintext write reached the provider (%d puts)", n)
	}
	if _, err := p.Store().Put(ctx, "note", "my student number is 2100012345", PutOptions{}); err != nil {
		t.Fatal(err)
	}
	puts := pr.store.stored()
	if len(puts) != 1 || bytes.Contains(puts[0].Value, []byte("2100012345")) || !bytes.Contains(puts[0].Value, []byte(`"c":`)) {
		t.Fatalf("the provider stored %s, want an envelope without the plaintext", puts[0].Value)
	}
	var s string
	if _, err := p.Store().GetJSON(ctx, "note", &s); err != nil || s != "my student number is 2100012345" {
		t.Fatalf("read back %q, %v", s, err)
	}
	// A plugin without e2e may write plaintext, and the provider sees it.
	d2 := storeDecl("public-counter", false)
	p2, _ := m.Plugin(d2)
	if _, err := m.Allow(ctx, d2); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Store().Put(ctx, "n", 41, PutOptions{Plaintext: true}); err != nil {
		t.Fatal(err)
	}
	puts = pr.store.stored()
	if got := string(puts[len(puts)-1].Value); got != "41" {
		t.Fatalf("plaintext store got %s", got)
	}
	// The mirror on disk is sealed too: the database never holds the note in the clear.
	raw, err := os.ReadFile(m.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("2100012345")) {
		t.Fatal("the host database holds the e2e value in plaintext")
	}
}

func TestOffline(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, true)
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("counter", true, "store", "functions")
	d.Functions = []string{"stats"}
	p, _ := m.Plugin(d)
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := p.SetDocument(protocol.DocumentRef{Link: "https://github.com/pkuinfo/plugins/tree/main/counter", Hash: "sha256:" + strings.Repeat("ab", 32)}); err != nil {
		t.Fatal(err)
	}
	st := p.Store()
	if _, err := st.Put(ctx, "a", map[string]int{"count": 3}, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "gone-soon", 1, PutOptions{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	out, err := p.Call(ctx, "stats", map[string]int{"x": 1})
	if err != nil || !strings.Contains(string(out), `"fn":"stats"`) || !strings.Contains(string(out), "abab") {
		t.Fatalf("Call online = %s, %v", out, err)
	}
	if s := p.Status(ctx); !s.Online || !s.Available {
		t.Fatalf("status online = %+v", s)
	}

	pr.stop()
	// A read comes from the mirror, marked as such.
	it, err := st.Get(ctx, "a")
	if err != nil || it == nil || !it.Mirror || string(it.Value) != `{"count":3}` || it.Version != 1 {
		t.Fatalf("offline Get = %+v, %v", it, err)
	}
	if it, err := st.Get(ctx, "never-written"); err != nil || it != nil {
		t.Fatalf("offline Get of an unknown key = %+v, %v", it, err)
	}
	keys, err := st.List(ctx, "")
	if err != nil || len(keys) != 2 {
		t.Fatalf("offline List = %+v, %v", keys, err)
	}
	// Writes and calls fail at once, and nothing is queued.
	_, err = st.Put(ctx, "a", map[string]int{"count": 4}, PutOptions{})
	wantCode(t, err, CodeOffline)
	wantCode(t, st.Delete(ctx, "a"), CodeOffline)
	_, err = p.Call(ctx, "stats", nil)
	wantCode(t, err, CodeOffline)
	if it, _ := st.Get(ctx, "a"); it == nil || string(it.Value) != `{"count":3}` {
		t.Fatalf("a failed offline write changed the mirror: %+v", it)
	}
	if s := p.Status(ctx); s.Online || s.Available || s.Reason == "" {
		t.Fatalf("status offline = %+v", s)
	}
}

func TestStatus(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	d := storeDecl("counter", false)
	p, _ := m.Plugin(d)
	if s := p.Status(ctx); s.Provider != "off" || s.Reason != "no Cloud provider is set" || s.Why != WhyNoProvider || s.Available || s.BaseURL != "" {
		t.Fatalf("status off = %+v", s)
	}
	mustUse(t, m, pr.URL)
	s := p.Status(ctx)
	if s.Provider != "custom" || s.BaseURL != pr.URL || s.Consented || !s.Online || s.Available {
		t.Fatalf("status before consent = %+v", s)
	}
	b, _ := json.Marshal(s)
	for _, k := range []string{`"provider":"custom"`, `"baseURL":`, `"consented":false`, `"online":true`} {
		if !strings.Contains(string(b), k) {
			t.Fatalf("status JSON %s lacks %s", b, k)
		}
	}
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	if s := p.Status(ctx); !s.Consented || !s.Available || s.Reason != "" {
		t.Fatalf("status after consent = %+v", s)
	}
	if _, err := m.Use(ctx, "off"); err != nil {
		t.Fatal(err)
	}
	if s := p.Status(ctx); s.Provider != "off" || s.BaseURL != "" || s.Available {
		t.Fatalf("status after off = %+v", s)
	}
}

func TestAvailability(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false) // offers store and channels, no functions
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	for _, tc := range []struct {
		uses []string
		ok   bool
		why  string
	}{
		{[]string{"store"}, true, ""},
		{[]string{"channels", "mailbox"}, true, ""},
		{[]string{"store", "functions"}, false, "does not offer functions"},
		{[]string{"push"}, false, "does not offer push"},
	} {
		d := storeDecl("p", false, tc.uses...)
		ok, why := m.Availability(ctx, d)
		if ok != tc.ok || !strings.Contains(why, tc.why) || (!ok && !strings.Contains(why, "127.0.0.1")) {
			t.Errorf("uses %v: %v %q, want %v %q", tc.uses, ok, why, tc.ok, tc.why)
		}
	}
	d := storeDecl("fn-user", false, "store", "functions")
	p, _ := m.Plugin(d)
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	_, err := p.Call(ctx, "stats", nil)
	wantCode(t, err, CodeUnavailable)
	if s := p.Status(ctx); s.Available || !strings.Contains(s.Reason, "functions") || s.Why != WhyNotOffered || len(s.Missing) != 1 || s.Missing[0] != "functions" {
		t.Fatalf("status of a plugin using an unoffered service = %+v", s)
	}
	// A service the manifest does not list is refused by the host.
	d2 := storeDecl("store-only", false, "store")
	p2, _ := m.Plugin(d2)
	if _, err := m.Allow(ctx, d2); err != nil {
		t.Fatal(err)
	}
	_, err = p2.OpenChannel(ctx, client.OpenOptions{TTL: time.Minute})
	wantCode(t, err, CodeNotDeclared)
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	meta, err := m.Check(ctx, pr.URL+"/some/path")
	if err != nil {
		t.Fatal(err)
	}
	if meta.Origin != pr.URL || meta.Protocol != 1 || len(meta.Services) == 0 || meta.Limits.Store.MaxKeys == 0 {
		t.Fatalf("meta = %+v", meta)
	}
	notCloud := newHTTP(t)
	for _, tc := range []struct{ url, want string }{
		{"", "empty"},
		{"example.org", "not an absolute URL"},
		{"ftp://example.org", `scheme "ftp"`},
		{"http://example.org", "plain http only to localhost"},
		{"https://user:pw@example.org", "no user name"},
		{"http://127.0.0.1:1", "GET /v1/meta"},
		{notCloud, "GET /v1/meta"},
	} {
		_, err := m.Check(ctx, tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q) = %v, want an error with %q", tc.url, err, tc.want)
		}
		if _, err := m.Use(ctx, tc.url); err == nil && tc.url != "" {
			t.Errorf("Use(%q) kept a provider that failed the check", tc.url)
		}
	}
	if base, _ := m.Provider(ctx); base != "" {
		t.Fatalf("a failed Use left provider %q", base)
	}
}

func TestIdentitySealedAndForgotten(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, db := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("counter", false)
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	p, _ := m.Plugin(d)
	if _, err := p.Store().Put(ctx, "n", 1, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	id, err := (&vaultIdentities{m: m, origin: pr.URL}).Load(ctx)
	if err != nil || id == nil || id.DeviceID == "" {
		t.Fatalf("identity = %v, %v", id, err)
	}
	raw, _ := os.ReadFile(db.Path())
	for _, secret := range []string{protocol.B64.EncodeToString(id.Sign.Seed()), protocol.B64.EncodeToString(id.StoreSecret[:]), "signPriv", "storeSecret"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Fatalf("the database holds %q of the identity in plaintext", secret)
		}
	}
	// A restart keeps the device: no second registration.
	Release(db)
	m2 := For(db)
	p2, _ := m2.Plugin(d)
	if _, err := p2.Store().Get(ctx, "n"); err != nil {
		t.Fatal(err)
	}
	if n := pr.count("POST /v1/devices"); n != 1 {
		t.Fatalf("%d registrations, want 1 across a restart", n)
	}
	// Delete all cloud data: the device is deleted on the provider and forgotten here.
	if err := m2.ForgetAll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pr.count("DELETE /v1/devices/me"); n != 1 {
		t.Fatalf("DELETE /v1/devices/me sent %d times", n)
	}
	if id, _ := (&vaultIdentities{m: m2, origin: pr.URL}).Load(ctx); id != nil {
		t.Fatal("the identity survived ForgetAll")
	}
	if it, err := p2.Store().Get(ctx, "n"); err != nil || it != nil {
		t.Fatalf("after ForgetAll Get = %+v, %v (a new device has no data)", it, err)
	}
	if n := pr.count("POST /v1/devices"); n != 2 {
		t.Fatalf("%d registrations, want a new device after ForgetAll", n)
	}
}

func TestForgetAllOffline(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("counter", false)
	m.Allow(ctx, d)
	p, _ := m.Plugin(d)
	if _, err := p.Store().Put(ctx, "n", 1, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	pr.stop()
	wantCode(t, m.ForgetAll(ctx), CodeOffline)
	if id, _ := (&vaultIdentities{m: m, origin: pr.URL}).Load(ctx); id == nil {
		t.Fatal("an offline ForgetAll forgot the identity, leaving the device's data on the provider")
	}
}

func TestChannels(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, db := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("card-share", true, "channels")
	p, _ := m.Plugin(d)
	_, err := p.OpenChannel(ctx, client.OpenOptions{TTL: time.Minute, MaxPeers: 1})
	wantCode(t, err, CodeConsentRequired)
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 30 * time.Minute, MaxPeers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := ch.Link().String(); s != "[secret link]" {
		t.Fatalf("link prints %q", s)
	}
	if b, _ := json.Marshal(map[string]any{"link": ch.Link()}); string(b) != `{"link":"[secret link]"}` {
		t.Fatalf("link marshals to %s", b)
	}
	ids, err := p.Channels(ctx)
	if err != nil || len(ids) != 1 || ids[0] != ch.ID() {
		t.Fatalf("Channels = %v, %v", ids, err)
	}
	raw, _ := os.ReadFile(db.Path())
	if bytes.Contains(raw, []byte(ch.Link().Reveal())) {
		t.Fatal("the database holds the share link")
	}
	// The viewer joins; after a restart the owner resumes and sees the peer.
	link := ch.Link()
	ch.Disconnect()
	Release(db)
	p2, _ := For(db).Plugin(d)
	ch2, err := p2.ResumeChannel(ctx, ids[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ch2.Disconnect()
	if ch2.Link().Reveal() != link.Reveal() {
		t.Fatal("the resumed channel has another link")
	}
	waitFor(t, ch2.Events(), client.EventConnected)
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	waitFor(t, ch2.Events(), client.EventJoin)
	if u, _ := For(db).Usage(ctx, d.Plugin); u.Channels != 1 {
		t.Fatalf("usage = %+v", u)
	}
	if err := p2.CloseChannel(ctx, ch2); err != nil {
		t.Fatal(err)
	}
	if ids, _ := p2.Channels(ctx); len(ids) != 0 {
		t.Fatalf("a closed channel is still listed: %v", ids)
	}
}

func waitFor(t *testing.T, events <-chan client.Event, want client.EventType) client.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("events ended while waiting for %s", want)
			}
			if ev.Type == want {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event in 10 s", want)
		}
	}
}

// A plugin that also uses a service the provider does not offer still reaches the ones it does:
// its token asks only for offered services.
func TestPartlyOffered(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false) // no functions
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("mixed", false, "store", "functions")
	p, _ := m.Plugin(d)
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Store().Put(ctx, "k", 1, PutOptions{}); err != nil {
		t.Fatalf("store of a plugin that also uses an unoffered service: %v", err)
	}
	_, err := p.Call(ctx, "f", nil)
	wantCode(t, err, CodeUnavailable)
}

// A host channel's owner socket comes back by itself after the connection drops (the
// client's backoff), and frames flow again.
func TestChannelReconnects(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("card-share", true, "channels")
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	p, _ := m.Plugin(d)
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 30 * time.Minute, MaxPeers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()
	waitFor(t, ch.Events(), client.EventConnected)
	v, err := client.Join(ctx, ch.Link(), client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	waitFor(t, ch.Events(), client.EventJoin)
	pr.ln.dropAll()
	waitFor(t, ch.Events(), client.EventDisconnected)
	waitFor(t, ch.Events(), client.EventConnected)
	waitFor(t, v.Events(), client.EventConnected)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := ch.Send(ctx, v.PeerID(), map[string]string{"t": "code"}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("send after the reconnect: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ev := waitFor(t, v.Events(), client.EventMessage); string(ev.Msg) != `{"t":"code"}` {
		t.Fatalf("viewer got %s", ev.Msg)
	}
}

// A provider that accepts connections and never answers (a network dropping packets) is
// offline after RequestTimeout: the write fails, the read comes from the mirror.
func TestSilentProviderIsOffline(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("counter", false)
	m.Allow(ctx, d)
	p, _ := m.Plugin(d)
	if _, err := p.Store().Put(ctx, "k", 7, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// The same address now accepts and says nothing.
	addr := strings.TrimPrefix(pr.URL, "http://")
	pr.stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	old := requestTimeout
	requestTimeout = 300 * time.Millisecond
	defer func() { requestTimeout = old }()
	_, err = p.Store().Put(ctx, "k", 8, PutOptions{})
	wantCode(t, err, CodeOffline)
	if it, err := p.Store().Get(ctx, "k"); err != nil || it == nil || !it.Mirror || string(it.Value) != "7" {
		t.Fatalf("read from a silent provider = %+v, %v", it, err)
	}
}

// A consent to a plugin's server functions covers one version of its document: the updated
// plugin asks again, and tokens carry the consented version.
func TestConsentCoversTheDocumentVersion(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, true)
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	v1 := &plugin.Plugin{Source: "https://github.com/student/fn/tree/main/fn", Hash: "sha256:" + strings.Repeat("1", 64),
		Manifest: &plugin.Manifest{ID: "fn", Server: &plugin.Server{Functions: []*plugin.ServerFunction{{Tool: &plugin.Tool{Name: "stats"}}}}, Cloud: &plugin.Cloud{DisclosureZh: []string{"x"}, DisclosureEn: []string{"x"}}}}
	d1 := DeclOfPlugin(v1)
	if d1.Document == nil || d1.Document.Hash != v1.Hash || !slices.Contains(d1.Uses, "functions") {
		t.Fatalf("decl = %+v", d1)
	}
	if _, err := m.Allow(ctx, d1); err != nil {
		t.Fatal(err)
	}
	out, err := m.CallFor(ctx, v1, "stats", nil)
	if err != nil || !strings.Contains(string(out), v1.Hash[7:]) {
		t.Fatalf("call of the consented version = %s, %v", out, err)
	}
	if c, _ := m.ConsentOf(ctx, "fn"); c.Document == nil || *c.Document != *d1.Document {
		t.Fatalf("consent record = %+v", c)
	}
	v2 := *v1
	v2.Hash = "sha256:" + strings.Repeat("2", 64)
	_, err = m.CallFor(ctx, &v2, "stats", nil)
	wantCode(t, err, CodeConsentRequired)
	if _, err := m.Allow(ctx, DeclOfPlugin(&v2)); err != nil {
		t.Fatal(err)
	}
	if out, err := m.CallFor(ctx, &v2, "stats", nil); err != nil || !strings.Contains(string(out), strings.Repeat("2", 64)) {
		t.Fatalf("call of the new version = %s, %v", out, err)
	}
}

// Withdrawing consent ends the plugin's open channels at once (the viewer sees the end, and
// nothing more is relayed); turning Cloud off ends every channel.
func TestRevokeEndsChannels(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	mustUse(t, m, pr.URL)
	open := func(plugin string) (*client.Channel, *client.Viewer) {
		t.Helper()
		d := storeDecl(plugin, true, "channels")
		if _, err := m.Allow(ctx, d); err != nil {
			t.Fatal(err)
		}
		p, _ := m.Plugin(d)
		ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 30 * time.Minute, MaxPeers: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ch.Disconnect)
		waitFor(t, ch.Events(), client.EventConnected)
		v, err := client.Join(ctx, ch.Link(), client.ViewerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(v.Leave)
		waitFor(t, ch.Events(), client.EventJoin)
		for !waitFor(t, ch.Events(), client.EventPeer).Online {
		}
		return ch, v
	}
	shareCh, shareV := open("card-share")
	otherCh, otherV := open("other")
	if err := m.Revoke(ctx, "card-share"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, shareV.Events(), client.EventClosed)
	if err := shareCh.Send(ctx, "*", map[string]any{"code": "after revoke"}); err == nil {
		t.Error("a channel of a plugin whose consent was withdrawn still sends")
	}
	// The other plugin's channel goes on.
	if err := otherCh.Send(ctx, "*", map[string]any{"n": 1}); err != nil {
		t.Fatalf("the other plugin's channel: %v", err)
	}
	waitFor(t, otherV.Events(), client.EventMessage)
	if _, err := m.Use(ctx, "off"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, otherV.Events(), client.EventClosed)
}

// Asking the status of a plugin the person has not allowed sends nothing to the provider, not
// even an anonymous probe of GET /v1/meta.
func TestStatusBeforeConsentAsksNothing(t *testing.T) {
	ctx := context.Background()
	pr := newProvider(t, false)
	m, _ := newManager(t)
	clock := time.Now()
	m.SetClock(func() time.Time { return clock })
	mustUse(t, m, pr.URL)
	clock = clock.Add(time.Hour) // past the probe interval
	before := pr.count("GET /v1/meta")
	p, _ := m.Plugin(storeDecl("notes", true, "store"))
	st := p.Status(ctx)
	if st.Consented || st.Why != WhyConsent {
		t.Fatalf("status = %+v", st)
	}
	if n := pr.count("GET /v1/meta"); n != before {
		t.Errorf("status before consent probed the provider (%d → %d GET /v1/meta)", before, n)
	}
}

// Forgetting a channel after the provider changed deletes the keys saved under the old one.
func TestForgetChannelAfterProviderSwitch(t *testing.T) {
	ctx := context.Background()
	pr, pr2 := newProvider(t, false), newProvider(t, false)
	m, db := newManager(t)
	mustUse(t, m, pr.URL)
	d := storeDecl("card-share", true, "channels")
	if _, err := m.Allow(ctx, d); err != nil {
		t.Fatal(err)
	}
	p, _ := m.Plugin(d)
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 30 * time.Minute, MaxPeers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ch.Disconnect()
	mustUse(t, m, pr2.URL)
	if err := p.ForgetChannel(ctx, ch.ID()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM cloud_secrets WHERE name LIKE 'channel %'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d channel keys are left after ForgetChannel", n)
	}
}
