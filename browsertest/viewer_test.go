package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/viewer"
)

// TestViewerPageInChromium is the Cloud viewer page end to end: a reference server on loopback
// serving viewer.FS(), an owner opening a channel with cloud/client, and headless Chromium
// opening the share link. It checks that the redirect keeps the #k fragment, that the page
// decrypts the meta and a frame in the browser, that the browser's sealed hello opens on the
// Go side, that nothing breaks the strict CSP, and that closing the channel shows on the page.
func TestViewerPageInChromium(t *testing.T) {
	bctx := browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var mu sync.Mutex
	seen := map[string]int{} // last path segment of /v1/c/{id}/… requests
	base := cloudServer(t, ctx, nil, func(srv http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v1/c/") {
				mu.Lock()
				seen[path.Base(r.URL.Path)]++
				mu.Unlock()
			}
			srv.ServeHTTP(w, r)
		})
	})
	used := func(endpoint string) int {
		mu.Lock()
		defer mu.Unlock()
		return seen[endpoint]
	}

	t.Run("websocket", func(t *testing.T) {
		viewerScenario(t, ctx, bctx, base)
		if used("ws") == 0 || used("events") != 0 {
			t.Errorf("requests: ws %d, events %d; want the WebSocket only", used("ws"), used("events"))
		}
	})
	// A webview without WebSocket (WeChat) falls back to the SSE stream and POST /send.
	t.Run("sse", func(t *testing.T) {
		ws := used("ws")
		viewerScenario(t, ctx, bctx, base, "delete window.WebSocket")
		if used("ws") != ws || used("events") == 0 || used("send") == 0 {
			t.Errorf("requests: ws %d more, events %d, send %d; want SSE and POST /send only", used("ws")-ws, used("events"), used("send"))
		}
	})
}

// viewerScenario opens a channel, opens its link in a new tab (with the before scripts run
// first on every document) and checks the page from join to close.
func viewerScenario(t *testing.T, ctx, bctx context.Context, base string, before ...string) {
	c, err := client.New(client.Config{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute, Page: "view", Meta: map[string]any{"title": "校园卡付款码", "nameHint": "王_明"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Disconnect()

	tab, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	con := watch(t, tab)
	for _, s := range before {
		if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: s}); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(tab, chromedp.Navigate(ch.Link().Reveal())); err != nil {
		t.Fatal(err)
	}
	pageEval := func(expr string) string {
		v, err := chromedp.Run(tab, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		return v
	}
	diagnose := func() string {
		return "page status: " + pageEval(`document.getElementById('status')?.textContent ?? '(no page)'`) +
			"\nlocation: " + pageEval(`location.pathname + location.search`) + "\nconsole:\n" + con.String()
	}

	// The browser joins, then sends its sealed hello.
	var peerID string
	deadline := time.After(30 * time.Second)
	for peerID == "" || !strings.Contains(peerID, "+hello") {
		select {
		case ev, ok := <-ch.Events():
			if !ok {
				t.Fatalf("channel ended: %v\n%s", ch.Err(), diagnose())
			}
			switch ev.Type {
			case client.EventJoin:
				peerID = ev.PeerID
			case client.EventMessage:
				if ev.PeerID == peerID && string(ev.Msg) == `{"t":"hello"}` {
					peerID += "+hello"
				}
			case client.EventError:
				t.Fatalf("owner error: %v %s %s\n%s", ev.Err, ev.Code, ev.Message, diagnose())
			}
		case <-deadline:
			t.Fatalf("the browser did not join and say hello in 30 s (peer %q)\n%s", peerID, diagnose())
		}
	}
	peerID = strings.TrimSuffix(peerID, "+hello")

	if got := pageEval(`location.pathname + location.search`); got != "/w/demo/view?c="+ch.ID() {
		t.Errorf("page location %q, want the redirect target /w/demo/view?c=%s", got, ch.ID())
	}
	if got := pageEval(`location.hash.startsWith('#k=') ? 'kept' : 'lost'`); got != "kept" {
		t.Errorf("the #k fragment was %s across the redirect", got)
	}
	if got := pageEval(`document.getElementById('meta').textContent`); !strings.Contains(got, `"nameHint": "王_明"`) {
		t.Errorf("meta on the page = %q", got)
	}

	const code = "8461-2290-7315"
	if err := ch.Send(ctx, peerID, map[string]string{"t": "code", "code": code}); err != nil {
		t.Fatal(err)
	}
	shown := ""
	for end := time.Now().Add(15 * time.Second); !strings.Contains(shown, code); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the decrypted frame did not appear in 15 s; frames: %q\n%s", shown, diagnose())
		}
		shown = pageEval(`Array.from(document.querySelectorAll('#frames .frame pre'), e => e.textContent).join('\n')`)
	}
	// Go marshals map keys sorted; the page pretty-prints what it decrypted.
	if want := "{\n  \"code\": \"" + code + "\",\n  \"t\": \"code\"\n}"; shown != want {
		t.Errorf("frames on the page = %q, want %q", shown, want)
	}
	if got := pageEval(`document.getElementById('status').dataset.state + ' ' + document.getElementById('count').textContent + ' ' + document.getElementById('dropped').textContent`); got != "live 1 0" {
		t.Errorf("state, count, dropped = %q, want \"live 1 0\"", got)
	}
	shoot(t, tab, "viewer-"+map[bool]string{true: "sse", false: "websocket"}[len(before) > 0])

	if err := ch.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if got := pageEval(`document.getElementById('status').dataset.state + ' ' + document.getElementById('status').textContent`); got == "closed 分享已结束" {
			break
		} else if time.Now().After(end) {
			t.Fatalf("after Close the page shows %q\n%s", got, diagnose())
		}
	}
	if p := con.problems(); len(p) > 0 {
		t.Errorf("the page logged CSP violations or exceptions:\n%s", strings.Join(p, "\n"))
	}
}

// cloudServer starts a reference Cloud server on loopback serving viewer.FS(), on a fresh SQLite
// database, with configure (may be nil) applied to its Config and wrap (may be nil) around its
// handler; everything stops when the test ends. It returns the server's base URL.
func cloudServer(t *testing.T, ctx context.Context, configure func(*server.Config), wrap func(http.Handler) http.Handler) string {
	t.Helper()
	st, err := server.OpenSQLite(ctx, filepath.Join(t.TempDir(), "cloud.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 4
	cfg.Pages = viewer.FS()
	if configure != nil {
		configure(&cfg)
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	var h http.Handler = srv
	if wrap != nil {
		h = wrap(srv)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}
