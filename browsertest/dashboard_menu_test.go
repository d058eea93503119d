package browsertest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardAddResizeRemove starts from an empty dashboard with no campus session: "add a
// widget" lists the plugins' widgets and adds the wallet's balance; the card shows the
// not-signed-in state with a link to Settings → campus (which opens the campus page); the card's
// ⋯ menu resizes it (kept by the host) and removes it.
func TestDashboardAddResizeRemove(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	list := func() []map[string]any {
		r := h.api(t, "POST", "/v1/tools/dashboard__list/call", `{"actor":"user","input":{}}`)
		res, _ := r["result"].(map[string]any)
		var out []map[string]any
		ws, _ := res["widgets"].([]any)
		for _, w := range ws {
			out = append(out, w.(map[string]any))
		}
		return out
	}
	var wallet string
	for _, p := range h.api(t, "GET", "/v1/plugins", "")["plugins"].([]any) {
		if m := p.(map[string]any); m["id"] == "wallet" {
			wallet, _ = m["name"].(string)
		}
	}
	if wallet == "" {
		t.Fatal("the wallet plugin is not installed in a new data directory")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`.page-head button`)),
		chromedp.Click(chromedp.CSS(`.page-head button`)),
		chromedp.WaitVisible(chromedp.CSS(`.sheet[role=dialog] ul button, .sheet[role=dialog] > p`)),
	); err != nil {
		t.Fatal(err)
	}
	if eval[int](t, ctx, `document.querySelectorAll('.sheet[role=dialog] ul button').length`) == 0 {
		t.Fatalf("no widget list: %s", eval[string](t, ctx, `document.querySelector('main').innerText`))
	}
	items := eval[[]string](t, ctx, `[...document.querySelectorAll('.sheet[role=dialog] ul button')].map(b => b.innerText)`)
	if len(items) < 3 {
		t.Errorf("the widget list holds %v", items)
	}
	shootAt(t, ctx, "add-widget", `.sheet[role=dialog]`)
	if !eval[bool](t, ctx, `(() => { const b = [...document.querySelectorAll('.sheet[role=dialog] ul button')].find(b => b.innerText.startsWith(`+jsString(wallet+" · ")+`)); if (b) b.click(); return !!b; })()`) {
		t.Fatalf("no wallet widget among %v", items)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-card] .state.signin`))); err != nil {
		t.Fatalf("the wallet card does not show the sign-in state: %q %v", text(t, ctx, `main`), err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.sheet[role=dialog]').length`); n != 0 {
		t.Error("the add sheet stayed open")
	}
	ws := list()
	if len(ws) != 1 || ws[0]["widget"] != "wallet.balance" || ws[0]["size"] != "md" {
		t.Fatalf("dashboard after adding: %v", ws)
	}
	if s := text(t, ctx, `[data-card] .state.signin`); !strings.Contains(s, "登录") {
		t.Errorf("sign-in state reads %q", s)
	}
	if href := eval[string](t, ctx, `document.querySelector('[data-card] .state.signin a').getAttribute('href')`); href != "/settings/campus" {
		t.Errorf("the sign-in link goes to %q", href)
	}
	shootAt(t, ctx, "card-signin", `[data-card]`)

	// ⋯ → 小: the card is drawn small and the host keeps the size; the menu offers only the
	// sizes the widget declares (the wallet's balance: sm and md).
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-card] .menu button[aria-haspopup=menu]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-card] [role=menu]`)),
	); err != nil {
		t.Fatal(err)
	}
	if s := eval[string](t, ctx, `document.querySelector('[data-card] [role=menuitemradio][aria-checked=true]')?.innerText || ''`); s == "" {
		t.Error("the menu does not mark the current size")
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-card] [role=menuitemradio]').length`); n != 2 {
		t.Errorf("the menu offers %d sizes, want the 2 the widget declares", n)
	}
	eval[bool](t, ctx, `(() => { document.querySelectorAll('[data-card] [role=menuitemradio]')[0].click(); return true; })()`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-card].size-sm .state.signin`))); err != nil {
		t.Fatal(err)
	}
	if ws := list(); len(ws) != 1 || ws[0]["size"] != "sm" {
		t.Errorf("dashboard after resizing: %v", ws)
	}
	// ⋯ → 移除: the card goes, and so does the host's entry.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-card] .menu button[aria-haspopup=menu]`)),
		chromedp.Click(chromedp.CSS(`[data-card] [role=menu] button.destructive`)),
		chromedp.WaitVisible(chromedp.CSS(`.state.empty`)),
	); err != nil {
		t.Fatal(err)
	}
	if ws := list(); len(ws) != 0 {
		t.Errorf("dashboard after removing: %v", ws)
	}
	// The sign-in link opens Settings → campus.
	h.addWidget(t, "wallet.balance", "sm")
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-card] .state.signin a`)),
		chromedp.Click(chromedp.CSS(`[data-card] .state.signin a`)),
	); err != nil {
		t.Fatal(err)
	}
	if p := eval[string](t, ctx, `location.pathname`); p != "/settings/campus" {
		t.Errorf("the sign-in link led to %q", p)
	}
}

func jsString(s string) string {
	b := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
	return "'" + b + "'"
}
