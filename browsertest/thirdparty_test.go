package browsertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
