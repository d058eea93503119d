package browsertest

import (
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
