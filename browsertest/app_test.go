package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/replay"
)

// findChromium returns the browser binary, or "" when none is installed.
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// outDir is where screenshots go.
func outDir(t *testing.T) string {
	dir := os.Getenv("BROWSERTEST_OUT")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "harness-browsertest")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// harness is a running `harness serve` with the mock model.
type harness struct {
	bin, data, url string
}

// startHarness builds the harness binary from this repository and starts the mock model and
// `harness serve` on free loopback ports; both stop when the test ends.
func startHarness(t *testing.T, extraEnv ...string) *harness {
	t.Helper()
	return startHarnessMock(t, nil, extraEnv...)
}

// startHarnessMock is startHarness with extra flags for `harness model mock` (e.g. --delay).
func startHarnessMock(t *testing.T, mockFlags []string, extraEnv ...string) *harness {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "harness")
	build := exec.Command("go", "build", "-o", bin, "./cmd/harness")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	h := &harness{bin: bin, data: filepath.Join(dir, "data")}
	env := append(append(os.Environ(), "HARNESS_KEYRING=off"), extraEnv...)
	start := func(args ...string) *bufio.Reader {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return bufio.NewReader(out)
	}
	mock := freeAddr(t)
	start(append([]string{"model", "mock", "--addr", mock}, mockFlags...)...)
	set := exec.Command(bin, "model", "set", "--data", h.data, "--preset", "mock", "--base-url", "http://"+mock+"/v1")
	set.Env = env
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("model set: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	r := start("serve", "--data", h.data, "--addr", addr, "--no-update")
	line, err := r.ReadString('\n')
	if err != nil || !strings.Contains(line, "listening") {
		t.Fatalf("serve: %q %v", line, err)
	}
	go io.Copy(io.Discard, r)
	h.url = "http://" + addr
	return h
}

// api calls the host API as the user's own client.
func (h *harness) api(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if method != "GET" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	json.Unmarshal(b, &v)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return v
}

func (h *harness) addWidget(t *testing.T, widget, size string) {
	h.api(t, "POST", "/v1/tools/dashboard__upsertWidget/call", fmt.Sprintf(`{"actor":"user","input":{"widget":%q,"size":%q}}`, widget, size))
}

// browser opens headless Chromium; the returned context is one tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := findChromium()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (.ci/run installs it)")
		}
		t.Skip("chromium is not installed")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("headless", true),
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("lang", "zh-CN"),
		chromedp.Flag("accept-lang", "zh-CN,zh"),
		chromedp.Env("LANGUAGE=zh_CN"),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel3)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	return ctx
}

var sizes = []struct {
	name          string
	width, height int64
	mobile        bool
}{{"phone", 390, 844, true}, {"desktop", 1280, 800, false}}

// shoot saves a screenshot of the viewport at both sizes as NAME-phone.png and NAME-desktop.png.
func shoot(t *testing.T, ctx context.Context, name string) { shootAt(t, ctx, name, "") }

// shootAt is shoot with the element sel scrolled into view at each size ("" scrolls nothing).
func shootAt(t *testing.T, ctx context.Context, name, sel string) {
	t.Helper()
	var scroll chromedp.Action[chromedp.Void]
	if sel != "" {
		scroll = chromedp.ScrollIntoView(chromedp.CSS(sel))
	}
	shootScrolled(t, ctx, name, scroll)
}

// shootFrom is shoot with the element sel scrolled to the top of the screen at each size, for
// a shot of what follows it.
func shootFrom(t *testing.T, ctx context.Context, name, sel string) {
	t.Helper()
	top := chromedp.Evaluate[bool](`(document.querySelector(` + jsString(sel) + `).scrollIntoView({ block: 'start' }), true)`)
	shootScrolled(t, ctx, name, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := top(ctx, tg)
		return chromedp.Void{}, err
	})
}

// shootScrolled is shoot with scroll run at each size before the shot (nil scrolls nothing).
func shootScrolled(t *testing.T, ctx context.Context, name string, scroll chromedp.Action[chromedp.Void]) {
	t.Helper()
	for _, s := range sizes {
		emulate := chromedp.EmulateViewport(s.width, s.height)
		if s.mobile {
			emulate = chromedp.EmulateViewport(s.width, s.height, chromedp.EmulateMobile)
		}
		actions := []chromedp.Action[chromedp.Void]{emulate, chromedp.Sleep(300 * time.Millisecond)}
		if scroll != nil {
			actions = append(actions, scroll, chromedp.Sleep(100*time.Millisecond))
		}
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		p := filepath.Join(outDir(t), name+"-"+s.name+".png")
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800))
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// portalStandIn is a stand-in for portal.pku.edu.cn that answers the free-classroom queries
// with the recorded responses of the classrooms plugin's first recorded test
// (plugins/classrooms/tests/overview.yaml), so the classrooms widget draws real plugin output
// offline. harness serve reaches it through campus.EndpointsEnv (portal=URL).
func portalStandIn(t *testing.T) string {
	t.Helper()
	cases, err := replay.DecodeFile(context.Background(), os.DirFS("../plugins/classrooms"), "tests/overview.yaml", "plugins/classrooms/tests/overview.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt := replay.NewRecorded(cases[0]).Transport()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, "https://portal.pku.edu.cn"+r.URL.RequestURI(), nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestApp walks the web app's scenarios against one harness serve, in order (later ones read
// what earlier ones did): the dashboard, chat to a tool result, a confirmation approved and one
// denied, install from a loopback link through the review sheet, a permission mode, language
// and theme; then it measures the speed figures of docs/PERFORMANCE.md.
func TestApp(t *testing.T) {
	ctx := browser(t)
	con := watch(t, ctx)
	h := startHarness(t, "HARNESS_CAMPUS_ENDPOINTS=portal="+portalStandIn(t))
	h.addWidget(t, "shuttle.next", "md")
	h.addWidget(t, "classrooms.overview", "md")
	h.addWidget(t, "focus.today", "sm")

	t.Run("dashboard", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/"),
			chromedp.WaitVisible(chromedp.CSS(`[data-card] .g-list`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-card]:nth-of-type(2) .drawn, [data-card]:nth-of-type(2) .state`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `[data-card] h2`); s != "下一班校车" {
			t.Errorf("first card's title %q", s)
		}
		// The classrooms card draws the plugin's output over the recorded portal replies: 理教
		// with the most free rooms first, and at size md the five buildings with the most.
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-card]:nth-of-type(2) .g-stat`))); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `[data-card]:nth-of-type(2) h2`); s != "空闲教室" {
			t.Errorf("classrooms card's title %q", s)
		}
		if s := text(t, ctx, `[data-card]:nth-of-type(2) .g-list`); !strings.HasPrefix(strings.TrimSpace(s), "理教") {
			t.Errorf("classrooms card: %q", s)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-card]:nth-of-type(2) .g-list > li').length`); n != 5 {
			t.Errorf("classrooms card at size md shows %d buildings, want 5", n)
		}
		if s := text(t, ctx, `[data-card]:nth-of-type(3) h2`); s != "今日专注" {
			t.Errorf("focus card's title %q", s)
		}
		n := eval[int](t, ctx, `document.querySelectorAll('[data-card]').length`)
		if n != 3 {
			t.Errorf("%d cards, want 3", n)
		}
		if s := text(t, ctx, `[data-card] .g-list`); !strings.Contains(s, "→") {
			t.Errorf("shuttle card: %q", s)
		}
		shoot(t, ctx, "dashboard")
	})

	t.Run("a failing card", func(t *testing.T) {
		// A card bound to the classrooms plugin's free tool for a building it does not know:
		// the card says the plugin's own message, keeps the place in its file behind a
		// disclosure, and the other cards draw as before.
		doc := `{"ui":1,"kind":"widget","title":"五教的空教室","description":"a card the assistant placed","data":{"tool":{"source":"tool"}},"root":{"type":"Text","text":"${data.tool.building}"}}`
		h.api(t, "POST", "/v1/tools/dashboard__upsertWidget/call", fmt.Sprintf(`{"actor":"user","input":{"document":%q,"tool":"classrooms.free","args":{"building":"五教"},"size":"md"}}`, doc))
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/"),
			chromedp.WaitVisible(chromedp.CSS(`[data-card]:nth-of-type(4) .state.error`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-card]:nth-of-type(2) .g-stat`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `[data-card]:nth-of-type(4) h2`); s != "五教的空教室" {
			t.Errorf("failing card's title %q", s)
		}
		if s := text(t, ctx, `[data-card]:nth-of-type(4) .state .detail`); !strings.HasPrefix(s, "没有叫「五教」的教学楼") {
			t.Errorf("failing card's message %q", s)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-card]:nth-of-type(4) details summary`))); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `[data-card]:nth-of-type(4) details code`); !strings.HasPrefix(s, "tools/free.yaml:") {
			t.Errorf("failing card's detail %q", s)
		}
		shootAt(t, ctx, "card-error", `[data-card]:nth-of-type(4)`)
	})

	t.Run("chat to a tool result", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), "下一班校车什么时候"),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.tool[data-tool="shuttle__next"]`)),
			chromedp.WaitVisible(chromedp.CSS(`.msg.bot`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `.msg.bot`); !strings.Contains(s, "燕园") {
			t.Errorf("answer %q", s)
		}
		shoot(t, ctx, "chat")
	})

	t.Run("chat fits a phone", func(t *testing.T) {
		// An answer with a long unbroken line (the mock echoes ui__render's JSON) and the row of
		// conversations must not widen the page past a 390 px screen.
		defer chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800))
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), "表单"),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.inline-ui .drawn`)),
			chromedp.WaitVisible(chromedp.CSS(`.msg.bot`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("the chat page is %d px wide on a 390 px phone", w)
		}
	})

	for _, tc := range []struct {
		name, button, want string
	}{{"confirmation approved", ".primary", "已允许"}, {"confirmation denied", ":not(.primary)", "已拒绝"}} {
		t.Run(tc.name, func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
				chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
				chromedp.SendKeys(chromedp.ID(`#composer-input`), "看板上加一个课表"),
				chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
				chromedp.WaitVisible(chromedp.CSS(`.confirm-card .actions button`)),
			); err != nil {
				t.Fatal(err)
			}
			s := text(t, ctx, `.confirm-card`)
			if !strings.Contains(s, "添加或修改小组件") || !strings.Contains(s, "写入") || !strings.Contains(s, "timetable.today") {
				t.Errorf("the card does not say what and how: %q", s)
			}
			if !strings.Contains(s, "每次询问") || strings.Contains(s, "set to ask") {
				t.Errorf("the card does not say why in the page's language: %q", s)
			}
			shoot(t, ctx, strings.ReplaceAll(tc.name, " ", "-"))
			if err := chromedp.Do(ctx,
				chromedp.Click(chromedp.CSS(`.confirm-card .actions button`+tc.button)),
				chromedp.WaitVisible(chromedp.CSS(`.confirm-card .answered`)),
				chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
			); err != nil {
				t.Fatal(err)
			}
			if s := text(t, ctx, `.confirm-card .answered`); s != tc.want {
				t.Errorf("answered %q, want %q", s, tc.want)
			}
		})
	}

	// The assistant writes a plugin and ends on plugins__install: the chat offers its review
	// sheet (a draft's, inline), and nothing is installed until the person presses install.
	t.Run("review sheet from the chat", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), "帮我写插件"),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		// Allow each confirmation the writing asks for, until the install's result is in.
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			st := eval[string](t, ctx, `(() => { const b = document.querySelector('.confirm-card:not(:has(.answered)) .actions button.primary'); if (b) { b.click(); return 'clicked'; } return document.querySelector('.tool[data-tool="plugins__install"] .review-action') ? 'done' : 'wait'; })()`)
			if st == "done" {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("no review action; the chat says %q", text(t, ctx, `.messages`))
			}
		}
		if s := text(t, ctx, `.tool[data-tool="plugins__install"] .review-action`); s != "打开审核页" {
			t.Errorf("review action reads %q", s)
		}
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`.tool[data-tool="plugins__install"] .review-action`)),
			chromedp.WaitVisible(chromedp.CSS(`.inline-review .sheet.review`)),
		); err != nil {
			t.Fatal(err)
		}
		sheet := text(t, ctx, `.inline-review .sheet.review`)
		for _, w := range []string{"sha256:", "社区", "读取"} {
			if !strings.Contains(sheet, w) {
				t.Errorf("the inline review sheet lacks %q: %q", w, sheet)
			}
		}
		shootAt(t, ctx, "chat-review-sheet", `.inline-review`)
		list := h.api(t, "GET", "/v1/plugins", "")
		for _, p := range list["plugins"].([]any) {
			if id := p.(map[string]any)["id"]; id == "gym-hours" {
				t.Errorf("opening the review sheet installed %v", id)
			}
		}
	})

	// plugins__installRemote's result: the chat links to the add-remote sheet with the URL in
	// it; nothing is added until the person reviews and adds it there.
	t.Run("remote sheet from the chat", func(t *testing.T) {
		const remote = "https://canteen.example.org/mcp"
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
			chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
			chromedp.SendKeys(chromedp.ID(`#composer-input`), "加一个远程插件 "+remote),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			st := eval[string](t, ctx, `(() => { const b = document.querySelector('.confirm-card:not(:has(.answered)) .actions button.primary'); if (b) { b.click(); return 'clicked'; } return document.querySelector('.tool[data-tool="plugins__installRemote"] a.review-action') ? 'done' : 'wait'; })()`)
			if st == "done" {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("no review action; the chat says %q", text(t, ctx, `.messages`))
			}
		}
		if href := eval[string](t, ctx, `document.querySelector('.tool[data-tool="plugins__installRemote"] a.review-action').getAttribute('href')`); href != "/install?remote="+url.QueryEscape(remote) {
			t.Errorf("review action goes to %q", href)
		}
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`.tool[data-tool="plugins__installRemote"] a.review-action`)),
			chromedp.WaitVisible(chromedp.ID(`#remote-url`)),
		); err != nil {
			t.Fatal(err)
		}
		if v := eval[string](t, ctx, `document.getElementById('remote-url').value`); v != remote {
			t.Errorf("the add-remote sheet has URL %q", v)
		}
		if r := h.api(t, "GET", "/v1/remote-plugins", ""); strings.Contains(fmt.Sprint(r), "canteen.example.org") {
			t.Errorf("opening the sheet added the server: %v", r)
		}
	})

	// A plugin on a loopback link, installed through the review sheet.
	links := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer links.Close()
	t.Run("review sheet from a link in the address", func(t *testing.T) {
		// /install?link=URL (the chat's action on a link's plugins__install) fills in the link and
		// waits for the person's Review: nothing is read on load.
		link := links.URL + "/memo/PLUGIN.md"
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/install?link="+url.QueryEscape(link)),
			chromedp.WaitVisible(chromedp.CSS(`.from-address`)),
			chromedp.Sleep(500*time.Millisecond),
		); err != nil {
			t.Fatal(err)
		}
		if v := eval[string](t, ctx, `document.getElementById('link').value`); v != link {
			t.Errorf("the link field holds %q, want %q", v, link)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('.sheet.review').length`); n != 0 {
			t.Fatal("the page reviewed the link on load")
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.sheet.review`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `.sheet.review`); !strings.Contains(s, "备忘") {
			t.Errorf("review sheet %q", s)
		}
		for _, p := range h.api(t, "GET", "/v1/plugins", "")["plugins"].([]any) {
			if p.(map[string]any)["id"] == "memo" {
				t.Error("reviewing installed the plugin")
			}
		}
	})
	t.Run("install from a link", func(t *testing.T) {
		link := links.URL + "/memo/PLUGIN.md"
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/install"),
			chromedp.WaitVisible(chromedp.ID(`#link`)),
			chromedp.SendKeys(chromedp.ID(`#link`), link),
			chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
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
		shoot(t, ctx, "install-review")
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`.sheet.review .actions button.primary`)),
			chromedp.WaitVisible(chromedp.ID(`#mode-write`)),
		); err != nil {
			t.Fatal(err)
		}
		list := h.api(t, "GET", "/v1/plugins/memo", "")
		if list["official"] != false || !strings.HasPrefix(fmt.Sprint(list["hash"]), "sha256:") || !strings.Contains(sheet, fmt.Sprint(list["hash"])) {
			t.Errorf("installed %v; the sheet showed another hash", list["hash"])
		}
	})

	t.Run("permission mode", func(t *testing.T) {
		eval[bool](t, ctx, `(() => { const s = document.querySelector('#mode-write'); s.value = 'auto'; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)
		deadline := time.Now().Add(10 * time.Second)
		for {
			m := h.api(t, "GET", "/v1/plugins/memo/modes", "")
			if modes, _ := m["modes"].(map[string]any); modes["write"] == "auto" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("write mode not saved: %v", m)
			}
			time.Sleep(100 * time.Millisecond)
		}
		shoot(t, ctx, "plugin-page")
	})

	t.Run("plugin screen", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/p/focus/main"),
			chromedp.WaitVisible(chromedp.CSS(`main .drawn h1`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `main .drawn h1`); s != "专注" {
			t.Errorf("screen title %q", s)
		}
		shoot(t, ctx, "screen-focus")
	})

	t.Run("language and theme", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/settings"),
			chromedp.WaitVisible(chromedp.CSS(`input[name=lang][value=en]`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `nav.tabs a[href="/settings"] span:last-child`); s != "设置" {
			t.Errorf("nav in zh-Hans reads %q", s)
		}
		if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`#ai-preset option[value=ollama]`))); err != nil {
			t.Fatal(err)
		}
		if s := eval[string](t, ctx, `document.querySelector('#ai-preset option[value=ollama]').textContent`); s != "Ollama(本机)" {
			t.Errorf("the ollama preset in zh-Hans reads %q", s)
		}
		// A campus service is named (GET /v1/campus title), its id beside it.
		if s := text(t, ctx, `#campus .rows li:first-child .name`); !strings.Contains(s, "校园卡") || !strings.Contains(s, "card") {
			t.Errorf("the first campus service reads %q, want its title and id", s)
		}
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`input[name=lang][value=en] + span`)),
			chromedp.Click(chromedp.CSS(`input[name=theme][value=dark] + span`)),
		); err != nil {
			t.Fatal(err)
		}
		lang := eval[string](t, ctx, `document.documentElement.lang`)
		theme := eval[string](t, ctx, `document.documentElement.dataset.theme || ''`)
		bg := eval[string](t, ctx, `getComputedStyle(document.body).backgroundColor`)
		if lang != "en" || theme != "dark" || bg != "rgb(18, 18, 21)" {
			t.Errorf("lang %q theme %q background %q", lang, theme, bg)
		}
		if s := text(t, ctx, `nav.tabs a[href="/settings"] span:last-child`); s != "Settings" {
			t.Errorf("nav in English reads %q", s)
		}
		if s := eval[string](t, ctx, `document.querySelector('#ai-preset option[value=ollama]').textContent`); s != "Ollama (local)" {
			t.Errorf("the ollama preset in English reads %q", s)
		}
		// The access token field says when it is needed.
		if s := text(t, ctx, `#tok-hint`); !strings.Contains(s, "harness serve was started with --token") {
			t.Errorf("the access token hint reads %q", s)
		}
		shoot(t, ctx, "settings-dark-en")
		englishTitles(t, ctx, h)
		// In English a plugin is listed and titled by its i18n.en name.
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/plugins"),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/plugins/shuttle"] .name`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `a[href="/plugins/shuttle"] .name`); !strings.HasPrefix(s, "Shuttle bus") || strings.Contains(s, "校车") {
			t.Errorf("the shuttle row in English reads %q, want its English name and id", s)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/plugins/shuttle"),
			chromedp.WaitVisible(chromedp.CSS(`main .page-head h1`)),
		); err != nil {
			t.Fatal(err)
		}
		if s := text(t, ctx, `main .page-head h1`); s != "Shuttle bus" {
			t.Errorf("the shuttle page in English is titled %q", s)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/settings"),
			chromedp.WaitVisible(chromedp.CSS(`input[name=lang][value=en]`)),
		); err != nil {
			t.Fatal(err)
		}
		chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=theme][value=system] + span`)), chromedp.Click(chromedp.CSS(`input[name=lang][value=system] + span`)))
	})

	t.Run("speed", func(t *testing.T) { speed(t, ctx, h) })

	// The strict CSP held and nothing threw on any page above.
	if p := con.problems(); len(p) > 0 {
		t.Errorf("CSP violations or exceptions:\n%s", strings.Join(p, "\n"))
	}
}

// englishTitles runs with the page in English: a confirmation card and its tool row give the
// tool's English title (the host's titleEn), and so does the plugin page, whose audit times
// are package i18n's Beijing-time strings even with the browser in New York.
func englishTitles(t *testing.T, ctx context.Context, h *harness) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"),
		chromedp.WaitVisible(chromedp.ID(`#composer-input`)),
		chromedp.SendKeys(chromedp.ID(`#composer-input`), "看板上加一个课表"),
		chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.confirm-card .actions button`)),
	); err != nil {
		t.Fatal(err)
	}
	card, row := text(t, ctx, `.confirm-card .title`), text(t, ctx, `.tool[data-tool="dashboard__upsertWidget"]`)
	if !strings.Contains(card, "Add or change a widget") || strings.Contains(card, "添加或修改小组件") {
		t.Errorf("confirmation card in English: %q", card)
	}
	if !strings.Contains(row, "Add or change a widget") {
		t.Errorf("tool row in English: %q", row)
	}
	shootAt(t, ctx, "confirmation-en", `.confirm-card`)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.confirm-card .actions button:not(.primary)`)),
		chromedp.WaitVisible(chromedp.CSS(`.confirm-card .answered`)),
	); err != nil {
		t.Fatal(err)
	}
	// The stored conversation, opened again: its tool row still has the English title.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`))); err != nil {
		t.Fatal(err)
	}
	here := eval[string](t, ctx, `location.href`)
	if !strings.Contains(here, "/chat/") {
		t.Fatalf("the conversation's address is %q", here)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(here), chromedp.WaitVisible(chromedp.CSS(`.tool[data-tool="dashboard__upsertWidget"]`))); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); !strings.Contains(text(t, ctx, `.tool[data-tool="dashboard__upsertWidget"]`), "Add or change a widget"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Errorf("the reopened conversation's tool row reads %q", text(t, ctx, `.tool[data-tool="dashboard__upsertWidget"]`))
			break
		}
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/New_York"}); err != nil {
		t.Fatal(err)
	}
	defer chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{})
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/plugins/dashboard"),
		chromedp.WaitVisible(chromedp.CSS(`#a-h + ul time`)),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, `main h1`); s != "Dashboard" {
		t.Errorf("the plugin page's heading in English: %q", s)
	}
	if s := text(t, ctx, `#tools-h + ul`); !strings.Contains(s, "Add or change a widget") {
		t.Errorf("the plugin page's tools in English: %q", s)
	}
	var audit struct {
		Entries []struct {
			At time.Time `json:"at"`
		} `json:"entries"`
	}
	b, _ := json.Marshal(h.api(t, "GET", "/v1/audit?plugin=dashboard&limit=10", ""))
	if err := json.Unmarshal(b, &audit); err != nil || len(audit.Entries) == 0 {
		t.Fatalf("audit: %s %v", b, err)
	}
	at := audit.Entries[0].At
	shown := eval[string](t, ctx, `document.querySelector('#a-h + ul time').textContent`)
	exact := eval[string](t, ctx, `document.querySelector('#a-h + ul time').title`)
	if want := i18n.FormatLocalDateTime(at, i18n.En); exact != want {
		t.Errorf("audit time %q, package i18n says %q", exact, want)
	}
	if now := time.Now(); shown != i18n.FormatRelative(at, now, i18n.En) && shown != i18n.FormatRelative(at, now.Add(-time.Minute), i18n.En) {
		t.Errorf("audit time reads %q, package i18n says %q", shown, i18n.FormatRelative(at, now, i18n.En))
	}
	shootAt(t, ctx, "plugin-page-en", `#a-h`)
}

// speed logs the figures docs/PERFORMANCE.md records; it asserts nothing about time.
func speed(t *testing.T, ctx context.Context, h *harness) {
	// First load: compressed bytes of JS and CSS, and first contentful paint.
	type loadFig struct {
		Bytes float64 `json:"bytes"`
		FCP   float64 `json:"fcp"`
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(h.url+"/plugins"),
		chromedp.WaitVisible(chromedp.CSS(`ul.rows`))); err != nil {
		t.Fatal(err)
	}
	load := eval[loadFig](t, ctx, `(() => { let b = 0; for (const r of performance.getEntriesByType('resource')) if (/\.(js|css)$/.test(r.name)) b += r.transferSize || r.encodedBodySize; const p = performance.getEntriesByName('first-contentful-paint')[0]; return { bytes: b, fcp: p ? p.startTime : -1 }; })()`)
	t.Logf("first load: %.1f KB of JS+CSS on the wire, first contentful paint %.0f ms", load.Bytes/1024, load.FCP)

	// A streamed token: from the moment its SSE chunk reached the page (the harness:sse-text
	// mark, stamped with the chunk's arrival) to the DOM append of its text (the app's
	// harness:token measure, taken right after the append); to the message list's next
	// mutation as a MutationObserver callback hears it (an upper bound: the callback waits for
	// microtasks queued before it, such as a re-render of the thread for another event of the
	// same chunk); and to the next Markdown re-render of the message (the harness:md-frame mark,
	// at most one per animation frame).
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/chat"), chromedp.WaitVisible(chromedp.ID(`composer-input`))); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, `window.__mut = []; new MutationObserver(() => window.__mut.push(performance.now())).observe(document.querySelector('.messages'), { subtree: true, childList: true, characterData: true }); true`)
	var dom, tok, md []float64
	for _, q := range []string{"下一班校车什么时候", "今天有什么课", "下一班校车"} {
		eval[bool](t, ctx, `performance.clearMarks(); performance.clearMeasures(); window.__mut.length = 0; true`)
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID(`composer-input`), q),
			chromedp.Click(chromedp.CSS(`.composer button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.msg.bot:not(.live)`)),
			chromedp.WaitVisible(chromedp.CSS(`.composer button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		type fig struct{ Append, Dom, Md []float64 }
		f := eval[fig](t, ctx, `(() => { const md = performance.getEntriesByName('harness:md-frame').map(m => m.startTime);
			const out = { Append: performance.getEntriesByName('harness:token').map(m => m.duration), Dom: [], Md: [] };
			for (const m of performance.getEntriesByName('harness:sse-text')) {
				const n = window.__mut.find(x => x >= m.startTime); out.Dom.push(n === undefined ? -1 : n - m.startTime);
				const f = md.find(x => x >= m.startTime); out.Md.push(f === undefined ? -1 : f - m.startTime);
			}
			return out; })()`)
		dom, tok, md = append(dom, f.Append...), append(tok, f.Dom...), append(md, f.Md...)
	}
	if len(dom) != len(tok) {
		t.Errorf("%d text events, %d appended to the DOM", len(tok), len(dom))
	}
	t.Logf("streamed tokens: %d text events; arrival → text in the DOM median %.2f ms, p95 %.2f ms, worst %.2f ms; → observer hears it median %.1f ms, p95 %.1f ms; → Markdown frame median %.1f ms, p95 %.1f ms",
		len(tok), quantile(dom, .5), quantile(dom, .95), quantile(dom, 1), quantile(tok, .5), quantile(tok, .95), quantile(md, .5), quantile(md, .95))

	// A dashboard of 12 widgets: each card's time from its draw reply to the committed DOM.
	for {
		r := h.api(t, "POST", "/v1/tools/dashboard__list/call", `{"actor":"user","input":{}}`)
		res, _ := r["result"].(map[string]any)
		ws, _ := res["widgets"].([]any)
		if len(ws) >= 12 {
			break
		}
		h.addWidget(t, "shuttle.next", "sm")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-card]:nth-of-type(12) .drawn, [data-card]:nth-of-type(12) .state`)),
		chromedp.Sleep(500*time.Millisecond),
	); err != nil {
		t.Fatal(err)
	}
	widgets := eval[[]float64](t, ctx, `performance.getEntriesByName('harness:widget').map(m => m.duration)`)
	t.Logf("dashboard: %d widgets drawn, from data to DOM median %.1f ms, worst %.1f ms", len(widgets), quantile(widgets, .5), quantile(widgets, 1))
	shoot(t, ctx, "dashboard-12")
}

// quantile is the q-quantile (nearest rank) of xs; a missing figure (-1) counts as the worst.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	for i, x := range s {
		if x < 0 {
			s[i] = math.Inf(1)
		}
	}
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
