package browsertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// TestViewerBrokenLink: a friend who opens a share link that lost its channel id or its key
// (both viewer pages, both languages) reads plain words saying what to do; what is missing is in
// the small print only.
func TestViewerBrokenLink(t *testing.T) {
	bctx := browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := cloudServer(t, ctx, nil, nil)

	want := map[string]string{
		"zh": "这个分享链接不完整,请让分享的人重新发给你",
		"en": "This share link is incomplete; ask the person who shared it to send it again",
	}
	for _, pg := range []string{"/w/demo/view", "/w/card-share/view"} {
		for _, link := range []struct{ name, suffix, detail string }{
			{"no channel id", "", "(?c=)"},
			{"no key", "?c=AAAAAAAAAAAAAAAAAAAAAA", "(#k=)"},
		} {
			for _, lang := range []string{"zh", "en"} {
				t.Run(pg+" "+link.name+" "+lang, func(t *testing.T) {
					tab, closeTab := chromedp.NewContext(bctx)
					defer closeTab()
					if lang == "en" {
						if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
							Source: `Object.defineProperty(navigator, 'language', { get: () => 'en-US' })`}); err != nil {
							t.Fatal(err)
						}
					}
					if err := chromedp.Do(tab, chromedp.Navigate(base+pg+link.suffix), chromedp.WaitVisible(chromedp.CSS(`#status[data-state="error"]`))); err != nil {
						t.Fatal(err)
					}
					if s := strings.TrimSpace(text(t, tab, `#status`)); s != want[lang] {
						t.Errorf("status %q, want %q", s, want[lang])
					}
					if s := text(t, tab, `#detail`); !strings.Contains(s, link.detail) {
						t.Errorf("detail %q, want it to name %s", s, link.detail)
					}
				})
			}
		}
	}
}
