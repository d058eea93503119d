package browsertest

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestModalFormValidation opens the room test plugin's booking screen as a modal (/m/room/book)
// from the plugins page: a required field left empty, then a room number that fails the tool's
// pattern, each show a message naming the field and make no call (the audit log holds none);
// a valid form makes exactly one; the modal's close button returns to the page it came from.
func TestModalFormValidation(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	h.installDir(t, "testdata/room")
	calls := func() int {
		entries, _ := h.api(t, "GET", "/v1/audit?plugin=room", "")["entries"].([]any)
		return len(entries)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/plugins"), chromedp.WaitVisible(chromedp.CSS(`main`)),
		chromedp.Navigate(h.url+"/m/room/book"),
		chromedp.WaitVisible(chromedp.CSS(`.modal-screen .drawn input`)),
	); err != nil {
		t.Fatal(err)
	}
	problems := func() string {
		chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
		return eval[string](t, ctx, `document.querySelector('.modal-screen .problems')?.innerText || ''`)
	}
	press := `.modal-screen .drawn button.g-btn`
	// Everything empty: the room and the name are required.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(press))); err != nil {
		t.Fatal(err)
	}
	if p := problems(); !strings.Contains(p, "room") || !strings.Contains(p, "name") {
		t.Errorf("empty form: problems %q, want both fields named", p)
	}
	if n := calls(); n != 0 {
		t.Errorf("an empty form made %d calls", n)
	}
	// A room number that is not three digits.
	fields := `.modal-screen .drawn .g-field input`
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`.modal-screen .drawn .g-field:nth-of-type(1) input`), "2a1"),
		chromedp.SendKeys(chromedp.CSS(`.modal-screen .drawn .g-field:nth-of-type(2) input`), "小王"),
		chromedp.Sleep(700*time.Millisecond), // the screen redraws 200 ms after the last key
		chromedp.Click(chromedp.CSS(press)),
	); err != nil {
		t.Fatal(err)
	}
	if p := problems(); !strings.Contains(p, "room") || !strings.Contains(p, "格式") || strings.Contains(p, "name") {
		t.Errorf("bad room number: problems %q, want the room's form named and only it", p)
	}
	if n := calls(); n != 0 {
		t.Errorf("a pattern mismatch made %d calls", n)
	}
	shootAt(t, ctx, "form-problems", `.modal-screen`)
	eval[bool](t, ctx, `(e => { e.value = ''; return e.dispatchEvent(new Event('input', {bubbles: true})); })(document.querySelectorAll('`+fields+`')[0])`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`.modal-screen .drawn .g-field:nth-of-type(1) input`), "201"),
		chromedp.Sleep(700*time.Millisecond),
		chromedp.Click(chromedp.CSS(press)),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.querySelector('.modal-screen .problems')`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.PollFunction[bool](`async () => (await (await fetch('/v1/audit?plugin=room')).json()).entries.length > 0`)); err != nil {
		t.Fatal(err)
	}
	if n := calls(); n != 1 {
		t.Errorf("a valid form made %d calls, want 1", n)
	}
	// Close returns to the plugins page.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.modal-screen > button`)), chromedp.Sleep(time.Second)); err != nil {
		t.Fatal(err)
	}
	if p := eval[string](t, ctx, `location.pathname`); p != "/plugins" {
		t.Errorf("close left the page at %q", p)
	}
}
