package browsertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// everyComponent is one screen with each genui catalogue component, the untrusted text in it
// hostile: HTML in Text and ListRow titles, javascript:/data: links and raw HTML in Markdown, a
// javascript: URL as a QR code's value.
var everyComponent = map[string]any{
	"ui": 1, "kind": "screen", "title": "全部组件",
	"root": map[string]any{"type": "Column", "children": []any{
		map[string]any{"type": "Text", "text": `<img src=x onerror="window.__pwned='text'">标题`, "style": "title"},
		map[string]any{"type": "Markdown", "text": "**粗体** [js](javascript:window.__pwned='md') [data](data:text/html,<script>parent.__pwned=1</script>) <img src=x onerror=\"window.__pwned='mdimg'\"> [好](https://example.org/ok)"},
		map[string]any{"type": "Stat", "label": "空闲教室", "value": 12, "unit": "间"},
		map[string]any{"type": "Ring", "value": 3, "max": 4, "label": "专注"},
		map[string]any{"type": "Sparkline", "values": []any{1, 3, 2, 5}, "label": "趋势"},
		map[string]any{"type": "Icon", "name": "bus", "label": "校车"},
		map[string]any{"type": "Chip", "text": "晴", "icon": "star"},
		map[string]any{"type": "Row", "children": []any{map[string]any{"type": "Text", "text": "行"}}},
		map[string]any{"type": "Grid", "columns": 2, "children": []any{map[string]any{"type": "Text", "text": "格一"}, map[string]any{"type": "Text", "text": "格二"}}},
		map[string]any{"type": "List", "items": []any{"甲", "乙"}, "template": map[string]any{"type": "Text", "text": "${item}"}},
		map[string]any{"type": "EmptyState", "title": "没有数据", "icon": "info"},
		map[string]any{"type": "Divider"},
		map[string]any{"type": "Field", "name": "note", "label": "备注"},
		map[string]any{"type": "Switch", "name": "on", "label": "开关"},
		map[string]any{"type": "Segmented", "name": "pick", "label": "选择", "options": []any{"一", "二"}},
		map[string]any{"type": "DateTimeField", "name": "when", "label": "时间", "mode": "date"},
		map[string]any{"type": "ListGroup", "title": "分组", "children": []any{
			map[string]any{"type": "ListRow", "title": `<b onmouseover="window.__pwned='row'">行标题</b>`, "value": "值"},
		}},
		map[string]any{"type": "Skeleton", "lines": 2},
		map[string]any{"type": "QRCode", "value": "javascript:window.__pwned='qr'", "label": "码"},
		map[string]any{"type": "Button", "text": "按钮", "action": map[string]any{"tool": "shuttle.next", "args": map[string]any{}}},
	}},
}

// TestGenuiEveryComponent has the assistant show everyComponent through ui__render (the mock's
// test-only "渲染:" route) and checks that each component is drawn, no "unsupported component"
// notice appears, and none of the hostile text ran or left a handler, raw element or non-https link.
func TestGenuiEveryComponent(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	doc, _ := json.Marshal(everyComponent)
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
		chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
		chromedp.SendKeys(chromedp.ID(`#composer-input`), "渲染: "+string(doc)),
		chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector('.inline-ui .drawn') || /没有成功/.test(document.querySelector('.messages')?.innerText || '')`)); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, `.messages`); strings.Contains(s, "没有成功") {
		t.Fatalf("ui__render refused the document: %s", s)
	}
	const ui = `.inline-ui .drawn `
	for _, c := range []struct{ name, sel string }{
		{"Text", `h3.g-text`}, {"Markdown", `.g-md strong`}, {"Stat", `.g-stat`}, {"Ring", `.g-ring`},
		{"Sparkline", `.g-spark`}, {"Icon", `.g-icon`}, {"Chip", `.g-chip`}, {"Row", `.g-row`},
		{"Column", `.g-col`}, {"Grid", `.g-grid.cols-2`}, {"List", `.g-list > li`}, {"EmptyState", `.g-empty`},
		{"Divider", `hr.g-divider`}, {"Field", `.g-field input`}, {"Switch", `.g-switch`},
		{"Segmented", `.g-seg`}, {"DateTimeField", `.g-field input[type=date]`}, {"ListGroup", `.g-listgroup`},
		{"ListRow", `.g-listrow`}, {"Skeleton", `.g-skeleton`}, {"QRCode", `.g-qr`}, {"Button", `button.g-btn`},
	} {
		if n := eval[int](t, ctx, `document.querySelectorAll('`+ui+c.sel+`').length`); n == 0 {
			t.Errorf("%s is not drawn (no %s)", c.name, c.sel)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.g-unsupported').length`); n != 0 {
		t.Errorf("%d components drawn as unsupported", n)
	}
	all := text(t, ctx, `.inline-ui .drawn`)
	for _, want := range []string{"标题", "粗体", "12", "晴", "格二", "甲", "乙", "没有数据", "备注", "开关", "分组", "值", "按钮"} {
		if !strings.Contains(all, want) {
			t.Errorf("the screen lost %q: %q", want, all)
		}
	}
	// The hostile text is text: shown, never parsed.
	if !strings.Contains(all, `<img src=x onerror=`) || !strings.Contains(all, `<b onmouseover=`) {
		t.Errorf("HTML in Text/ListRow was not shown as text: %q", all)
	}
	eval[bool](t, ctx, `(() => { for (const el of document.querySelectorAll('.inline-ui *')) el.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})); return true; })()`)
	if s := eval[string](t, ctx, `String(window.__pwned ?? '')`); s != "" {
		t.Errorf("a payload ran: window.__pwned = %q", s)
	}
	if s := eval[string](t, ctx, `[...document.querySelectorAll('.inline-ui script, .inline-ui iframe, .inline-ui img, .inline-ui b, .inline-ui a[href]:not([href^="https://"])')].map(e => e.outerHTML).join('\n')`); s != "" {
		t.Errorf("raw elements or non-https links in the screen:\n%s", s)
	}
	if s := eval[string](t, ctx, `[...document.querySelectorAll('.inline-ui *')].flatMap(e => [...e.attributes].filter(a => /^on/i.test(a.name) || /^\s*(javascript|data):/i.test(a.value)).map(a => e.tagName + ' ' + a.name + '=' + a.value)).join('\n')`); s != "" {
		t.Errorf("handlers or javascript:/data: URLs in the screen:\n%s", s)
	}
	shootAt(t, ctx, "genui-every-component", `.inline-ui`)
}
