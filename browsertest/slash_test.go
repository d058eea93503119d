package browsertest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestSlashMenu types "/" in the composer: the menu lists the plugins' commands with their
// aliases, descriptions and argument hints; an alias finds its command; ↑/↓ move the highlight
// (wrapping) and Enter takes it into the composer instead of sending; the command then runs as
// its prompt (the shuttle command's prompt reaches the shuttle tool).
func TestSlashMenu(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	const input = `#composer-input`
	value := func() string { return eval[string](t, ctx, `document.querySelector('#composer-input').value`) }
	// key presses a key the way a person's keyboard does, as far as the composer's handler sees it.
	key := func(k string) {
		eval[bool](t, ctx, `document.querySelector('#composer-input').dispatchEvent(new KeyboardEvent('keydown', {key: '`+k+`', bubbles: true, cancelable: true}))`)
	}
	options := `[...document.querySelectorAll('.slash [role=option] code:not(.alias)')].map(e => e.textContent)`
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
		chromedp.WaitVisible(chromedp.ID(input)),
		chromedp.SendKeys(chromedp.ID(input), "/"),
		chromedp.WaitVisible(chromedp.CSS(`.slash [role=option]`)),
	); err != nil {
		t.Fatal(err)
	}
	names := eval[[]string](t, ctx, options)
	if len(names) < 2 {
		t.Fatalf("menu for / lists %v", names)
	}
	if s := eval[string](t, ctx, `document.querySelector('.slash [aria-selected=true] code')?.textContent || ''`); s != names[0] {
		t.Errorf("highlighted %q at first, want %q", s, names[0])
	}
	// ↑ from the first wraps to the last; ↓ twice comes back round to the second.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID(input), kb.ArrowUp)); err != nil {
		t.Fatal(err)
	}
	if s := eval[string](t, ctx, `document.querySelector('.slash [aria-selected=true] code')?.textContent || ''`); s != names[len(names)-1] {
		t.Errorf("↑ highlighted %q, want the last, %q", s, names[len(names)-1])
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID(input), kb.ArrowDown+kb.ArrowDown)); err != nil {
		t.Fatal(err)
	}
	key("Enter")
	if v := value(); v != names[1]+" " {
		t.Errorf("Enter on the second command left %q in the composer, want %q", v, names[1]+" ")
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.msg.user').length`); n != 0 {
		t.Errorf("Enter in the menu sent a message")
	}
	// An alias finds its command, shown with its aliases and hint.
	eval[bool](t, ctx, `(e => { e.value = ''; return e.dispatchEvent(new Event('input', {bubbles: true})); })(document.querySelector('#composer-input'))`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID(input), "/班"),
		chromedp.WaitVisible(chromedp.CSS(`.slash [role=option]`))); err != nil {
		t.Fatal(err)
	}
	if got := eval[[]string](t, ctx, options); len(got) != 1 || got[0] != "/shuttle" {
		t.Fatalf("menu for /班 lists %v, want [/shuttle]", got)
	}
	row := text(t, ctx, `.slash [role=option]`)
	for _, want := range []string{"/校车", "/班车", "下一班校车", "如 燕园到新燕园"} {
		if !strings.Contains(row, want) {
			t.Errorf("the shuttle command's row %q lacks %q", row, want)
		}
	}
	shootAt(t, ctx, "slash-menu", `.composer`)
	key("Tab")
	if v := value(); v != "/shuttle " {
		t.Fatalf("Tab left %q", v)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID(input), "燕园"), chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool[data-tool="shuttle__next"]`))); err != nil {
		t.Fatal(err)
	}
}
