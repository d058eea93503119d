package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// leak is a turn that reads a Community plugin's note (an untrusted result: the person's own
// note, as the memo plugin's author would see it) and then hands it to another Community
// plugin's tool, a read the mode leaves at auto.
const leak = `调用: memo__read {} 调用: room__book {"room":"201","name":"宿舍门禁 4321"}`

// TestThirdPartyConfirmation: in a turn that read a Community plugin's result, the model's call
// of a Community plugin's tool (a read, whose mode is auto) asks first, and the chat's card
// says why in the page's language (why third_party), in Chinese and in English. Denied, the
// call is shown as not run, and the audit log never has it run.
func TestThirdPartyConfirmation(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	h.installDir(t, "testdata/memo")
	h.installDir(t, "testdata/room")
	h.api(t, "POST", "/v1/tools/memo__save/call", `{"actor":"user","input":{"text":"宿舍门禁 4321"}}`)

	for _, tc := range []struct {
		lang, shot, title, why, denied string
	}{
		{"zh-Hans", "confirmation-third-party", "预约研讨室", "这次对话里有第三方内容或你的私人数据,而这个调用可能把数据发给你没有认可过的第三方", "已拒绝"},
		{"en", "confirmation-third-party-en", "Book a seminar room", "This conversation holds third-party content or your private data, and this call could send data to a party you have not vouched for", "Denied"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
				chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			); err != nil {
				t.Fatal(err)
			}
			eval[bool](t, ctx, `localStorage.setItem('harness.lang', `+jsString(tc.lang)+`), true`)
			if err := chromedp.Do(ctx, chromedp.Reload(),
				chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
				chromedp.SendKeys(chromedp.ID(`#composer-input`), leak),
				chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			); err != nil {
				t.Fatal(err)
			}
			if err := within(ctx, 20*time.Second, chromedp.WaitVisible(chromedp.CSS(`.confirm-card .actions button:not(.primary)`))); err != nil {
				t.Fatalf("no confirmation; the chat says %q: %v", text(t, ctx, `.messages`), err)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll('.tool[data-tool="memo__read"] .untrusted').length`); n != 1 {
				t.Errorf("the note's row is not marked untrusted: %q", text(t, ctx, `.messages`))
			}
			card := text(t, ctx, `.confirm-card`)
			for _, w := range []string{tc.title, "宿舍门禁 4321", tc.why} {
				if !strings.Contains(card, w) {
					t.Errorf("the card lacks %q: %q", w, card)
				}
			}
			if strings.Contains(card, "party you have not vouched for") && tc.lang != "en" {
				t.Errorf("the card gives the host's English reason: %q", card)
			}
			shootAt(t, ctx, tc.shot, `.confirm-card`)
			if err := chromedp.Do(ctx,
				chromedp.Click(chromedp.CSS(`.confirm-card .actions button:not(.primary)`)),
				chromedp.WaitVisible(chromedp.CSS(`.tool.failed[data-tool="room__book"]`)),
				chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
			); err != nil {
				t.Fatal(err)
			}
			if s := text(t, ctx, `.confirm-card .answered`); s != tc.denied {
				t.Errorf("answered %q, want %q", s, tc.denied)
			}
			if s := text(t, ctx, `.tool[data-tool="room__book"]`); !strings.Contains(s, "declined") {
				t.Errorf("the denied call's row reads %q", s)
			}
		})
	}
	if got := outcomes(t, h, "room", "book"); !strings.Contains(got, "confirm") || !strings.Contains(got, "refused") || strings.Contains(got, "ok") {
		t.Errorf("audit of room.book: %s (want confirm and refused, never ok)", got)
	}
}

// within runs steps on the page of ctx, giving up after d, so that a test can still say what
// the page shows.
func within(ctx context.Context, d time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// outcomes is the audit log's outcomes of plugin.tool, oldest first, with each entry's error.
func outcomes(t *testing.T, h *harness, plugin, tool string) string {
	t.Helper()
	es, _ := h.api(t, "GET", "/v1/audit?plugin="+plugin, "")["entries"].([]any)
	var out []string
	for i := len(es) - 1; i >= 0; i-- {
		m, _ := es[i].(map[string]any)
		if m["tool"] == tool {
			out = append(out, fmt.Sprintf("%v (%v: %v)", m["outcome"], m["actor"], m["error"]))
		}
	}
	return strings.Join(out, "; ")
}

// TestDrawnButtonUnderItsTurn: a card the assistant drew (ui__render) in a turn that read a
// Community plugin's result has a button that calls a Community plugin's tool. The page's tap
// sends the card's handle (drawn), and the host decides it under the turn that drew the card:
// it asks (the page's confirm) rather than running it, and the audit has confirm, not ok, until
// the person says yes. The same card drawn in a turn that read nothing runs at once.
func TestDrawnButtonUnderItsTurn(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	h.installDir(t, "testdata/memo")
	h.installDir(t, "testdata/room")
	// Every confirm() is recorded and answered with window.__yes; every tool call's body too.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
		window.__asked = []; window.__yes = false; window.__calls = [];
		window.confirm = (m) => { window.__asked.push(String(m)); return window.__yes; };
		const f = window.fetch;
		window.fetch = (u, o) => { if (String(u).includes('/v1/tools/')) window.__calls.push({ url: String(u), body: o && o.body }); return f(u, o); };`}); err != nil {
		t.Fatal(err)
	}
	card := `{"ui":1,"kind":"screen","title":"订研讨室","root":{"type":"Column","children":[{"type":"Text","text":"要把 201 订给你吗?"},{"type":"Button","text":"预约","style":"primary","action":{"tool":"room__book","args":{"room":"201","name":"同学"},"then":"none"}}]}}`
	draw := func(t *testing.T, msg string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), msg),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		if err := within(ctx, 20*time.Second, chromedp.WaitVisible(chromedp.CSS(`.inline-ui .g-btn`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`))); err != nil {
			t.Fatalf("no card; the chat says %q: %v", text(t, ctx, `.messages`), err)
		}
	}
	// tap presses the card's button and waits until the page's call of room__book is answered
	// (the page's confirm asked and answered, or the call ran).
	tap := func(t *testing.T, yes bool, until func() bool) {
		t.Helper()
		eval[bool](t, ctx, fmt.Sprintf(`window.__yes = %v, true`, yes))
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.inline-ui .g-btn`))); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(10 * time.Second); !until(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("after the tap: asked %q, audit of room.book: %s", eval[[]string](t, ctx, `window.__asked`), outcomes(t, h, "room", "book"))
			}
		}
		time.Sleep(300 * time.Millisecond) // nothing more is run after the answer
	}
	sent := func(t *testing.T) string {
		t.Helper()
		return eval[string](t, ctx, `(() => { const c = window.__calls.filter(c => c.url.includes('room__book')).pop(); return c ? c.body : ''; })()`)
	}

	t.Run("after an untrusted read it asks", func(t *testing.T) {
		draw(t, `调用: memo__read {} 调用: ui__render {"document":`+card+`}`)
		asked := func() bool { return len(eval[[]string](t, ctx, `window.__asked`)) > 0 }
		tap(t, false, asked)
		if got := outcomes(t, h, "room", "book"); !strings.HasPrefix(got, "confirm (agent: ") || strings.Contains(got, "ok") {
			t.Errorf("audit of room.book after a denied tap: %s (want confirm as the agent's, never ok)", got)
		}
		body := sent(t)
		if !strings.Contains(body, `"drawn":"`) || strings.Contains(body, `"drawn":"-"`) {
			t.Errorf("the tap's call did not carry the card's handle: %s", body)
		}
		if q := eval[[]string](t, ctx, `window.__asked`); len(q) != 1 || !strings.Contains(q[0], "预约研讨室") || !strings.Contains(q[0], "第三方") {
			t.Errorf("the page asked %q, want the host's question naming 预约研讨室 and why (第三方)", q)
		}

		eval[bool](t, ctx, `window.__asked = [], true`)
		ran := func() bool { return strings.Contains(outcomes(t, h, "room", "book"), "ok") }
		tap(t, true, ran)
		if got := outcomes(t, h, "room", "book"); !strings.Contains(got, "approved") || !strings.HasPrefix(got[strings.LastIndex(got, "; ")+2:], "ok ") {
			t.Errorf("audit of room.book after a yes: %s (want confirm, then approved and ok)", got)
		}
	})

	t.Run("in a clean turn it runs", func(t *testing.T) {
		before := strings.Count(outcomes(t, h, "room", "book"), "ok")
		eval[bool](t, ctx, `window.__asked = [], true`)
		draw(t, `调用: ui__render {"document":`+card+`}`)
		tap(t, false, func() bool { return strings.Count(outcomes(t, h, "room", "book"), "ok") > before })
		if q := eval[[]string](t, ctx, `window.__asked`); len(q) != 0 {
			t.Errorf("a card drawn in a turn that read nothing asked %q", q)
		}
		if body := sent(t); !strings.Contains(body, `"drawn":"`) {
			t.Errorf("the tap's call did not carry the card's handle: %s", body)
		}
	})
}

// TestReviewCommunity: the review sheet of a Community plugin with instructions says what a
// Community plugin may do and, behind a disclosure, shows the instructions the model will read
// as its author's text; the sheet fits a phone.
func TestReviewCommunity(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	links := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(links.Close)
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/install"),
		chromedp.WaitVisible(chromedp.ID(`#link`)),
		chromedp.SendKeys(chromedp.ID(`#link`), links.URL+"/club/PLUGIN.md"),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.sheet.review`)),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, `.sheet.review .badge`); s != "社区" {
		t.Errorf("the badge reads %q", s)
	}
	note := text(t, ctx, `.sheet.review .warn`)
	for _, w := range []string{"社区插件", "第三方数据", "都会先问你", "手机令牌验证码从不交给 AI"} {
		if !strings.Contains(note, w) {
			t.Errorf("the Community note lacks %q: %q", w, note)
		}
	}
	if eval[bool](t, ctx, `document.querySelector('.sheet.review details.notes').open`) {
		t.Error("the instructions are open before the person asks")
	}
	if s := text(t, ctx, `.sheet.review details.notes summary`); !strings.Contains(s, "插件说明") {
		t.Errorf("the disclosure reads %q", s)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.sheet.review details.notes summary`)),
		chromedp.WaitVisible(chromedp.CSS(`.sheet.review details.notes pre`)),
	); err != nil {
		t.Fatal(err)
	}
	notes := text(t, ctx, `.sheet.review details.notes pre`)
	for _, w := range []string{"调用 club__events", "不要猜教室号", "https://club.example.org/events/this-week/sign-up"} {
		if !strings.Contains(notes, w) {
			t.Errorf("the instructions lack %q: %q", w, notes)
		}
	}
	shootFrom(t, ctx, "review-community", `.sheet.review h2`)
	fits(t, ctx, `.sheet.review details.notes pre`)
}

// fits fails when, on a 390 px phone, the page is wider than the screen or sel's text runs past
// its box.
func fits(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	defer chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800))
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Sleep(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the page is %d px wide on a 390 px phone", w)
	}
	if d := eval[int](t, ctx, `(() => { const e = document.querySelector(`+jsString(sel)+`); return e.scrollWidth - e.clientWidth; })()`); d > 0 {
		t.Errorf("%s runs %d px past its box on a phone", sel, d)
	}
}
