package viewer_test

// A minimal Chrome DevTools Protocol driver over github.com/coder/websocket (already a module
// dependency): enough to open a page in headless Chromium and poll an expression. chromedp would
// bring cdproto and several more modules into go.mod for the three commands used here.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
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

type browser struct {
	conn    *websocket.Conn
	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan cdpReply
	logs    []string
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// launchChromium starts headless Chromium with the flags of the brief and connects to its
// DevTools endpoint. The browser is killed when the test ends.
func launchChromium(t *testing.T, ctx context.Context, bin string) *browser {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+dir, "--remote-debugging-port=0",
		"--remote-debugging-address=127.0.0.1", "about:blank")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// Chromium writes "PORT\n/devtools/browser/ID" once it listens.
	var endpoint string
	deadline := time.Now().Add(30 * time.Second)
	for endpoint == "" {
		if time.Now().After(deadline) {
			t.Fatalf("chromium did not open its DevTools port in 30 s; stderr:\n%s", tail(stderr.String()))
		}
		if b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) == 2 {
				endpoint = "ws://127.0.0.1:" + lines[0] + lines[1]
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	conn, _, err := websocket.Dial(ctx, endpoint, nil)
	if err != nil {
		t.Fatalf("connecting to chromium's DevTools: %v", err)
	}
	conn.SetReadLimit(16 << 20)
	b := &browser{conn: conn, pending: map[int64]chan cdpReply{}}
	go b.readLoop(ctx)
	t.Cleanup(func() { conn.CloseNow() })
	return b
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

func (b *browser) readLoop(ctx context.Context) {
	for {
		_, data, err := b.conn.Read(ctx)
		if err != nil {
			return
		}
		var msg struct {
			ID     int64           `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			cdpReply
		}
		if json.Unmarshal(data, &msg) != nil {
			continue
		}
		if msg.ID == 0 {
			if msg.Method == "Runtime.consoleAPICalled" || msg.Method == "Runtime.exceptionThrown" || msg.Method == "Log.entryAdded" {
				b.mu.Lock()
				b.logs = append(b.logs, msg.Method+" "+string(msg.Params))
				b.mu.Unlock()
			}
			continue
		}
		b.mu.Lock()
		ch := b.pending[msg.ID]
		delete(b.pending, msg.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- msg.cdpReply
		}
	}
}

// call sends one command (in session, when not empty) and decodes its result into out.
func (b *browser) call(ctx context.Context, session, method string, params, out any) error {
	id := b.nextID.Add(1)
	req := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		req["sessionId"] = session
	}
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ch := make(chan cdpReply, 1)
	b.mu.Lock()
	b.pending[id] = ch
	b.mu.Unlock()
	if err := b.conn.Write(ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// open creates a tab at url and returns its session; each of before runs in every document of
// the tab before the page's own scripts.
func (b *browser) open(ctx context.Context, url string, before ...string) (string, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return "", err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return "", err
	}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		if err := b.call(ctx, att.SessionID, m, map[string]any{}, nil); err != nil {
			return "", err
		}
	}
	for _, src := range before {
		if err := b.call(ctx, att.SessionID, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": src}, nil); err != nil {
			return "", err
		}
	}
	if err := b.call(ctx, att.SessionID, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		return "", err
	}
	return att.SessionID, nil
}

// eval evaluates a JavaScript expression in the page and returns its string value.
func (b *browser) eval(ctx context.Context, session, expr string) (string, error) {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.call(ctx, session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return "", err
	}
	if r.ExceptionDetails != nil {
		return "", errors.New(r.ExceptionDetails.Text)
	}
	s, _ := r.Result.Value.(string)
	return s, nil
}

// console returns what the page logged (console calls, exceptions, CSP violations).
func (b *browser) console() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.logs, "\n")
}
