package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pkuinfo/harness/cloud/protocol"
)

func TestShareRedirectAndViewerPage(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(e.register(), "demo", "channels")
	sh, _ := e.openChannel(tok, 600, 1)
	r := e.do("GET", "/s/"+sh.id, "", nil)
	if r.status != 302 || r.header.Get("Location") != "/w/demo/view?c="+sh.id {
		t.Fatalf("redirect: %d %v", r.status, r.header)
	}
	// A Location without a fragment makes browsers keep the link's own #k= (RFC 9110 §10.2.2).
	if strings.Contains(r.header.Get("Location"), "#") {
		t.Errorf("Location carries a fragment")
	}
	page := e.do("GET", "/w/demo/view", "", nil)
	if page.status != 200 || !strings.HasPrefix(string(page.body), "<!doctype html>") ||
		page.header.Get("Content-Type") != "text/html; charset=utf-8" ||
		page.header.Get("Content-Security-Policy") != viewerCSP {
		t.Errorf("page: %d %v %s", page.status, page.header, page.body)
	}
	if !strings.Contains(viewerCSP, "connect-src 'self'") || strings.Contains(viewerCSP, "unsafe-inline") {
		t.Errorf("CSP %s", viewerCSP)
	}
	js := e.do("GET", "/w/demo/view/view.js", "", nil)
	if js.status != 200 || string(js.body) != "console.log(1)" || js.header.Get("Content-Security-Policy") == "" {
		t.Errorf("asset: %d %v", js.status, js.header)
	}
	for _, p := range []string{"/w/demo/nope", "/w/demo/view/..%2Findex.html", "/w/demo/view/.hidden", "/w/Demo/view", "/s/AAAAAAAAAAAAAAAAAAAAAA", "/s/x"} {
		if r := e.do("GET", p, "", nil); r.status != 404 || r.code() != "not_found" {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
}

func TestRoutes(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		method, path string
		status       int
		body         string
	}{
		{"POST", "/v1/fn/demo/stats", 501, `{"error":{"code":"unsupported","message":"the fn service is not offered by this provider"}}`},
		{"POST", "/v1/push/tokens", 501, `{"error":{"code":"unsupported","message":"the push service is not offered by this provider"}}`},
		{"POST", "/v1/push/schedule", 501, `{"error":{"code":"unsupported","message":"the push service is not offered by this provider"}}`},
		{"DELETE", "/v1/push/schedule", 501, `{"error":{"code":"unsupported","message":"the push service is not offered by this provider"}}`},
		{"GET", "/v1/nope", 404, `{"error":{"code":"not_found","message":"no such endpoint: /v1/nope"}}`},
		{"GET", "/", 404, `{"error":{"code":"not_found","message":"no such endpoint: /"}}`},
		{"POST", "/v1/meta", 400, `{"error":{"code":"bad_request","message":"method POST is not allowed here"}}`},
		{"GET", "/v1/devices/me", 400, `{"error":{"code":"bad_request","message":"method GET is not allowed here"}}`},
		{"DELETE", "/v1/devices/me", 401, `{"error":{"code":"unauthorized","message":"missing, malformed or expired token"}}`},
		{"GET", "/v1/c/AAAAAAAAAAAAAAAAAAAAAA/ws?t=short", 401, `{"error":{"code":"unauthorized","message":"missing or malformed peer token"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := e.do(tc.method, tc.path, "", nil)
			if r.status != tc.status || string(r.body) != tc.body+"\n" {
				t.Errorf("%d %s\nwant %d %s", r.status, r.body, tc.status, tc.body)
			}
		})
	}
}

func TestWebSocketOriginCheck(t *testing.T) {
	e := newEnv(t, nil)
	o := e.ownerUp(1)
	v, _ := e.join(o.sh)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(e.url, "http") + "/v1/c/" + o.sh.id + "/ws?t=" + v.token
	_, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	if err == nil || res == nil || res.StatusCode != 403 {
		t.Fatalf("foreign origin: %v %v", err, res)
	}
	r := e.do("GET", "/v1/c/"+o.sh.id+"/ws?t="+v.token, "", nil)
	if r.status != 400 || r.header.Get("Upgrade") != "websocket" || string(r.body) != `{"error":{"code":"bad_request","message":"this endpoint needs a WebSocket upgrade"}}`+"\n" {
		t.Errorf("plain GET: %d %s", r.status, r.body)
	}
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {e.url}}})
	if err != nil {
		t.Fatalf("same origin: %v", err)
	}
	c.CloseNow()
}

func TestShutdownClosesWith1001(t *testing.T) {
	e := newEnv(t, nil)
	o := e.ownerUp(1)
	code := make(chan websocket.StatusCode, 1)
	go func() { code <- o.ws.closeCode() }() // a client that reads answers the close handshake
	start := time.Now()
	e.srv.Close()
	if c := <-code; c != 1001 {
		t.Errorf("close code %d, want 1001", c)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v with a client answering the handshake", d)
	}
}

func TestMoreErrors(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Limits = protocol.DefaultLimits()
		c.Limits.JoinsPerIPPerMin = 2
	})
	tok := e.token(e.register(), "demo", "store", "channels")
	sh, _ := e.openChannel(tok, 600, 1)
	v, _ := e.join(sh)
	tests := []struct {
		name, method, path, token string
		body                      any
		status                    int
		out                       string
	}{
		{"bad prefix", "GET", "/v1/store?prefix=a%20b", tok, nil, 400, `{"error":{"code":"bad_request","message":"prefix: only the characters of a store key, at most 256 bytes"}}`},
		{"create with unknown field", "POST", "/v1/channels", tok, `{"ttlS":60,"x":1}`, 400, `{"error":{"code":"bad_request","message":"invalid JSON: json: unknown field \"x\""}}`},
		{"wrong content type", "POST", "/v1/channels", tok, "ttlS=60", 400, `{"error":{"code":"bad_request","message":"Content-Type must be application/json"}}`},
		{"bad slot", "PUT", "/v1/channels/" + sh.id + "/mailbox/a%2Fb", tok, `{}`, 400, `{"error":{"code":"bad_request","message":"slot: must match ^[A-Za-z0-9._:-]{1,64}$"}}`},
		{"mailbox with a plugin token", "GET", "/v1/c/" + sh.id + "/mailbox", tok, nil, 401, `{"error":{"code":"unauthorized","message":"unknown peer token (kicked, or for another channel)"}}`},
		{"peer token on the owner socket", "GET", "/v1/channels/" + sh.id + "/ws", v.token, nil, 401, `{"error":{"code":"unauthorized","message":"missing, malformed or expired token"}}`},
		{"info 1 of 2", "GET", "/v1/c/" + sh.id, "", nil, 200, ""},
		{"info 2 of 2", "GET", "/v1/c/" + sh.id, "", nil, 200, ""},
		{"info over the limit", "GET", "/v1/c/" + sh.id, "", nil, 429, `{"error":{"code":"rate_limited","message":"over the channel-info rate limit: 2 per 60 s","retryAfterS":60}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.name == "wrong content type" {
				hdr = []string{"Content-Type", "application/x-www-form-urlencoded"}
			}
			r := e.do(tc.method, tc.path, tc.token, tc.body, hdr...)
			if r.status != tc.status || tc.out != "" && string(r.body) != tc.out+"\n" {
				t.Errorf("%d %s\nwant %d %s", r.status, r.body, tc.status, tc.out)
			}
		})
	}
	if r := e.do("HEAD", "/w/demo/view", "", nil); r.status != 200 || len(r.body) != 0 {
		t.Errorf("HEAD page: %d %q", r.status, r.body)
	}
	// After the channel closes, the peer's endpoints answer gone.
	e.do("DELETE", "/v1/channels/"+sh.id, tok, nil)
	if r := e.do("GET", "/v1/c/"+sh.id+"/mailbox", v.token, nil); r.status != 410 || r.code() != "gone" {
		t.Errorf("mailbox after close: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/c/"+sh.id+"/send", v.token, `{"t":"ping"}`); r.status != 410 {
		t.Errorf("send after close: %d %s", r.status, r.body)
	}
}
