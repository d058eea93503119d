package browsertest

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	qrcode "github.com/skip2/go-qrcode"
)

// startCanteen builds and runs the demo remote plugin (examples/demo-canteen) on a free loopback
// port with its demo token; it stops when the test ends. It returns the plugin's /mcp URL.
func startCanteen(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "demo-canteen")
	build := exec.Command("go", "build", "-o", bin, "./examples/demo-canteen")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build demo-canteen: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--addr", addr)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("demo-canteen did not start: %v", err)
	}
	return "http://" + addr + "/mcp"
}

// writeFile writes b under the test's temporary folder and returns the path.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func qrPNG(t *testing.T, text string) []byte {
	t.Helper()
	b, err := qrcode.Encode(text, qrcode.Medium, 320)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitText waits until the element sel's text contains want.
func waitText(t *testing.T, ctx context.Context, sel, want string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		s, err := chromedp.Run(wctx, chromedp.Text(chromedp.CSS(sel)))
		cancel()
		if err == nil && strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q, want it to contain %q (%v)", sel, s, want, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// shootFits is shoot, after checking that the page fits a phone's width (nothing wider than the
// screen, which would cut text off at the right edge).
func shootFits(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Sleep(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("%s: the page is %d px wide on a 390 px phone", name, w)
	}
	shoot(t, ctx, name)
}

// TestPluginsAndSettings walks the settings and install scenarios against one harness serve with
// the mock model and the demo-canteen remote plugin: the AI provider (test connection, a key
// entered and never shown again, a failing service), install from a QR code image through the
// review sheet (and bad images), adding demo-canteen from the plugins page through its review
// sheet and then using its tool from the chat, and language and theme kept across a reload.
func TestPluginsAndSettings(t *testing.T) {
	ctx := browser(t)
	con := watch(t, ctx)
	h := startHarness(t)
	canteenURL := startCanteen(t)
	links := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer links.Close()

	t.Run("AI provider", func(t *testing.T) {
		const key = "sk-browsertest-0123456789-wxyz"
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/settings"),
			chromedp.WaitVisible(chromedp.ID("ai-test")),
		); err != nil {
			t.Fatal(err)
		}
		if v := eval[string](t, ctx, `document.getElementById('ai-preset').value`); v != "" {
			// startHarness points the mock preset at its own port: that is a custom URL.
			t.Logf("preset %q", v)
		}
		if s := eval[string](t, ctx, `document.getElementById('ai-model').value`); s != "mock-agent" {
			t.Errorf("model field %q", s)
		}
		chromedp.Do(ctx, chromedp.Click(chromedp.ID("ai-test")))
		waitText(t, ctx, "#ai-result.ok", "mock-agent")
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID("ai-key"), key),
			chromedp.Click(chromedp.CSS(`form.ai button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		waitText(t, ctx, "#ai-now", "…wxyz")
		m := h.api(t, "GET", "/v1/model", "")
		if k, _ := m["key"].(map[string]any); k["set"] != true || k["hint"] != "…wxyz" {
			t.Errorf("GET /v1/model key %v", m["key"])
		}
		// After a reload the key is nowhere in the page: only its last four.
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("ai-test"))); err != nil {
			t.Fatal(err)
		}
		waitText(t, ctx, "#ai-now", "…wxyz")
		if html := eval[string](t, ctx, `document.documentElement.outerHTML + JSON.stringify(localStorage)`); strings.Contains(html, key) {
			t.Error("the page holds the key after a reload")
		}
		if v := eval[string](t, ctx, `document.getElementById('ai-key').value`); v != "" {
			t.Errorf("key field %q", v)
		}
		// The connection still works with the stored key.
		chromedp.Do(ctx, chromedp.Click(chromedp.ID("ai-test")))
		waitText(t, ctx, "#ai-result.ok", "mock-agent")
		shootFits(t, ctx, "settings-ai")
		// A service that is not there: a clear message, and nothing saved.
		eval[bool](t, ctx, `(() => { const i = document.getElementById('ai-url'); i.value = ''; i.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID("ai-url"), "http://"+freeAddr(t)+"/v1"),
			chromedp.Click(chromedp.ID("ai-test")),
		); err != nil {
			t.Fatal(err)
		}
		s := waitText(t, ctx, "#ai-result.error", "")
		if !strings.Contains(s, "connection refused") && !strings.Contains(s, "连接失败") {
			t.Errorf("failed test says %q", s)
		}
		m = h.api(t, "GET", "/v1/model", "")
		if m["model"] != "mock-agent" || strings.Contains(s, fmt.Sprint(m["baseURL"])) {
			t.Errorf("a test changed the stored model: %v", m)
		}
		// Saved, the new service is the one the running serve's assistant talks to (no restart):
		// the chat's error names it. Then the mock again.
		dead := eval[string](t, ctx, `document.getElementById('ai-url').value`)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form.ai button[type=submit]`))); err != nil {
			t.Fatal(err)
		}
		waitText(t, ctx, "#ai-now", strings.TrimSuffix(strings.TrimPrefix(dead, "http://"), "/v1"))
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`composer-input`)),
			chromedp.SendKeys(chromedp.ID(`composer-input`), "下一班校车什么时候"),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		waitText(t, ctx, ".msg.error", strings.TrimSuffix(strings.TrimPrefix(dead, "http://"), "/v1"))
		h.api(t, "PUT", "/v1/model", fmt.Sprintf(`{"baseURL":%q}`, m["baseURL"]))
	})

	t.Run("install from a QR code image", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/install"),
			chromedp.Click(chromedp.CSS(`input[name=method][value=qr] + span`)),
			chromedp.WaitReady(chromedp.ID("qr-file")),
		); err != nil {
			t.Fatal(err)
		}
		// Bad images first: each gets its own clear message.
		for _, tc := range []struct {
			name string
			body []byte
			want string
		}{
			{"not-an-image.png", []byte("this is text, not a PNG"), "不是浏览器能读取的图片"},
			{"blank.png", blankPNG(t), "没有找到二维码"},
			{"text.png", qrPNG(t, "hello, not a link"), "不是安装链接"},
		} {
			if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#qr-file"), []string{writeFile(t, tc.name, tc.body)})); err != nil {
				t.Fatal(err)
			}
			waitText(t, ctx, ".qr-problem", tc.want)
		}
		shootFits(t, ctx, "install-qr-bad")
		link := links.URL + "/memo/PLUGIN.md"
		if err := chromedp.Do(ctx,
			chromedp.SetUploadFiles(chromedp.CSS("#qr-file"), []string{writeFile(t, "install.png", qrPNG(t, link))}),
			chromedp.WaitVisible(chromedp.CSS(`.sheet.review`)),
		); err != nil {
			t.Fatal(err)
		}
		sheet := text(t, ctx, `.sheet.review`)
		for _, w := range []string{"备忘", "社区", "sha256:", "写入"} {
			if !strings.Contains(sheet, w) {
				t.Errorf("the review sheet lacks %q: %q", w, sheet)
			}
		}
		if s := text(t, ctx, "#qr-status"); !strings.Contains(s, link) {
			t.Errorf("status %q", s)
		}
		shootFits(t, ctx, "install-qr")
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`.sheet.review .actions button.primary`)),
			chromedp.WaitVisible(chromedp.ID(`mode-write`)),
		); err != nil {
			t.Fatal(err)
		}
		if p := h.api(t, "GET", "/v1/plugins/memo", ""); !strings.Contains(sheet, fmt.Sprint(p["hash"])) {
			t.Errorf("installed %v, not the reviewed hash", p["hash"])
		}
	})

	t.Run("demo-canteen", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/plugins"),
			chromedp.WaitVisible(chromedp.ID("add-remote")),
			chromedp.Click(chromedp.ID("add-remote")),
			chromedp.WaitVisible(chromedp.ID("remote-url")),
			chromedp.SendKeys(chromedp.ID("remote-url"), canteenURL),
			chromedp.Click(chromedp.CSS(`.install form button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		// Without its token the server refuses, and the page says to give one.
		waitText(t, ctx, ".install .state.error", "服务器需要访问令牌")
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID("remote-token"), "demo-token"),
			chromedp.Click(chromedp.CSS(`.install form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.sheet.remote`)),
		); err != nil {
			t.Fatal(err)
		}
		menu, reserve := text(t, ctx, `.sheet.remote [data-tool=menu]`), text(t, ctx, `.sheet.remote [data-tool=reserveSeat]`)
		if !strings.Contains(menu, "食堂菜单") || !strings.Contains(menu, "读取") || !strings.Contains(menu, "直接运行") {
			t.Errorf("menu row %q", menu)
		}
		if !strings.Contains(reserve, "预约座位") || !strings.Contains(reserve, "写入") || !strings.Contains(reserve, "先问你") {
			t.Errorf("reserveSeat row %q", reserve)
		}
		if s := text(t, ctx, `.sheet.remote`); !strings.Contains(s, "mcp-demo-canteen") || !strings.Contains(s, "加密保存") {
			t.Errorf("sheet %q", s)
		}
		if r := h.api(t, "GET", "/v1/remote-plugins", ""); strings.Contains(fmt.Sprint(r), "demo-canteen") {
			t.Fatalf("added before the sheet was confirmed: %v", r)
		}
		shootFits(t, ctx, "remote-review")
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`.sheet.remote .actions button.primary`)),
			chromedp.WaitVisible(chromedp.ID(`mode-write`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, "main h1"); s != "演示食堂" && s != "mcp-demo-canteen" && s != "demo-canteen" {
			t.Logf("plugin page title %q", s)
		}
		shootFits(t, ctx, "remote-plugin-page")
		// Check for updates lists its tools again (with the stored token).
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.plugin-page .actions button:first-child`))); err != nil {
			t.Fatal(err)
		}
		waitText(t, ctx, ".toast", "已检查更新")
		if html := eval[string](t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, "demo-token") {
			t.Error("the page shows the token")
		}
		// Its tool from the chat: a write, so it asks; approved, demo-canteen's answer shows.
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`composer-input`)),
			chromedp.SendKeys(chromedp.ID(`composer-input`), "帮我在食堂订个座"),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.confirm-card .actions button.primary`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `.confirm-card`); !strings.Contains(s, "预约座位") || !strings.Contains(s, "家园") {
			t.Errorf("confirmation %q", s)
		}
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`.confirm-card .actions button.primary`)),
			chromedp.WaitVisible(chromedp.CSS(`.confirm-card .answered`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := waitText(t, ctx, `.msg.bot:not(.live)`, "seat"); !strings.Contains(s, "家园") {
			t.Errorf("answer %q", s)
		}
		shootFits(t, ctx, "canteen-chat")
	})

	t.Run("language and theme persist", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/settings"),
			chromedp.WaitVisible(chromedp.CSS(`input[name=lang][value=en]`)),
			chromedp.Click(chromedp.CSS(`input[name=lang][value=en] + span`)),
			chromedp.Click(chromedp.CSS(`input[name=theme][value=light] + span`)),
			chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS(`input[name=lang][value=en]`)),
		); err != nil {
			t.Fatal(err)
		}
		lang := eval[string](t, ctx, `document.documentElement.lang`)
		theme := eval[string](t, ctx, `document.documentElement.dataset.theme || ''`)
		checked := eval[string](t, ctx, `document.querySelector('input[name=lang]:checked').value + ' ' + document.querySelector('input[name=theme]:checked').value`)
		if lang != "en" || theme != "light" || checked != "en light" {
			t.Errorf("after a reload: lang %q theme %q checked %q", lang, theme, checked)
		}
		if s := text(t, ctx, "#ai-h"); s != "AI model" {
			t.Errorf("heading %q", s)
		}
		// Back to following the browser (zh-CN here) and the system theme.
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`input[name=lang][value=system] + span`)),
			chromedp.Click(chromedp.CSS(`input[name=theme][value=system] + span`)),
			chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS(`input[name=lang][value=en]`)),
		); err != nil {
			t.Fatal(err)
		}
		if lang, theme := eval[string](t, ctx, `document.documentElement.lang`), eval[string](t, ctx, `document.documentElement.dataset.theme || ''`); lang != "zh-Hans" || theme != "" {
			t.Errorf("following the browser: lang %q theme %q", lang, theme)
		}
	})

	if p := con.problems(); len(p) > 0 {
		t.Errorf("CSP violations or exceptions:\n%s", strings.Join(p, "\n"))
	}
}

// blankPNG is a white image with no QR code in it.
func blankPNG(t *testing.T) []byte {
	img := image.NewGray(image.Rect(0, 0, 200, 200))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.Set(100, 100, color.Black)
	var b strings.Builder
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}
