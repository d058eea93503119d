package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/abilities"
	hostapi "github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/campus/campustest"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/internal/cli"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/web"
)

// logBuffer collects log lines from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCardShareInChromium is card-share end to end: a host signed in to the campus card
// stand-in, with Cloud set to a reference server on loopback (serving viewer.FS()) and the
// person's consent, starts a share through Host.Call; headless Chromium opens the link the
// screen's QR code carries. The page must decrypt the payment code and show it as a QR code,
// show each refresh (a new code from the card, in order), keep working across a reload with
// the key gone from the address bar, and remove the code when the share stops. The link and its
// secret must appear in no log: the server's (debug level), an access log of every request, the
// host's slog output, the audit log, or any tool result but the link tool's. The app subtest
// does the same from the person's side: the web app's card-share screen, its start button (which
// asks first), the link only as the screen's QR code, and its stop button. Screenshots:
// card-share[-en][-ended], card-share-app-idle, card-share-app-sharing, card-share-app-viewer,
// each -phone and -desktop.
func TestCardShareInChromium(t *testing.T) {
	bctx := browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	old := builtin.CardShareRefresh
	builtin.CardShareRefresh = 2 * time.Second
	defer func() { builtin.CardShareRefresh = old }()
	hostLog := &logBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(hostLog, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)

	// The reference server, with its log and an access log.
	serverLog, accessLog := &logBuffer{}, &logBuffer{}
	base := cloudServer(t, ctx, func(cfg *server.Config) {
		cfg.Logger = slog.New(slog.NewTextHandler(serverLog, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}, func(srv http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(accessLog, "%s %s %q referer=%q\n", r.Method, r.RequestURI, r.Header.Get("User-Agent"), r.Header.Get("Referer"))
			srv.ServeHTTP(w, r)
		})
	})

	// The host: card session from the stand-in, Cloud set and consented.
	stand := campustest.New()
	defer stand.Close()
	ss := &campus.MemorySessions{}
	if res := (&campus.Signer{Sessions: ss, Bases: stand.Bases()}).SignIn(ctx, "card", campustest.User, campustest.Password, campus.SignInOptions{}); !res.OK {
		t.Fatal(res.Err)
	}
	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := host.New(db, host.WithAbilities(abilities.New(db)), host.WithCampus(&campus.Client{Sessions: ss, Bases: stand.Bases()}), builtin.Option(builtin.All()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	m := cloud.For(db)
	defer cloud.Release(db)
	if _, err := m.Use(ctx, base); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Allow(ctx, cloud.DeclOf(builtin.Of(h, "card-share").Plugin.Manifest)); err != nil {
		t.Fatal(err)
	}
	var results []string
	call := func(tool, input string) string {
		t.Helper()
		var in any
		if input != "" {
			in, _ = expr.FromJSON([]byte(input))
		}
		res, err := h.Call(ctx, host.CallRequest{Actor: host.ActorUser, Plugin: "card-share", Tool: tool, Input: in})
		if err != nil {
			t.Fatalf("card-share.%s: %v", tool, err)
		}
		b, err := expr.ToJSON(res.Value, "")
		if err != nil {
			t.Fatal(err)
		}
		if tool != "link" {
			results = append(results, string(b))
		}
		return string(b)
	}

	var secrets []string
	for _, sc := range []struct{ name, lang string }{{"card-share", ""}, {"card-share-en", "en-US"}} {
		t.Run(sc.name, func(t *testing.T) {
			call("start", "")
			var ln struct {
				Sharing bool   `json:"sharing"`
				Link    string `json:"link"`
			}
			if err := json.Unmarshal([]byte(call("link", "")), &ln); err != nil || !ln.Sharing || !strings.Contains(ln.Link, "#k=") {
				t.Fatalf("link: %+v %v", ln, err)
			}
			secrets = append(secrets, ln.Link, ln.Link[strings.Index(ln.Link, "#k=")+3:])
			cardShareScenario(t, bctx, stand, ln.Link, sc.name, sc.lang, func() { call("stop", "") })
		})
	}

	// The person's side: the app's card-share screen (the web app in process, as harness serve
	// runs it). Start from its button, the link shown only as its QR code, stop from its button.
	api := hostapi.New(h, hostapi.Options{})
	app := web.Handler()
	for _, p := range web.AppRoutes {
		api.HandleStatic(p, app)
	}
	api.HandleStatic("GET /assets/", app)
	web.Routes(api, h)
	if err := cli.CloudRoutes(ctx, h, api); err != nil {
		t.Fatal(err)
	}
	appSrv := httptest.NewServer(api)
	defer appSrv.Close()
	t.Run("app", func(t *testing.T) {
		tab, closeTab := chromedp.NewContext(bctx)
		defer closeTab()
		con := watch(t, tab)
		// The person answers yes to every confirmation; the questions are kept to check.
		if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			// The clipboard and the system share sheet are stood in for (headless Chromium has no
			// share sheet): what the page hands them is kept to check.
			Source: `window.confirm = (q) => { (window.asked ||= []).push(String(q)); return true; };
Object.defineProperty(navigator, 'clipboard', { value: { writeText: async (s) => { window.copied = String(s); } } });
navigator.share = async (d) => { window.shared = d; };`}); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(appSrv.URL+"/p/card-share/main")); err != nil {
			t.Fatal(err)
		}
		pageEval := func(js string) string {
			v, err := chromedp.Run(tab, chromedp.Evaluate[string](js))
			if err != nil {
				t.Fatalf("evaluating %s: %v", js, err)
			}
			return v
		}
		waitFor := func(js, what string) {
			t.Helper()
			for end := time.Now().Add(20 * time.Second); pageEval(js) != "yes"; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(end) {
					t.Fatalf("%s did not happen in 20 s; the page says %q\nconsole:\n%s", what, pageEval(`document.getElementById('main')?.innerText ?? ''`), con.String())
				}
			}
		}
		click := func(label string) {
			t.Helper()
			waitFor(fmt.Sprintf(`Array.from(document.querySelectorAll('button')).some(b => b.textContent.includes(%q) && !b.disabled) ? 'yes' : 'no'`, label), "the "+label+" button")
			pageEval(fmt.Sprintf(`(Array.from(document.querySelectorAll('button')).find(b => b.textContent.includes(%q)).click(), '')`, label))
		}
		waitFor(`document.body.innerText.includes('服务器能看到:分享的开始/结束时间、查看者的 IP') ? 'yes' : 'no'`, "the disclosure")
		shoot(t, tab, "card-share-app-idle")
		// requestConsent(): without the person's consent, start leads to the host's consent
		// panel (the one of Settings → Cloud) over the screen; allowing there starts the share.
		if err := m.Revoke(ctx, "card-share"); err != nil {
			t.Fatal(err)
		}
		click("开始分享")
		waitFor(`document.querySelector('.consent-ask .cloud-panel input[type=checkbox]:not([disabled])') ? 'yes' : 'no'`, "the consent panel")
		ask := pageEval(`document.querySelector('.consent-ask').innerText`)
		for _, want := range []string{"card-share", strings.TrimPrefix(base, "http://"), "端到端加密", "服务器能看到:分享的开始/结束时间、查看者的 IP", "channels"} {
			if !strings.Contains(ask, want) {
				t.Errorf("the consent panel lacks %q: %q", want, ask)
			}
		}
		if ok, _ := m.Consented(ctx, cloud.DeclOf(builtin.Of(h, "card-share").Plugin.Manifest)); ok || strings.Contains(call("status", ""), `"sharing":true`) {
			t.Fatal("asking for consent granted it or started a share")
		}
		shoot(t, tab, "card-share-app-consent")
		pageEval(`(document.querySelector('.consent-ask .cloud-panel input[type=checkbox]').click(), '')`)
		waitFor(`document.querySelector('figure.g-qr svg path') ? 'yes' : 'no'`, "the QR code of the link")
		if got := pageEval(`(window.asked ?? []).join(' | ')`); !strings.Contains(got, "朋友拿到付款码就能用你的校园卡付钱") {
			t.Errorf("start asked %q, want the money warning", got)
		}
		var ln struct {
			Link string `json:"link"`
		}
		if err := json.Unmarshal([]byte(call("link", "")), &ln); err != nil || ln.Link == "" {
			t.Fatalf("link: %v", err)
		}
		secret := ln.Link[strings.Index(ln.Link, "#k=")+3:]
		secrets = append(secrets, ln.Link, secret)
		if strings.Contains(pageEval(`document.body.innerText + document.title`), secret) {
			t.Error("the app's screen shows the link as text; it must only be the QR code")
		}
		// share: true on the QR code: "Copy link" and "Share…" hand the link to this device's
		// clipboard and share sheet, and the link is still not on the screen as text.
		click("复制链接")
		waitFor(fmt.Sprintf(`window.copied === %q && document.querySelector('.g-qr-share [role=status]').textContent === '已复制链接' ? 'yes' : 'no'`, ln.Link), "the link copied")
		click("分享…")
		waitFor(fmt.Sprintf(`window.shared && window.shared.url === %q ? 'yes' : 'no'`, ln.Link), "the link handed to the share sheet")
		if strings.Contains(pageEval(`document.body.innerText + document.title`), secret) {
			t.Error("after copying, the app's screen shows the link as text")
		}
		shoot(t, tab, "card-share-app-sharing")
		cardShareScenario(t, bctx, stand, ln.Link, "card-share-app-viewer", "", func() { click("结束分享") })
		waitFor(`document.body.innerText.includes('开始分享') && !document.querySelector('figure.g-qr') ? 'yes' : 'no'`, "the screen going back to start")
		// Without a card session, start points to the app's own sign-in in the page's language,
		// not to the CLI command.
		stand.Expire("card")
		click("开始分享")
		waitFor(`document.querySelector('.drawn .state.signin a[href="/settings/campus"]') ? 'yes' : 'no'`, "the sign-in link")
		if s := pageEval(`document.querySelector('.drawn .state.signin').innerText + ' | ' + (document.querySelector('.toast')?.innerText ?? '')`); !strings.Contains(s, "设置 → 校园账号") || strings.Contains(s, "harness campus login") || strings.Contains(s, "not signed in") {
			t.Errorf("start without a card session says %q", s)
		}
		shoot(t, tab, "card-share-app-signin")
		if p := con.problems(); len(p) > 0 {
			t.Errorf("the app logged CSP violations or exceptions:\n%s", strings.Join(p, "\n"))
		}
	})

	audit, err := h.Audit(ctx, "card-share", 100)
	if err != nil {
		t.Fatal(err)
	}
	auditJSON, _ := json.Marshal(audit)
	for where, text := range map[string]string{
		"the server log": serverLog.String(), "the access log": accessLog.String(), "the host log": hostLog.String(),
		"the audit log": string(auditJSON), "the tool results": strings.Join(results, "\n"),
	} {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the share link or its secret", where)
				break
			}
		}
	}
	if !strings.Contains(accessLog.String(), "GET /w/card-share/view?c=") {
		t.Errorf("the access log shows no viewer page request:\n%s", accessLog.String())
	}
}

// cardShareScenario opens link in a new tab (navigator.language set to lang when not "") and
// checks the page from the first code to the stop.
func cardShareScenario(t *testing.T, bctx context.Context, stand *campustest.Stand, link, shot, lang string, stop func()) {
	tab, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	con := watch(t, tab)
	if lang != "" {
		src := fmt.Sprintf(`Object.defineProperty(navigator, 'language', { get: () => %q })`, lang)
		if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	pageEval := func(js string) string {
		v, err := chromedp.Run(tab, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluating %s: %v", js, err)
		}
		return v
	}
	diagnose := func() string {
		return "page status: " + pageEval(`document.getElementById('status')?.textContent ?? '(no page)'`) +
			"\nlocation: " + pageEval(`location.pathname + location.search`) + "\nconsole:\n" + con.String()
	}
	issued := func() []string {
		var out []string
		stand.Set(func(s *campustest.Stand) { out = append(out, s.PayCodes...) })
		return out
	}
	// waitSeq waits until the page shows code number seq and returns the code it shows.
	waitSeq := func(seq int, within time.Duration) string {
		t.Helper()
		for end := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
			got := pageEval(`(() => { const c = document.getElementById('card'); return c.hidden ? '' : c.dataset.seq + ' ' + document.getElementById('code').textContent.replace(/\s/g, ''); })()`)
			if n, code, ok := strings.Cut(got, " "); ok && n == fmt.Sprint(seq) {
				return code
			}
			if time.Now().After(end) {
				t.Fatalf("code %d did not show in %s (shows %q)\n%s", seq, within, got, diagnose())
			}
		}
	}

	before := len(issued())
	first := waitSeq(1, 30*time.Second)
	codes := issued()
	if len(codes) <= before || codes[len(codes)-1] != first {
		t.Fatalf("the page shows %q; the card issued %q", first, codes)
	}
	if got := pageEval(`location.pathname + location.search + ' ' + location.hash`); !strings.HasPrefix(got, "/w/card-share/view?c=") || !strings.HasSuffix(got, " ") {
		t.Errorf("page location %q: want the viewer page with the key dropped from the address bar", got)
	}
	if got := pageEval(`String(document.querySelectorAll('#qr svg path').length) + ' ' + String((document.querySelector('#qr svg path')?.getAttribute('d') ?? '').length > 200)`); got != "1 true" {
		t.Errorf("QR code: %q", got)
	}
	wantFrom := map[string]string{"": "张_ 分享给你的付款码", "en-US": "Shared with you by 张_"}[lang]
	if got := pageEval(`document.getElementById('from').textContent`); got != wantFrom {
		t.Errorf("from line %q, want %q", got, wantFrom)
	}
	if got := pageEval(`document.getElementById('expiry').textContent`); !strings.Contains(got, "29:") && !strings.Contains(got, "30:") {
		t.Errorf("countdown %q", got)
	}
	shoot(t, tab, shot)

	// The refresh: a new code from the card, shown in place of the old one.
	second := waitSeq(2, 15*time.Second)
	if codes := issued(); second == first || codes[len(codes)-1] != second {
		t.Fatalf("after a refresh the page shows %q (was %q); the card issued %q", second, first, codes)
	}
	if got := pageEval(`document.getElementById('status').dataset.state`); got != "live" {
		t.Errorf("state %q after a refresh", got)
	}

	// A reload resumes the seat from this tab (the key is no longer in the URL) and asks for a
	// fresh code.
	if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	resumed := waitSeq(3, 20*time.Second)
	if resumed == second {
		t.Errorf("after the reload the page shows the old code")
	}

	stop()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := pageEval(`document.getElementById('status').dataset.state + ' ' + document.getElementById('card').hidden + ' ' + document.getElementById('code').textContent.length + ' ' + document.getElementById('qr').childElementCount`)
		if got == "closed true 0 0" {
			break
		} else if time.Now().After(end) {
			t.Fatalf("after stop the page shows %q\n%s", got, diagnose())
		}
	}
	wantEnded := map[string]string{"": "分享已结束", "en-US": "The share has ended"}[lang]
	if got := pageEval(`document.getElementById('status').textContent`); got != wantEnded {
		t.Errorf("status after stop %q, want %q", got, wantEnded)
	}
	shoot(t, tab, shot+"-ended")
	if p := con.problems(); len(p) > 0 {
		t.Errorf("the page logged CSP violations or exceptions:\n%s", strings.Join(p, "\n"))
	}
}

// TestCardShareViewerRejectsBadFrames drives the card-share page as an attacker holding the
// owner's end would: frames of the wrong shape, version or type, a replayed older code, a code
// with markup, a name hint with markup. The page shows only well-formed codes newer than the
// last, as text (never markup), hides the code on "paused" and when the share closes.
func TestCardShareViewerRejectsBadFrames(t *testing.T) {
	bctx := browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := cloudServer(t, ctx, nil, nil)
	c, err := client.New(client.Config{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plugin("card-share", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, Page: "view",
		Meta: map[string]any{"v": 1, "title": "x", "nameHint": `<img src=x id=pwn>`, "refreshS": 30}})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()

	tab, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	con := watch(t, tab)
	if err := chromedp.Do(tab, chromedp.Navigate(ch.Link().Reveal())); err != nil {
		t.Fatal(err)
	}
	pageEval := func(js string) string {
		v, err := chromedp.Run(tab, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluating %s: %v", js, err)
		}
		return v
	}
	var peer string
	for deadline := time.After(30 * time.Second); peer == ""; {
		select {
		case ev := <-ch.Events():
			if ev.Type == client.EventMessage && string(ev.Msg) == `{"t":"hello"}` {
				peer = ev.PeerID
			}
		case <-deadline:
			t.Fatalf("the page did not say hello\n%s", con.String())
		}
	}
	shown := func() string {
		return pageEval(`(() => { const c = document.getElementById('card'); return c.hidden ? 'hidden' : c.dataset.seq + ' ' + document.getElementById('code').textContent.replace(/\s/g, ''); })()`)
	}
	send := func(f any) {
		t.Helper()
		if err := ch.Send(ctx, peer, f); err != nil {
			t.Fatal(err)
		}
	}
	// expect sends f and checks what the page shows once it has handled it (the page counts
	// every frame it handles in body[data-frames]).
	handled := 0
	expect := func(name string, f any, want string) {
		t.Helper()
		send(f)
		handled++
		for end := time.Now().Add(10 * time.Second); pageEval(`document.body.dataset.frames ?? '0'`) != fmt.Sprint(handled); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: the page did not handle frame %d", name, handled)
			}
		}
		if got := shown(); got != want {
			t.Errorf("%s: the page shows %q, want %q", name, got, want)
		}
	}
	// The sharer draws code n at t0 + n s, so a frame and its at go together as the sharer's do.
	t0 := time.Now().UnixMilli()
	code := func(seq any, c string) map[string]any {
		n, _ := seq.(int)
		if n == 0 {
			n = 6
		}
		return map[string]any{"t": "code", "v": 1, "code": c, "seq": seq, "at": t0 + int64(n)*1000, "refreshS": 30}
	}
	expect("a good code", code(5, "280011112222"), "5 280011112222")
	expect("a replayed older code", code(4, "280099990000"), "5 280011112222")
	expect("the same seq again", code(5, "280099990001"), "5 280011112222")
	expect("a seq as a string", code("6", "280099990002"), "5 280011112222")
	expect("a fractional seq", code(6.5, "280099990003"), "5 280011112222")
	expect("a code with a space", code(6, "2800 9999"), "5 280011112222")
	expect("a code with a newline", code(6, "2800\n9999"), "5 280011112222")
	expect("an empty code", code(6, ""), "5 280011112222")
	expect("a code over 512 bytes", code(6, strings.Repeat("9", 513)), "5 280011112222")
	bad := code(6, "280099990004")
	bad["v"] = 2
	expect("another version", bad, "5 280011112222")
	bad = code(6, "280099990005")
	delete(bad, "refreshS")
	expect("no refreshS", bad, "5 280011112222")
	expect("markup in the code", code(6, "<b>1</b>"), "6 <b>1</b>")
	if got := pageEval(`String(document.querySelectorAll('#code *, #pwn, #from *').length)`); got != "0" {
		t.Errorf("markup from a frame or the meta became elements: %s", got)
	}
	if got := pageEval(`document.getElementById('from').textContent`); got != "<img src=x id=pwn> 分享给你的付款码" {
		t.Errorf("from line %q", got)
	}
	expect("paused", map[string]any{"t": "paused", "v": 1}, "hidden")
	expect("a newer code after the pause", code(7, "280033334444"), "7 280033334444")
	stale := code(8, "280055556666")
	stale["at"] = t0 + 6500
	expect("a higher seq drawn before the last code", stale, "7 280033334444")
	// The sharer's host restarted and resumed the share: its seq starts again, its codes are newer.
	restarted := code(1, "280077778888")
	restarted["at"] = t0 + 20000
	expect("code 1 of a resumed share", restarted, "1 280077778888")

	// A reload resumes the seat from sessionStorage, and with it the order: the server replaying
	// a code sent before the reload shows nothing, the last code again (the answer to the hello
	// of the reload) shows, and so does the next.
	if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.After(30 * time.Second); ; {
		select {
		case ev := <-ch.Events():
			if ev.Type != client.EventMessage || string(ev.Msg) != `{"t":"hello"}` {
				continue
			}
		case <-deadline:
			t.Fatalf("the reloaded page did not say hello\n%s", con.String())
		}
		break
	}
	handled = 0
	expect("after a reload, a code sent before it", code(7, "280033334444"), "hidden")
	expect("after a reload, the last code again", restarted, "1 280077778888")
	next := code(2, "280099998888")
	next["at"] = t0 + 50000
	expect("after a reload, a newer code", next, "2 280099998888")
	if err := ch.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if got := shown() + " " + pageEval(`document.getElementById('status').dataset.state`); got == "hidden closed" {
			break
		} else if time.Now().After(end) {
			t.Fatalf("after close the page shows %q", got)
		}
	}
	// The seat (peer token and key) does not outlive the share in the tab, where another page
	// of the same provider could read it.
	if got := pageEval(`Object.keys(sessionStorage).filter((k) => k.startsWith('card-share:')).join(',')`); got != "" {
		t.Errorf("after close sessionStorage still holds the seat: %s", got)
	}
	if p := con.problems(); len(p) > 0 {
		t.Errorf("the page logged CSP violations or exceptions:\n%s", strings.Join(p, "\n"))
	}
}
