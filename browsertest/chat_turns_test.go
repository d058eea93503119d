package browsertest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestChatStopAndDeny covers two ways a person ends what the assistant is doing. Stop: while a
// long answer streams (the mock pauses between chunks), the stop button ends the turn; no token
// is appended after it and the composer offers send again. Deny: a confirmation denied in the
// chat leaves the dashboard as it was, and the audit log records the call as denied, not run.
func TestChatStopAndDeny(t *testing.T) {
	ctx := browser(t)
	h := startHarnessMock(t, []string{"--delay", "150ms"})

	t.Run("stop", func(t *testing.T) {
		long := strings.Repeat("一句很长的回答。", 60)
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), "回显: "+long),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button.destructive`)),
		); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(document.querySelector('.msg.bot')?.innerText || '').includes('一句很长的回答')`)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.composer button.destructive`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`))); err != nil {
			t.Fatal(err)
		}
		const said = `[...document.querySelectorAll('.msg.bot')].map(e => e.innerText).join('')`
		before := eval[string](t, ctx, said)
		time.Sleep(2 * time.Second) // a dozen more chunks would have come by now
		after := eval[string](t, ctx, said)
		if after != before {
			t.Errorf("tokens appended after stop: %d → %d characters", len([]rune(before)), len([]rune(after)))
		}
		if n := strings.Count(after, "一句很长的回答。"); n == 0 || n >= 60 {
			t.Errorf("the stopped answer holds %d of 60 sentences", n)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('.composer button.destructive').length`); n != 0 {
			t.Error("the stop button is still there")
		}
	})

	t.Run("denied confirmation does not run", func(t *testing.T) {
		widgets := func() []any {
			r := h.api(t, "POST", "/v1/tools/dashboard__list/call", `{"actor":"user","input":{}}`)
			res, _ := r["result"].(map[string]any)
			w, _ := res["widgets"].([]any)
			return w
		}
		if w := widgets(); len(w) != 0 {
			t.Fatalf("dashboard not empty at the start: %v", w)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), "看板上加一个课表"),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.confirm-card .actions button:not(.primary)`)),
			chromedp.Click(chromedp.CSS(`.confirm-card .actions button:not(.primary)`)),
			chromedp.WaitVisible(chromedp.CSS(`.confirm-card .answered`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		if w := widgets(); len(w) != 0 {
			t.Errorf("a denied upsertWidget added a widget: %v", w)
		}
		entries, _ := h.api(t, "GET", "/v1/audit?plugin=dashboard", "")["entries"].([]any)
		var upserts []string
		for _, e := range entries {
			m, _ := e.(map[string]any)
			if m["tool"] == "upsertWidget" {
				upserts = append(upserts, m["outcome"].(string))
			}
		}
		// Asked (confirm), then refused; never ok.
		if !slices.Contains(upserts, "refused") || slices.Contains(upserts, "ok") {
			t.Errorf("audit of dashboard.upsertWidget: %v (want refused, never ok)", upserts)
		}
	})
}
