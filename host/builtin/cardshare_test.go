package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/viewer"
	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/campus/campustest"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// syncBuffer is a bytes.Buffer safe for the loggers of several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// shareRig is a host with the built-ins, signed in to the card stand-in, bound to a real
// reference Cloud server on loopback whose log (debug level) goes to log.
type shareRig struct {
	h     *host.Host
	m     *cloud.Manager
	stand *campustest.Stand
	cc    *campus.Client
	cloud string
	log   *syncBuffer
	// requests counts every request the Cloud server was sent.
	requests atomic.Int64
}

func newShareRig(t testing.TB, refresh time.Duration, consent bool) *shareRig {
	t.Helper()
	ctx := context.Background()
	old := CardShareRefresh
	CardShareRefresh = refresh
	t.Cleanup(func() { CardShareRefresh = old })

	stand := campustest.New()
	t.Cleanup(stand.Close)
	ss := &campus.MemorySessions{}
	signer := &campus.Signer{Sessions: ss, Bases: stand.Bases()}
	if res := signer.SignIn(ctx, "card", campustest.User, campustest.Password, campus.SignInOptions{}); !res.OK {
		t.Fatal(res.Err)
	}
	cc := &campus.Client{Sessions: ss, Bases: stand.Bases()}

	logs := &syncBuffer{}
	cfg := server.DefaultConfig(server.NewMemory())
	cfg.PowDifficulty = 4
	cfg.Pages = viewer.FS()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, bench := t.(*testing.B); bench {
		cfg.Limits.Channels.FramesPerMin = 1 << 30 // the benchmark measures the path, not the limit
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	rig := &shareRig{stand: stand, log: logs}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rig.requests.Add(1)
		srv.ServeHTTP(w, req)
	}))
	t.Cleanup(hs.Close)

	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := host.New(db, host.WithAbilities(abilities.New(db)), host.WithCampus(cc), Option(All()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	m := cloud.For(db)
	t.Cleanup(func() { cloud.Release(db) })
	if _, err := m.Use(ctx, hs.URL); err != nil {
		t.Fatal(err)
	}
	if consent {
		if _, err := m.Allow(ctx, cloud.DeclOf(Of(h, "card-share").Plugin.Manifest)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if s := activeShare(h); s != nil {
			s.ch.Close(context.Background())
			s.stop()
			<-s.done
		}
	})
	rig.h, rig.m, rig.cloud, rig.cc = h, m, hs.URL, cc
	rig.requests.Store(0) // setting the provider checked it
	return rig
}

func (r *shareRig) call(t *testing.T, actor host.Actor, tool, input string) (*host.CallResult, error) {
	t.Helper()
	e := &env{h: r.h}
	return e.call(t, actor, "card-share", tool, input)
}

func (r *shareRig) ok(t *testing.T, tool, input string) string {
	t.Helper()
	e := &env{h: r.h}
	return e.ok(t, host.ActorUser, "card-share", tool, input)
}

// nextCode waits for the viewer's next code frame, failing on anything but join noise.
func nextCode(t *testing.T, v *client.Viewer, within time.Duration) cardCodeFrame {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-v.Events():
			if !ok {
				t.Fatalf("the viewer's channel ended: %v", v.Err())
			}
			if ev.Type != client.EventMessage {
				continue
			}
			var f cardCodeFrame
			if err := json.Unmarshal(ev.Msg, &f); err != nil || f.T != "code" {
				t.Fatalf("frame %s: want a code frame", ev.Msg)
			}
			return f
		case <-deadline:
			t.Fatalf("no code within %s", within)
		}
	}
}

// TestCardShareEndToEnd: start as the person, a viewer joins with the link from the screen's
// link tool, says hello and gets a fresh payment code, then a new one every refresh; extend,
// status and stop work, and the viewer sees the share close. The link shows nowhere but the
// link tool's result: not in another tool's result, the audit log or the server's log.
func TestCardShareEndToEnd(t *testing.T) {
	r := newShareRig(t, time.Second, true)
	ctx := context.Background()

	if got := r.ok(t, "status", ""); !strings.Contains(got, `"sharing":false`) {
		t.Fatalf("status before start: %s", got)
	}
	started := r.ok(t, "start", "")
	var st CardShareStatus
	if err := json.Unmarshal([]byte(started), &st); err != nil || !st.Sharing || st.ExpiresAt == nil || st.Viewer != "none" || st.Screen != "/p/card-share/main" {
		t.Fatalf("start: %s", started)
	}
	if left := time.Until(time.UnixMilli(*st.ExpiresAt)); left < 29*time.Minute || left > 30*time.Minute+time.Second {
		t.Errorf("the share lasts %s, want 30 minutes", left)
	}
	// Starting again returns the running share, not a second channel.
	if again := r.ok(t, "start", ""); !strings.Contains(again, `"sharing":true`) {
		t.Fatalf("start again: %s", again)
	}
	var ln CardShareLink
	if err := json.Unmarshal([]byte(r.ok(t, "link", "")), &ln); err != nil || !ln.Sharing || !strings.HasPrefix(ln.Link, r.cloud+"/s/") || !strings.Contains(ln.Link, "#k=") {
		t.Fatalf("link: %+v %v", ln, err)
	}
	secret := ln.Link[strings.Index(ln.Link, "#k=")+3:]

	link, err := client.ParseSecretLink(ln.Link)
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	var meta cardShareMeta
	if err := json.Unmarshal(v.Meta(), &meta); err != nil || meta != (cardShareMeta{V: 1, Title: "校园卡付款码", NameHint: "张_", RefreshS: 1}) {
		t.Fatalf("meta %s: %v", v.Meta(), err)
	}
	// A second viewer with the same link finds the only seat taken.
	if v2, err := client.Join(ctx, link, client.ViewerOptions{}); err == nil {
		v2.Leave()
		t.Fatal("a second viewer joined a maxPeers 1 share")
	}
	// Junk from the viewer is ignored: only {"t":"hello"} asks for a code.
	if err := v.Send(ctx, map[string]any{"t": "hello", "code": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := v.Send(ctx, map[string]string{"t": "hello"}); err != nil {
		t.Fatal(err)
	}
	first := nextCode(t, v, 10*time.Second)
	// A tick may have sent a code before our hello, which then got it again: skip repeats.
	second := nextCode(t, v, 10*time.Second)
	for second.Seq == first.Seq {
		second = nextCode(t, v, 10*time.Second)
	}
	var issued []string
	r.stand.Set(func(s *campustest.Stand) { issued = append(issued, s.PayCodes...) })
	if first.Code == second.Code || second.Seq != first.Seq+1 || first.V != 1 || first.RefreshS != 1 {
		t.Fatalf("codes %+v then %+v", first, second)
	}
	// issued[0] is start's check that the card can pay, never sent; every code sent is a fresh
	// one the card issued, in order, none skipped.
	at := func(code string) int { return slices.Index(issued, code) }
	if at(first.Code) < 1 || at(second.Code) != at(first.Code)+1 {
		t.Errorf("sent %q, %q; the card issued %q", first.Code, second.Code, issued)
	}

	// Hello right after a code gets that code again, without asking the card for another.
	n := len(issued)
	r.stand.Set(func(s *campustest.Stand) { n = len(s.PayCodes) })
	if err := v.Send(ctx, map[string]string{"t": "hello"}); err != nil {
		t.Fatal(err)
	}
	if again := nextCode(t, v, 10*time.Second); again.Seq < second.Seq {
		t.Errorf("after a quick hello: %+v, want code %d or later", again, second.Seq)
	} else if again.Seq == second.Seq {
		if again.Code != second.Code {
			t.Errorf("the resent code %q is not the last one %q", again.Code, second.Code)
		}
		var now int
		r.stand.Set(func(s *campustest.Stand) { now = len(s.PayCodes) })
		if now != n && now != n+1 { // a refresh tick may have drawn one
			t.Errorf("a quick hello drew %d codes from the card", now-n)
		}
	}

	// The count goes up once the relay took the frame, which may be just after the viewer has it.
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := json.Unmarshal([]byte(r.ok(t, "status", "")), &st); err != nil {
			t.Fatal(err)
		}
		if st.Viewer == "online" && st.CodesSent >= 2 && st.RefreshedAt != nil {
			break
		} else if time.Now().After(end) {
			t.Fatalf("status while viewed: %+v", st)
		}
	}
	// The screen draws the link as its QR code and the widget draws the status, in both
	// languages, with no template failing.
	shareData, err := expr.FromJSON([]byte(r.ok(t, "status", "")))
	if err != nil {
		t.Fatal(err)
	}
	linkData, err := expr.FromJSON([]byte(r.ok(t, "link", "")))
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"zh-Hans", "en"} {
		drawn, err := genui.Draw(ctx, cardShareScreen, genui.DrawInput{Size: "lg", Locale: loc, Now: time.Now(), Data: map[string]any{"share": shareData, "link": linkData}})
		if err != nil || len(drawn.Problems) > 0 {
			t.Fatalf("screen (%s): %v %v", loc, err, drawn.Problems)
		}
		b, _ := json.Marshal(drawn.Root)
		if !strings.Contains(string(b), `"type":"QRCode"`) || !strings.Contains(string(b), secret) {
			t.Errorf("screen (%s) has no QR code of the link: %s", loc, b)
		}
		w, err := genui.Draw(ctx, cardShareWidget, genui.DrawInput{Size: "md", Locale: loc, Now: time.Now(), Data: map[string]any{"share": shareData}})
		if err != nil || len(w.Problems) > 0 {
			t.Fatalf("widget (%s): %v %v", loc, err, w.Problems)
		}
		if b, _ := json.Marshal(w.Root); strings.Contains(string(b), secret) || !strings.Contains(string(b), map[string]string{"zh-Hans": "朋友正在查看", "en": "Your friend is viewing"}[loc]) {
			t.Errorf("widget (%s): %s", loc, b)
		}
	}

	before := *st.ExpiresAt
	ext := r.ok(t, "extend", `{"minutes":20}`)
	if err := json.Unmarshal([]byte(ext), &st); err != nil || *st.ExpiresAt <= before {
		t.Fatalf("extend: %s", ext)
	}
	// 29:59 left + 20 min is capped at 30 min.
	if left := time.Until(time.UnixMilli(*st.ExpiresAt)); left > CardShareExtendMax+time.Second {
		t.Errorf("after extend %s left, want at most %s", left, CardShareExtendMax)
	}

	stopped := r.ok(t, "stop", "")
	if !strings.Contains(stopped, `"sharing":false`) {
		t.Fatalf("stop: %s", stopped)
	}
	for closed := false; !closed; {
		select {
		case ev, ok := <-v.Events():
			if !ok || ev.Type == client.EventClosed {
				if ok && ev.Reason != "owner" {
					t.Errorf("closed reason %q", ev.Reason)
				}
				closed = true
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the viewer did not see the share close")
		}
	}
	if got := r.ok(t, "link", ""); got != `{"sharing":false,"link":""}` {
		t.Errorf("link after stop: %s", got)
	}
	if _, err := r.call(t, host.ActorUser, "extend", ""); err == nil || !strings.Contains(err.Error(), "no payment code is being shared") {
		t.Errorf("extend after stop: %v", err)
	}

	// The link and its secret appear nowhere else.
	audit, err := r.h.Audit(ctx, "card-share", 100)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(audit)
	for where, text := range map[string]string{"start's result": started, "extend's result": ext, "the audit log": string(b), "the server log": r.log.String()} {
		if strings.Contains(text, secret) || strings.Contains(text, ln.Link) {
			t.Errorf("%s holds the share link", where)
		}
	}
	if !strings.Contains(r.log.String(), "level=") {
		t.Logf("the server logged nothing at debug level")
	}
}

// TestCardShareRefusals: the assistant may not read the link (userOnly), needs the person's
// confirmation to start (money: ask), and may stop; starting without a card session or
// without Cloud fails saying what to do, and opens no channel.
func TestCardShareRefusals(t *testing.T) {
	r := newShareRig(t, time.Minute, true)
	if res, err := r.call(t, host.ActorAgent, "link", ""); outcome(res, err) != "refused" {
		t.Errorf("the agent calling link: %s", outcome(res, err))
	}
	if res, err := r.call(t, host.ActorAgent, "start", ""); outcome(res, err) != "confirm" {
		t.Errorf("the agent calling start: %s", outcome(res, err))
	}
	if res, err := r.call(t, host.ActorScheduler, "start", ""); outcome(res, err) != "refused" {
		t.Errorf("a scheduled start: %s", outcome(res, err))
	}
	if res, err := r.call(t, host.ActorAgent, "stop", ""); outcome(res, err) != "ok" {
		t.Errorf("the agent calling stop: %s %v", outcome(res, err), err)
	}
	// The model's tool list has no link tool.
	tools, err := r.h.AgentTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Plugin == "card-share" && tl.Tool == "link" {
			t.Error("the link tool is offered to the model")
		}
	}

	r.stand.Expire("card")
	_, err = r.call(t, host.ActorUser, "start", "")
	if err == nil || !strings.Contains(err.Error(), "not signed in to card") || !strings.Contains(err.Error(), "harness campus login card") {
		t.Errorf("start without a card session: %v", err)
	}
	// The faces can tell it from other failures: the web app points to its own sign-in.
	var nse *campus.NotSignedInError
	if !errors.As(err, &nse) || nse.Service != "card" {
		t.Errorf("start without a card session does not carry a NotSignedInError: %#v", err)
	}
}

// TestCardShareConsent: before the person allows card-share to use Cloud, start fails saying
// where to allow it, and neither the card nor the provider is asked for anything; after
// consent it shares; after the consent is withdrawn it fails again.
func TestCardShareConsent(t *testing.T) {
	r := newShareRig(t, time.Minute, false)
	ctx := context.Background()
	// The provider was last heard from long ago, so a status would probe it.
	r.m.SetClock(func() time.Time { return time.Now().Add(time.Minute) })
	_, err := r.call(t, host.ActorUser, "start", "")
	var ce *cloud.Error
	if !errors.As(err, &ce) || ce.Code != cloud.CodeConsentRequired || !strings.Contains(err.Error(), "harness cloud consent card-share on") {
		t.Fatalf("start before consent: %v", err)
	}
	// requestConsent(): the refusal asks the faces to show the consent panel; nothing is granted.
	if a := ce.Ask; a == nil || a.Plugin != "card-share" || a.Provider == "" || a.Panel != "/v1/cloud/plugins/card-share/consent" ||
		a.Command != "harness cloud consent card-share on" || a.Settings != "/settings/cloud" {
		t.Fatalf("consent request = %+v", ce.Ask)
	}
	if ok, _ := r.m.Consented(ctx, cloud.DeclOf(Of(r.h, "card-share").Plugin.Manifest)); ok {
		t.Fatal("asking for consent granted it")
	}
	if n := r.stand.Count("card GET /berserker-app"); n != 0 || activeShare(r.h) != nil {
		t.Fatalf("before consent: %d card requests, share %v", n, activeShare(r.h))
	}
	// Not even an anonymous GET /v1/meta goes to the provider before the person allows it.
	if n := r.requests.Load(); n != 0 {
		t.Fatalf("before consent start sent %d requests to the Cloud provider", n)
	}
	if _, err := r.m.Allow(ctx, cloud.DeclOf(Of(r.h, "card-share").Plugin.Manifest)); err != nil {
		t.Fatal(err)
	}
	if got := r.ok(t, "start", ""); !strings.Contains(got, `"sharing":true`) {
		t.Fatalf("start after consent: %s", got)
	}
	r.ok(t, "stop", "")
	if err := r.m.Revoke(ctx, "card-share"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(t, host.ActorUser, "start", ""); !cloud.IsCode(err, cloud.CodeConsentRequired) {
		t.Fatalf("start after the consent was withdrawn: %v", err)
	}
	// With Cloud off there is a clear error too.
	if _, err := r.m.Use(ctx, "off"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(t, host.ActorUser, "start", ""); err == nil || !strings.Contains(err.Error(), "no Cloud provider is set") {
		t.Fatalf("start with Cloud off: %v", err)
	}
}

// TestCardShareResume: a share a previous run of the host left open (its keys kept by the Cloud
// handle, its process gone) goes on when the person starts again, with the same link, so the
// viewer who holds it gets codes again; stop then closes it.
func TestCardShareResume(t *testing.T) {
	r := newShareRig(t, time.Second, true)
	ctx := context.Background()
	cx := newContext(ctx, r.h, "card-share", host.ActorUser, "", nil)
	cp, err := cx.Cloud()
	if err != nil {
		t.Fatal(err)
	}
	old, err := cp.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, MaxPeers: 1, Page: "view"})
	if err != nil {
		t.Fatal(err)
	}
	link := old.Link()
	old.Disconnect() // the previous process is gone
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()

	r.ok(t, "start", "")
	var ln CardShareLink
	if err := json.Unmarshal([]byte(r.ok(t, "link", "")), &ln); err != nil || ln.Link != link.Reveal() {
		t.Fatalf("after a restart start gave a new link (or none): %v", err)
	}
	if err := v.Send(ctx, map[string]string{"t": "hello"}); err != nil {
		t.Fatal(err)
	}
	if f := nextCode(t, v, 10*time.Second); f.Code == "" {
		t.Fatal("no code on the resumed share")
	}
	r.ok(t, "stop", "")
	for {
		select {
		case ev, ok := <-v.Events():
			if !ok || ev.Type == client.EventClosed {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the resumed share did not close")
		}
	}
}

// TestCardShareStopAfterRestart: stop with no share running here closes one a previous run
// left open.
func TestCardShareStopAfterRestart(t *testing.T) {
	r := newShareRig(t, time.Minute, true)
	ctx := context.Background()
	cp, err := newContext(ctx, r.h, "card-share", host.ActorUser, "", nil).Cloud()
	if err != nil {
		t.Fatal(err)
	}
	old, err := cp.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, MaxPeers: 1, Page: "view"})
	if err != nil {
		t.Fatal(err)
	}
	link := old.Link()
	old.Disconnect()
	r.ok(t, "stop", "")
	if _, err := client.Join(ctx, link, client.ViewerOptions{}); err == nil {
		t.Fatal("a viewer joined a share stop closed")
	}
	if ids, _ := cp.Channels(ctx); len(ids) != 0 {
		t.Errorf("saved channels after stop: %v", ids)
	}
}

// TestCardShareManifest: the Cloud declaration is the seed's, disclosure line by line.
func TestCardShareManifest(t *testing.T) {
	c := MustCompile(CardShare)
	m := c.Plugin.Manifest
	if m.Cloud == nil || m.Cloud.Protocol != 1 || !m.Cloud.E2E || len(m.Cloud.Uses) != 1 || m.Cloud.Uses[0] != "channels" ||
		len(m.Cloud.Pages) != 1 || m.Cloud.Pages[0] != "view" || len(m.Cloud.DisclosureZh) != 2 || len(m.Cloud.DisclosureEn) != 2 {
		t.Fatalf("cloud %+v", m.Cloud)
	}
	if got := c.Plugin.Tool("link"); got == nil || !got.UserOnly || got.Effect != plugin.EffectRead {
		t.Errorf("link tool %+v", got)
	}
	if got := c.Plugin.Tool("start"); got == nil || got.Effect != plugin.EffectMoney {
		t.Errorf("start tool %+v", got)
	}
	found := false
	for _, p := range viewer.Pages() {
		found = found || p == [2]string{"card-share", "view"}
	}
	if !found {
		t.Errorf("the viewer pages %v lack card-share/view", viewer.Pages())
	}
	if nameHint("王小明") != "王_明" || nameHint("张三") != "张_" || nameHint("") != "" || nameHint("A") != "A_" {
		t.Error("nameHint")
	}
}

// BenchmarkCardShareCode is one refresh end to end on loopback: draw a payment code from the
// card stand-in, seal it for the viewer, relay it through the reference server, and open it on
// the viewer's side (cloud/client Viewer, as the page does).
func BenchmarkCardShareCode(b *testing.B) {
	r := newShareRig(b, time.Hour, true)
	ctx := context.Background()
	e := &env{h: r.h}
	e.ok(b, host.ActorUser, "card-share", "start", "")
	var ln CardShareLink
	if err := json.Unmarshal([]byte(e.ok(b, host.ActorUser, "card-share", "link", "")), &ln); err != nil {
		b.Fatal(err)
	}
	link, err := client.ParseSecretLink(ln.Link)
	if err != nil {
		b.Fatal(err)
	}
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Leave()
	if err := v.Send(ctx, map[string]string{"t": "hello"}); err != nil {
		b.Fatal(err)
	}
	recv := func() {
		for ev := range v.Events() {
			if ev.Type == client.EventMessage {
				return
			}
		}
		b.Fatal("the viewer's channel ended")
	}
	recv()
	s := activeShare(r.h)
	b.ResetTimer()
	for b.Loop() {
		s.sendCode(ctx)
		recv()
	}
}
