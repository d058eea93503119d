package browsertest

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// installDir installs the plugin in dir through the host API, as the review sheet does: review
// first, then install with the review's hash.
func (h *harness) installDir(t *testing.T, dir string) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := json.Marshal(abs)
	rv := h.api(t, "POST", "/v1/reviews", `{"source":`+string(src)+`}`)
	hash, _ := rv["hash"].(string)
	h.api(t, "POST", "/v1/plugins", `{"source":`+string(src)+`,"hash":"`+hash+`"}`)
}

// TestQuestionCard has the assistant call a tool that answers verification_required (the gate
// test plugin wants the SMS code 2468): the chat shows a question card with a code field; a
// wrong code asks again, the right one reaches the tool and the turn ends on its result; a
// declined question ends the turn without the tool's result.
func TestQuestionCard(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	h.installDir(t, "testdata/gate")
	ask := func() {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), "调用: gate__open {}"),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`form.question input`)),
		); err != nil {
			t.Fatalf("no question card; the chat says %q: %v", text(t, ctx, `.messages`), err)
		}
	}
	answer := func(code string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS(`form.question input`), code),
			chromedp.Click(chromedp.CSS(`form.question button.primary`)),
		); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("code entry", func(t *testing.T) {
		ask()
		card := text(t, ctx, `form.question`)
		if !strings.Contains(card, "请输入短信验证码") || !strings.Contains(card, "验证码") {
			t.Errorf("the card %q does not say what it needs", card)
		}
		if ac := eval[string](t, ctx, `document.querySelector('form.question input').autocomplete`); ac != "one-time-code" {
			t.Errorf("code field autocomplete %q", ac)
		}
		shootAt(t, ctx, "question-card", `form.question`)
		answer("1111")
		// The wrong code: the tool asks again.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('form.question')].some(f => f.innerText.includes('验证码不对'))`)); err != nil {
			t.Fatalf("no second question after a wrong code; the chat says %q", text(t, ctx, `.messages`))
		}
		answer("2468")
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.querySelector('form.question') && !!document.querySelector('.composer button[type=submit]') && /opened/.test(document.querySelector('.messages').innerText)`)); err != nil {
			t.Fatalf("the right code did not reach the tool; the chat says %q", text(t, ctx, `.messages`))
		}
		s := text(t, ctx, `.messages`)
		if !strings.Contains(s, `"opened":true`) || !strings.Contains(s, `"code":"2468"`) {
			t.Errorf("the turn did not end on the tool's result with the code: %q", s)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('.question .answered').length`); n != 2 {
			t.Errorf("%d answered question cards, want 2", n)
		}
	})

	t.Run("declined", func(t *testing.T) {
		ask()
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`form.question .actions button:not(.primary)`)),
			chromedp.WaitVisible(chromedp.CSS(`.question .answered`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `.messages`); strings.Contains(s, `"opened":true`) {
			t.Errorf("a declined question still opened the door: %q", s)
		}
	})
}
