package browsertest

import (
	"context"
	"fmt"
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
