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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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
	start("model", "mock", "--addr", mock)
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
	for _, s := range sizes {
		emulate := chromedp.EmulateViewport(s.width, s.height)
		if s.mobile {
			emulate = chromedp.EmulateViewport(s.width, s.height, chromedp.EmulateMobile)
		}
		actions := []chromedp.Action[chromedp.Void]{emulate, chromedp.Sleep(300 * time.Millisecond)}
		if sel != "" {
			actions = append(actions, chromedp.ScrollIntoView(chromedp.CSS(sel)), chromedp.Sleep(100*time.Millisecond))
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

	// A plugin on a loopback link, installed through the review sheet.
	links := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer links.Close()
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
		shoot(t, ctx, "settings-dark-en")
		chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=theme][value=system] + span`)), chromedp.Click(chromedp.CSS(`input[name=lang][value=system] + span`)))
	})

	t.Run("speed", func(t *testing.T) { speed(t, ctx, h) })

	// The strict CSP held and nothing threw on any page above.
	if p := con.problems(); len(p) > 0 {
		t.Errorf("CSP violations or exceptions:\n%s", strings.Join(p, "\n"))
	}
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
