package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// blockingFunctions runs every call until release is closed, counting the calls that started.
type blockingFunctions struct {
	started chan struct{}
	release chan struct{}
}

func (f *blockingFunctions) Call(ctx context.Context, c FunctionCall) (json.RawMessage, error) {
	f.started <- struct{}{}
	select {
	case <-f.release:
	case <-ctx.Done():
	}
	return json.RawMessage(`{}`), nil
}

func (f *blockingFunctions) Listed() []protocol.MetaFunction { return nil }

// TestFunctionRunsInFlightAreBounded: devices together cannot hold more than MaxFunctionRuns
// runs at once; the call past it is answered 429 rate_limited at once, without a run, and a
// slot freed is a slot to use again.
func TestFunctionRunsInFlightAreBounded(t *testing.T) {
	const max = 3
	fns := &blockingFunctions{started: make(chan struct{}, 16), release: make(chan struct{})}
	e := newEnv(t, func(c *Config) { c.Functions, c.MaxFunctionRuns = fns, max })
	fnToken := func() string {
		d := e.register()
		n := make([]byte, 16)
		rand.Read(n)
		req := protocol.AuthTokenRequest{Aud: e.srv.cfg.Origin, DeviceID: d.id, Plugin: "demo", Services: []string{"functions"},
			Ts: e.clk.Now().UnixMilli(), Nonce: protocol.B64.EncodeToString(n),
			Document: &protocol.DocumentRef{Link: "https://example.org/demo/PLUGIN.md", Hash: "sha256:" + strings.Repeat("ab", 32)}}
		protocol.SignAuthChallenge(d.sign, &req)
		r := e.do("POST", "/v1/auth/token", "", req)
		if r.status != 200 {
			t.Fatalf("token: %d %s", r.status, r.body)
		}
		var out protocol.AuthTokenResponse
		r.into(t, &out)
		return out.Token
	}
	var wg sync.WaitGroup
	for range max { // from different devices: the bound is the server's, not a device's
		tok := fnToken()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := e.do("POST", "/v1/fn/demo/slow", tok, map[string]any{}); r.status != 200 {
				t.Errorf("run: %d %s", r.status, r.body)
			}
		}()
	}
	for range max {
		select {
		case <-fns.started:
		case <-time.After(30 * time.Second):
			t.Fatal("the runs did not start")
		}
	}
	tok := fnToken()
	r := e.do("POST", "/v1/fn/demo/slow", tok, map[string]any{})
	want := `{"error":{"code":"rate_limited","message":"the server is running 3 functions at once, its limit; try again in a second","retryAfterS":1}}` + "\n"
	if r.status != http.StatusTooManyRequests || string(r.body) != want || r.header.Get("Retry-After") != "1" {
		t.Errorf("past the bound: %d %s %v\nwant 429 %s", r.status, r.body, r.header, want)
	}
	close(fns.release)
	wg.Wait()
	if r := e.do("POST", "/v1/fn/demo/slow", tok, map[string]any{}); r.status != 200 {
		t.Errorf("after the runs ended: %d %s", r.status, r.body)
	}
}
