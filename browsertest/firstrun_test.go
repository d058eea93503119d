package browsertest

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// contrastJS computes the WCAG 2.1 contrast ratio between the text colour of the element sel and
// the first non-transparent background behind it (the element's own, then its ancestors').
const contrastJS = `(() => {
  const sel = %q;
  const el = document.querySelector(sel);
  if (!el) return -1;
  const rgb = (s) => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return p; };
  const lum = (p) => { const c = p.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; };
  let bg = null;
  for (let n = el; n; n = n.parentElement) { const p = rgb(getComputedStyle(n).backgroundColor); if (p && (p.length < 4 || p[3] > 0)) { bg = p; break; } }
  if (!bg) bg = [255, 255, 255];
  const fg = rgb(getComputedStyle(el).color);
  const a = lum(fg), b = lum(bg);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
})()`

// TestFirstRun checks what a new user meets first, in a fresh data folder: the empty dashboard
// offers "add widget" once, and text has a contrast of at least 4.5:1 (WCAG AA) in both themes —
// body text, and the selected choice of a segmented control (Settings → language and theme).
func TestFirstRun(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)

	t.Run("empty dashboard", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/"), chromedp.WaitVisible(chromedp.CSS(`.state.empty`))); err != nil {
			t.Fatal(err)
		}
		n := eval[int](t, ctx, `[...document.querySelectorAll('#main button, #main a')].filter((b) => b.textContent.trim() === '添加小组件').length`)
		if n != 1 {
			t.Errorf("the empty dashboard shows 添加小组件 %d times, want once", n)
		}
		if s := text(t, ctx, `.state.empty`); !strings.Contains(s, "看板还是空的") {
			t.Errorf("empty state: %q", s)
		}
		shoot(t, ctx, "dashboard-empty")
	})

	// "system" follows the browser's prefers-color-scheme, emulated as dark.
	for _, theme := range []string{"light", "dark", "system"} {
		t.Run("contrast "+theme, func(t *testing.T) {
			media := emulation.SetEmulatedMediaParams{}
			if theme == "system" {
				media.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}
			}
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, media); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/settings"),
				chromedp.WaitVisible(chromedp.CSS(`input[name=theme][value=`+theme+`] + span`)),
				chromedp.Click(chromedp.CSS(`input[name=theme][value=`+theme+`] + span`)),
				chromedp.Sleep(200*time.Millisecond),
			); err != nil {
				t.Fatal(err)
			}
			if got := eval[string](t, ctx, `document.documentElement.dataset.theme || 'system'`); got != theme {
				t.Fatalf("data-theme %q after choosing %s", got, theme)
			}
			for _, sel := range []string{
				`input[name=theme]:checked + span`,
				`input[name=lang]:checked + span`,
				`input[name=lang]:not(:checked) + span`,
				`#main h1`,
				`#main legend`,
				`nav.tabs a[aria-current="page"]`,
				`#main button.primary`,
			} {
				r := eval[float64](t, ctx, strings.Replace(contrastJS, "%q", "'"+strings.ReplaceAll(sel, `'`, `\'`)+"'", 1))
				if r < 0 {
					t.Errorf("%s: no such element", sel)
				}
				t.Logf("%s theme: %s %.2f:1", theme, sel, r)
				if r >= 0 && r < 4.5 {
					t.Errorf("%s theme: %s has contrast %.2f:1, want ≥ 4.5:1", theme, sel, r)
				}
			}
			shoot(t, ctx, "settings-"+theme)
		})
	}
}
