package browsertest

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// threadShape is each call row and confirmation card of the chat, as a person sees it: its
// classes, tool and text (title, effect, the untrusted badge, the failure's words, the answer).
const threadShape = `[...document.querySelectorAll('.messages .tool, .messages .confirm-card')].map(e => e.className + ' | ' + (e.getAttribute('data-tool') || '') + ' | ' + e.innerText.replace(/\s+/g, ' ').trim() + (e.querySelector('.actions button') ? ' | buttons' : ''))`

// TestReopenedConversation has a conversation read a Community plugin's note (an untrusted
// result) and then ask to add a dashboard card, which the person denies; reopening it from the
// list (GET /v1/conversations/{id}, a fresh page) shows the same thread as the live one: the
// denied write marked as not run with the same words, not as done; the untrusted result badged;
// the confirmation card with its answer and no buttons.
func TestReopenedConversation(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	h.installDir(t, "testdata/memo")
	send := func(text string, wait string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), text),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(wait)),
		); err != nil {
			said, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.messages')?.innerText || ''`))
			t.Fatalf("after %q the chat says %q: %v", text, said, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"), chromedp.WaitVisible(chromedp.ID(`#composer-input`))); err != nil {
		t.Fatal(err)
	}
	send("调用: memo__read {}", `.tool[data-tool="memo__read"] .untrusted`)
	send("看板上加一个课表", `.confirm-card .actions button:not(.primary)`)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.confirm-card .actions button:not(.primary)`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool.failed[data-tool="dashboard__upsertWidget"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
	); err != nil {
		t.Fatal(err)
	}
	live := eval[[]string](t, ctx, threadShape)
	id := strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/chat/")
	if id == "" || strings.Contains(id, "/") {
		t.Fatalf("the chat's address is %q", eval[string](t, ctx, `location.pathname`))
	}
	joined := strings.Join(live, "\n")
	for _, w := range []string{"dashboard__upsertWidget | ", "refused: the user declined", "第三方内容", "已拒绝"} {
		if !strings.Contains(joined, w) {
			t.Fatalf("the live thread lacks %q:\n%s", w, joined)
		}
	}

	// A fresh page on the conversation's address, as from the list or a bookmark.
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/"), chromedp.WaitVisible(chromedp.CSS(`nav.tabs`)),
		chromedp.Navigate(h.url+"/chat/"+url.PathEscape(id)),
		chromedp.WaitVisible(chromedp.CSS(`.tool[data-tool="dashboard__upsertWidget"]`)),
	); err != nil {
		t.Fatal(err)
	}
	var reopened []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The rows get their titles from the plugins' tool lists, a moment after.
		reopened = eval[[]string](t, ctx, threadShape)
		if strings.Join(reopened, "\n") == joined || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := strings.Join(reopened, "\n"); got != joined {
		t.Errorf("the reopened thread differs from the live one:\nlive:\n%s\nreopened:\n%s", joined, got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.tool[data-tool="dashboard__upsertWidget"]:not(.failed)').length`); n != 0 {
		t.Error("the reopened thread shows the denied write as run")
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.confirm-card .actions button').length`); n != 0 {
		t.Error("the reopened confirmation can be answered again")
	}
	shootAt(t, ctx, "chat-reopened", `.confirm-card`)
}

// TestInstallLinkAttack is another site sending the person to /install?link=… with what is not
// an install link: a folder of this computer, a file: URL, an official: or builtin: source, a
// relative path, an encoded one. The page reviews nothing on load, says the link is not an
// install link, and a Review pressed on such text asks nothing of the host; the host itself
// refuses the review from the page (422 bad_source) even when asked directly.
func TestInstallLinkAttack(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	reviews := `performance.getEntriesByType('resource').filter(e => e.name.includes('/v1/reviews')).length`
	for _, raw := range []string{"/etc", "%2Fhome%2Fme", "file:///", "file:///etc/passwd", "official:../x", "official:shuttle",
		"builtin:focus", "../x", "x", "~%2F.ssh", "javascript:alert(1)", "https%3A%2F%2F"} {
		t.Run(raw, func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/install?link="+raw),
				chromedp.WaitVisible(chromedp.CSS(`.link-problem`)),
				chromedp.Sleep(300*time.Millisecond),
			); err != nil {
				t.Fatal(err)
			}
			if s := text(t, ctx, `.link-problem`); !strings.Contains(s, "不是安装链接") {
				t.Errorf("the page says %q", s)
			}
			if n := eval[int](t, ctx, reviews); n != 0 {
				t.Errorf("the page asked for %d reviews on load", n)
			}
			if v := eval[string](t, ctx, `document.getElementById('link').value`); v != "" {
				t.Errorf("the link field holds %q", v)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll('.sheet.review').length`); n != 0 {
				t.Error("a review sheet is shown")
			}
		})
	}
	t.Run("typed and pressed", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/install"),
			chromedp.WaitVisible(chromedp.ID(`#link`)),
			chromedp.SendKeys(chromedp.ID(`#link`), "file:///etc"),
			chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.link-problem`)),
		); err != nil {
			t.Fatal(err)
		}
		if n := eval[int](t, ctx, reviews); n != 0 {
			t.Errorf("pressing Review on file:///etc asked the host %d times", n)
		}
	})
	t.Run("the host refuses the page", func(t *testing.T) {
		for _, src := range []string{"/etc", "file:///etc/passwd", "official:shuttle", "../x"} {
			got := eval[string](t, ctx, `(() => { const x = new XMLHttpRequest(); x.open('POST', '/v1/reviews', false); x.setRequestHeader('Content-Type', 'application/json'); x.send(JSON.stringify({ source: `+jsString(src)+` })); return x.status + ' ' + x.responseText; })()`)
			if !strings.HasPrefix(got, "422 ") || !strings.Contains(got, "bad_source") || !strings.Contains(got, "a web page may") {
				t.Errorf("review of %q from the page: %s", src, got)
			}
		}
	})
}
