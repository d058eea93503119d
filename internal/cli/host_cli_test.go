package cli

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeDemo writes version of the demo plugin into dir; greeting is what
// hello says; extra is added to the manifest's declarations.
func writeDemo(t *testing.T, dir, version, greeting, extra string) {
	t.Helper()
	files := map[string]string{
		"demo/PLUGIN.md": "---\nspec: 1\nid: demo\nname: 演示\ndescription: 本地服务器上的社区插件。\nversion: " + version +
			"\nauthor: tester\n" + extra + "tools:\n  hello: tools/hello.yaml\n---\nUse demo__hello.\n",
		"demo/tools/hello.yaml": "title: 你好\ndescription: Greets.\neffect: read\nreturn: \"'" + greeting + "'\"\n",
	}
	for p, b := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCommunityPluginOverHTTPS is the "done when" path with the CLI: a community
// plugin served from a local folder over HTTPS is reviewed, installed, run, updated (same
// content, changed content, wider declarations), accepted and rolled back.
func TestCommunityPluginOverHTTPS(t *testing.T) {
	site := t.TempDir()
	writeDemo(t, site, "1.0.0", "hello v1", "")
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	data := t.TempDir()
	link := srv.URL + "/demo/PLUGIN.md"

	run := func(wantCode int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		args = append(args, "--data", data, "--ca", ca)
		code := Main(args, strings.NewReader(""), &out, &errb)
		if code != wantCode {
			t.Fatalf("harness %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out.String(), errb.String())
		}
		return out.String() + errb.String()
	}
	expect := func(got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Fatalf("output lacks %q:\n%s", w, got)
			}
		}
	}
	expect(run(0, "plugins", "review", "--lang", "en", link), "演示 (demo 1.0.0, by tester)\nCommunity: not reviewed by PKU harness\n", "hello [read] 你好\n")
	expect(run(0, "plugins", "install", "--yes", link), "installed demo 1.0.0 (Community)\n")
	expect(run(0, "tool", "run", "demo.hello"), "\"hello v1\"\n")

	expect(run(0, "plugins", "update", "demo"), "demo: already up to date (1.0.0)\n")

	writeDemo(t, site, "1.1.0", "hello v1.1", "")
	expect(run(0, "plugins", "update", "demo"), "demo: updated 1.0.0 → 1.1.0\n")
	expect(run(0, "tool", "run", "demo.hello"), "\"hello v1.1\"\n")

	// A Community plugin may not read campus data and reach a website: that update fails.
	writeDemo(t, site, "2.0.0", "hello v2", "campus: [card]\nnetwork: [api.example.com]\n")
	expect(run(1, "plugins", "update", "demo"), "demo: update check failed: ", "a Community plugin may read your private data")
	writeDemo(t, site, "2.0.0", "hello v2", "campus: [card]\nabilities: [crypto]\n")
	expect(run(0, "plugins", "update", "demo"),
		"demo: update to 2.0.0 held for review: new campus service card; new app feature crypto (harness plugins accept demo)\n")
	expect(run(0, "tool", "run", "demo.hello"), "\"hello v1.1\"\n")
	expect(run(0, "plugins", "show", "demo"), "  held update: 2.0.0: new campus service card; new app feature crypto (harness plugins accept demo)\n")
	expect(run(1, "plugins", "accept", "demo"), "demo 1.1.0 → 2.0.0 widens: new campus service card; new app feature crypto\n", "not updated\n")
	expect(run(0, "plugins", "accept", "--yes", "demo"), "demo: updated 1.1.0 → 2.0.0\n")
	expect(run(0, "tool", "run", "demo.hello"), "\"hello v2\"\n")

	expect(run(0, "plugins", "rollback", "demo"), "demo: rolled back 2.0.0 → 1.1.0\n")
	expect(run(0, "tool", "run", "demo.hello"), "\"hello v1.1\"\n")
	expect(run(0, "plugins", "list"), "demo             1.1.0    Community 演示\n")

	// Without --ca the local server is not trusted (and not public): the check fails, nothing changes.
	var out, errb bytes.Buffer
	if code := Main([]string{"plugins", "update", "--data", data, "demo"}, nil, &out, &errb); code != ExitFail {
		t.Fatalf("update without --ca: exit %d\n%s%s", code, out.String(), errb.String())
	}
	expect(out.String(), "demo: update check failed: ")
}

// TestServeStartsWithOfficialPlugins starts `harness serve` on a fresh data directory with no
// flags but --data and an ephemeral port, and reads the plugin list over the API
// (loopback, no token).
func TestServeStartsWithOfficialPlugins(t *testing.T) {
	t.Setenv(MCPTokenEnv, "") // loopback without a token, as by default
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	start := time.Now()
	go func() {
		done <- Serve(ctx, &Env{Args: []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0"}, Stdout: &out, Stderr: &errb}, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	took := time.Since(start)
	resp, err := http.Get("http://" + addr + "/v1/plugins")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	for _, id := range []string{"classrooms", "campus-events", "grades", "canteen", "shuttle", "notices"} {
		if !strings.Contains(body.String(), fmt.Sprintf(`"id":%q`, id)) {
			t.Errorf("official plugin %s missing from %s", id, body.String())
		}
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "harness serve: listening on http://"+addr+" (data ") {
		t.Fatalf("stdout %q", out.String())
	}
	t.Logf("ready after %v on a fresh data directory", took)
}

// BenchmarkServeReady measures `harness serve` from the call to the first
// accepted connection, with the six official plugins installed: "fresh" on
// an empty data directory (first start: migrations and installs), "warm" on
// one that has them already (goal: ready ≤ 200 ms, docs/PERFORMANCE.md "Host").
func BenchmarkServeReady(b *testing.B) {
	serve := func(b *testing.B, data string) {
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan string, 1)
		done := make(chan int, 1)
		go func() {
			done <- Serve(ctx, &Env{Args: []string{"--data", data, "--addr", "127.0.0.1:0", "--no-update"},
				Stdout: io.Discard, Stderr: io.Discard}, ready)
		}()
		select {
		case <-ready:
		case code := <-done:
			b.Fatalf("serve exited %d", code)
		}
		b.StopTimer()
		cancel()
		<-done
		b.StartTimer()
	}
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			data := b.TempDir()
			b.StartTimer()
			serve(b, data)
		}
	})
	b.Run("warm", func(b *testing.B) {
		data := b.TempDir()
		serve(b, data)
		for b.Loop() {
			serve(b, data)
		}
	})
}

func TestServeUsage(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	data := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"extra"}, ExitUsage, `harness serve: unexpected argument "extra"`},
		{[]string{"--addr", "nocolon"}, ExitUsage, `harness serve: --addr "nocolon": address nocolon: missing port in address`},
		{[]string{"--addr", busy.Addr().String()}, ExitFail, "address already in use (is another harness serve running? pick another port with --addr)"},
		{[]string{"--addr", "0.0.0.0:0"}, ExitUsage, `harness serve: --addr "0.0.0.0:0" is not a loopback address: pass --token TOKEN (or set $HARNESS_MCP_TOKEN) so that only clients with the token get in` + "\n"},
		{[]string{"--addr", ":0"}, ExitUsage, `harness serve: --addr ":0" is not a loopback address: pass --token TOKEN`},
		{[]string{"--addr", "192.0.2.1:8788"}, ExitUsage, `harness serve: --addr "192.0.2.1:8788" is not a loopback address: pass --token TOKEN`},
	}
	t.Setenv(MCPTokenEnv, "")
	for _, tc := range tests {
		var out, errb bytes.Buffer
		code := Serve(context.Background(), &Env{Args: append([]string{"--data", data}, tc.args...), Stdout: &out, Stderr: &errb}, nil)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}

// TestServeToken: with --token every request to /v1 and /mcp needs the
// bearer token (401 with a JSON error otherwise), the Host check is off, and
// the token never reaches the log. --token wins over $HARNESS_MCP_TOKEN.
func TestServeToken(t *testing.T) {
	const tok, envTok = "T0k-9aaaaaaaaaaaaaaaaaaaaaaa", "from-env-aaaaaaaaaaaaaaaa"
	t.Setenv(MCPTokenEnv, envTok)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() {
		done <- Serve(ctx, &Env{Args: []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--no-update", "--token", tok},
			Stdout: &out, Stderr: &errb}, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	const unauthorized = `{"error":{"code":"unauthorized","message":"send the token of harness serve as \"Authorization: Bearer TOKEN\""}}` + "\n"
	mcpInit := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	tests := []struct {
		name, method, path, host, auth string
		status                         int
		body                           string // exact when not empty
	}{
		{"v1 without token", "GET", "/v1/plugins", "", "", 401, unauthorized},
		{"v1 with the env token", "GET", "/v1/plugins", "", "Bearer " + envTok, 401, unauthorized},
		{"v1 with token", "GET", "/v1/health", "", "Bearer " + tok, 200, `{"ok":true}` + "\n"},
		{"v1 with token, other host", "GET", "/v1/health", "harness.example:8788", "Bearer " + tok, 200, `{"ok":true}` + "\n"},
		{"mcp without token", "POST", "/mcp", "", "", 401, unauthorized},
		{"mcp with a wrong token", "POST", "/mcp", "", "Bearer " + tok[:len(tok)-1], 401, unauthorized},
		{"mcp with token", "POST", "/mcp", "", "Bearer " + tok, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader(mcpInit)
			}
			req, _ := http.NewRequest(tc.method, "http://"+addr+tc.path, body)
			if tc.method == "POST" {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || (tc.body != "" && string(b) != tc.body) {
				t.Errorf("%d %q; want %d %q", resp.StatusCode, b, tc.status, tc.body)
			}
		})
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	if strings.Contains(out.String()+errb.String(), tok) {
		t.Errorf("the token is in the output: %s%s", out.String(), errb.String())
	}
}

// TestServeStoredToken: after --token-generate the stored file is 0600 and
// serve requires its token (and says where it came from, not what it is);
// --token still wins over it.
func TestServeStoredToken(t *testing.T) {
	t.Setenv(MCPTokenEnv, "")
	data := t.TempDir()
	var out, errb bytes.Buffer
	if code := Serve(context.Background(), &Env{Args: []string{"--data", data, "--token-generate"}, Stdout: &out, Stderr: &errb}, nil); code != ExitOK {
		t.Fatalf("--token-generate: exit %d: %s", code, errb.String())
	}
	tok := strings.TrimSpace(out.String())
	fi, err := os.Stat(filepath.Join(data, "serve-token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("serve-token: %v %v", fi, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, tok},
		{[]string{"--token", "given-on-the-command-line"}, "given-on-the-command-line"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan string, 1)
		done := make(chan int, 1)
		var out, errb bytes.Buffer
		go func() {
			done <- Serve(ctx, &Env{Args: append([]string{"--data", data, "--addr", "127.0.0.1:0", "--no-update"}, tc.args...), Stdout: &out, Stderr: &errb}, ready)
		}()
		var addr string
		select {
		case addr = <-ready:
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, errb.String())
		}
		for auth, want := range map[string]int{"": 401, "Bearer " + tc.want: 200} {
			req, _ := http.NewRequest("GET", "http://"+addr+"/v1/health", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%v, %q: %d, want %d", tc.args, auth, resp.StatusCode, want)
			}
		}
		cancel()
		<-done
		if strings.Contains(out.String()+errb.String(), tok) {
			t.Errorf("serve printed the token: %s%s", out.String(), errb.String())
		}
	}
}
