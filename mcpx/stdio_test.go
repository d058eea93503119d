package mcpx

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// badLines are what an attacker or a broken client writes on stdio, with
// the error code and id the filter answers.
var badLines = []struct {
	name, line string
	code       int
	id         string
}{
	{"not json", "not json", CodeParseError, "null"},
	{"braces", "{{{", CodeParseError, "null"},
	{"cut short", `{"jsonrpc":"2.0","id":1,"method":"pi`, CodeParseError, "null"},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, "null"},
	{"empty batch", `[]`, CodeInvalidRequest, "null"},
	{"a string", `"ping"`, CodeInvalidRequest, "null"},
	{"a number", `42`, CodeInvalidRequest, "null"},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, CodeInvalidRequest, "null"},
	{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, "null"},
	{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "null"},
	{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, "null"},
	{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest, "null"},
	{"version 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, CodeInvalidRequest, "7"},
	{"no version", `{"id":"x","method":"ping"}`, CodeInvalidRequest, `"x"`},
	{"number method", `{"jsonrpc":"2.0","id":8,"method":5}`, CodeInvalidRequest, "8"},
	{"deep brackets", strings.Repeat("[", 100000), CodeParseError, "null"},
	{"deep objects", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100) + "}", CodeParseError, "null"},
	{"over-long line", `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"` + strings.Repeat("a", MaxLine) + `"}}`, CodeParseError, "null"},
	{"invalid utf-8 outside strings", "\xff\xfe", CodeParseError, "null"},
	// JSON text is UTF-8 (RFC 8259 §8.1): a string id of bad bytes was answered with U+FFFD
	// in its place, an id the client never sent.
	// MCP: a request's "ID MUST NOT be null"; the SDK took such a request for a notification and
	// never answered it.
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, "null"},
	{"invalid utf-8 in a string id", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", CodeParseError, "null"},
	{"invalid utf-8 in params", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"a\":\"\xc3\x28\"}}", CodeParseError, "null"},
}

// TestStdioFilter: each bad line is answered once with its code and id and
// never handed on; the good line after it is handed on whole.
func TestStdioFilter(t *testing.T) {
	const good = `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	for _, tc := range badLines {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			s := NewStdio(strings.NewReader(tc.line+"\n\n  \r\n"+good+"\n"), &out)
			s.pending = -100 // no drain wait: nothing answers here
			got, err := io.ReadAll(s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != good+"\n" {
				t.Errorf("handed on %.200q; want only the good line", got)
			}
			var e struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &e) != nil {
				t.Fatalf("answered %.300q; want one JSON-RPC error", out.String())
			}
			if e.JSONRPC != "2.0" || e.Error.Code != tc.code || string(e.ID) != tc.id || !strings.HasPrefix(e.Error.Message, "line 1") {
				t.Errorf("answered %s; want code %d, id %s, a message naming line 1", lines[0], tc.code, tc.id)
			}
			if s.Refused() != 1 {
				t.Errorf("Refused() = %d", s.Refused())
			}
		})
	}
}

// TestStdioSurvivesBadLines runs a real MCP server over Stdio: every bad
// line is answered, and the session goes on (initialize, tools/list, a call).
func TestStdioSurvivesBadLines(t *testing.T) {
	e := newTestEnv(t)
	srv, err := NewServer(e.b, Options{}).MCP(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rw := NewStdio(inR, outW)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, &mcp.IOTransport{Reader: rw, Writer: rw}) }()
	answers := bufio.NewReaderSize(outR, 1<<20)
	send := func(line string) map[string]any {
		t.Helper()
		go func() { io.WriteString(inW, line+"\n") }()
		b, err := answers.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %.80q: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("answer %q: %v", b, err)
		}
		return m
	}
	init := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for i, tc := range badLines {
		a := send(tc.line)
		if code := a["error"].(map[string]any)["code"].(float64); int(code) != tc.code {
			t.Errorf("%s: %v", tc.name, a)
		}
		p := send(`{"jsonrpc":"2.0","id":"p` + string(rune('a'+i)) + `","method":"tools/list"}`)
		if p["result"] == nil {
			t.Fatalf("tools/list after %s: %v", tc.name, p)
		}
	}
	c := send(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"notes__echo","arguments":{}}}`)
	if c["id"].(float64) != 99 || c["result"] == nil {
		t.Fatalf("a call at the end: %v", c)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil && ctx.Err() == nil {
			t.Fatalf("the session ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end with stdin")
	}
}

// FuzzStdioLine: whatever a line holds, the filter either answers it with
// one JSON-RPC error or hands on a line the SDK decodes; it never panics.
func FuzzStdioLine(f *testing.F) {
	for _, tc := range badLines {
		if len(tc.line) < 1000 {
			f.Add(tc.line)
		}
	}
	f.Add(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","id":"a\"]]]]","method":"ping","params":{"s":"[[[["}}`)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		var out strings.Builder
		s := NewStdio(strings.NewReader(line+"\n"), &out)
		s.pending = -1 << 30
		got, _ := io.ReadAll(s)
		answered := strings.Count(out.String(), "\n")
		switch {
		case len(got) > 0 && answered > 0:
			t.Fatalf("%q both handed on and answered", line)
		case len(got) > 0:
			if _, err := jsonrpc.DecodeMessage(got); err != nil {
				t.Fatalf("handed on %q, which the SDK refuses: %v", got, err)
			}
		case answered > 1:
			t.Fatalf("%q answered %d times", line, answered)
		}
		if answered == 1 && !json.Valid([]byte(strings.TrimSpace(out.String()))) {
			t.Fatalf("the answer is not JSON: %q", out.String())
		}
	})
}
