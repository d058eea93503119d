package agentapi

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/agent"
	"github.com/pkuinfo/harness/agent/mock"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var fixedNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("CST", 8*3600))

func clock() time.Time { return fixedNow }

var noteRoute = mock.Route{Name: "note", Words: []string{"note"}, Plan: func(s *mock.State) mock.Step {
	if s.Round() == 0 {
		return mock.Step{Calls: []mock.Call{{Tool: "notes__add", Args: `{"text":"买牛奶"}`}}}
	}
	return mock.Step{Text: "done: " + s.Last()}
}}

// server is serve's API with the conversation routes, the official
// plugins and the notes test plugin, talking to the mock model.
func server(t *testing.T) (*httptest.Server, *agent.Agent) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := host.New(db, host.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	src, _ := filepath.Abs("../testdata/notes")
	rv, err := h.Review(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, src, rv.Hash); err != nil {
		t.Fatal(err)
	}
	model := httptest.NewServer(mock.New(mock.Options{Routes: []mock.Route{noteRoute}, Now: clock}))
	t.Cleanup(model.Close)
	p, err := agent.NewOpenAI(agent.Config{BaseURL: model.URL + "/v1", Model: mock.Model}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Host: h, Provider: p, Conversations: agent.NewConversations(db, clock)}
	s := api.New(h, api.Options{})
	Register(s, a)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, a
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func decode(t *testing.T, res *http.Response, v any) {
	t.Helper()
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func newConv(t *testing.T, base string) string {
	t.Helper()
	res := post(t, base+"/v1/conversations", `{"title":"测试"}`)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create: %s", res.Status)
	}
	var c agent.Conversation
	decode(t, res, &c)
	return c.ID
}

// sse reads events from res, calling on for each; on returns false to stop early.
func sse(t *testing.T, res *http.Response, on func(typ string, data map[string]any) bool) []string {
	t.Helper()
	var lines []string
	sc := bufio.NewScanner(res.Body)
	typ := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
			lines = append(lines, line)
		case strings.HasPrefix(line, "data: "):
			lines = append(lines, line)
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if !on(typ, d) || typ == "done" {
				return lines
			}
		}
	}
	return lines
}

var (
	hexID    = regexp.MustCompile(`"(id|callId)":"[0-9a-f]{24}"`)
	duration = regexp.MustCompile(`,"durationMs":\d+`)
	usage    = regexp.MustCompile(`"usage":\{"input":\d+,"output":\d+\}`)
)

func normalize(lines []string) string {
	s := strings.Join(lines, "\n") + "\n"
	s = hexID.ReplaceAllString(s, `"$1":"ID"`)
	s = duration.ReplaceAllString(s, "")
	return usage.ReplaceAllString(s, `"usage":{"input":N,"output":N}`)
}

func TestSSETranscript(t *testing.T) {
	srv, _ := server(t)
	var out strings.Builder
	// 1. The done-when message: a real shuttle__next result.
	id := newConv(t, srv.URL)
	res := post(t, srv.URL+"/v1/conversations/"+id+"/messages", `{"text":"下一班校车什么时候"}`)
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	out.WriteString("# 下一班校车什么时候\n" + normalize(sse(t, res, func(string, map[string]any) bool { return true })))
	res.Body.Close()

	// 2. A write that asks: the confirmation is approved over the API mid-stream.
	for _, approve := range []bool{true, false} {
		res = post(t, srv.URL+"/v1/conversations/"+id+"/messages", `{"text":"note this"}`)
		lines := sse(t, res, func(typ string, d map[string]any) bool {
			if typ == "confirmation" {
				body := `{"approve":false}`
				if approve {
					body = `{"approve":true}`
				}
				r := post(t, srv.URL+"/v1/conversations/"+id+"/confirmations/"+d["id"].(string), body)
				if r.StatusCode != http.StatusOK {
					t.Errorf("answer: %s", r.Status)
				}
				r.Body.Close()
			}
			return true
		})
		res.Body.Close()
		if approve {
			out.WriteString("# note this (approved)\n")
		} else {
			out.WriteString("# note this (denied)\n")
		}
		out.WriteString(normalize(lines))
	}
	golden := filepath.Join("testdata", "sse.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("transcript differs from %s (go test -run TestSSETranscript -update):\n%s", golden, out.String())
	}

	// The conversation holds the three turns and both confirmations.
	var got struct {
		Conversation agent.Conversation `json:"conversation"`
	}
	r, _ := http.Get(srv.URL + "/v1/conversations/" + id)
	decode(t, r, &got)
	if n := len(got.Conversation.Messages); n != 12 {
		t.Errorf("%d messages stored, want 12", n)
	}
	if c := got.Conversation.Confirmations; len(c) != 2 || c[0].Outcome != "approved" || c[1].Outcome != "denied" {
		t.Errorf("confirmations %+v", c)
	}
	if got.Conversation.Usage.Input == 0 {
		t.Error("no usage recorded")
	}
}

func TestCancelWhileConfirming(t *testing.T) {
	srv, a := server(t)
	id := newConv(t, srv.URL)
	res := post(t, srv.URL+"/v1/conversations/"+id+"/messages", `{"text":"note this"}`)
	defer res.Body.Close()
	var last map[string]any
	var types []string
	sse(t, res, func(typ string, d map[string]any) bool {
		types = append(types, typ)
		if typ == "confirmation" {
			// A second message while the turn waits is refused.
			r := post(t, srv.URL+"/v1/conversations/"+id+"/messages", `{"text":"again"}`)
			if r.StatusCode != http.StatusConflict {
				t.Errorf("second message: %s", r.Status)
			}
			r.Body.Close()
			r = post(t, srv.URL+"/v1/conversations/"+id+"/cancel", "")
			var c map[string]any
			decode(t, r, &c)
			if c["cancelled"] != true {
				t.Errorf("cancel: %v", c)
			}
		}
		last = d
		return true
	})
	if last["stop"] != "cancelled" || !strings.Contains(strings.Join(types, ","), "error,done") {
		t.Errorf("events %v, last %v", types, last)
	}
	if a.Running(id) {
		t.Error("turn still running")
	}
}

func TestRoutesRefuse(t *testing.T) {
	srv, _ := server(t)
	id := newConv(t, srv.URL)
	other := newConv(t, srv.URL)
	cases := []struct {
		name, method, path, ctype, body string
		status                          int
		code                            string
	}{
		{"unknown conversation", "POST", "/v1/conversations/nope/messages", "application/json", `{"text":"hi"}`, 404, "not_found"},
		{"form post", "POST", "/v1/conversations/" + id + "/messages", "application/x-www-form-urlencoded", `text=hi`, 415, "bad_content_type"},
		{"text/plain post", "POST", "/v1/conversations", "text/plain", `{"title":"x"}`, 415, "bad_content_type"},
		{"empty text", "POST", "/v1/conversations/" + id + "/messages", "application/json", `{"text":"  "}`, 400, "bad_request"},
		{"unknown field", "POST", "/v1/conversations/" + id + "/messages", "application/json", `{"text":"hi","actor":"user"}`, 400, "bad_request"},
		{"two values", "POST", "/v1/conversations/" + id + "/messages", "application/json", `{"text":"hi"}{"text":"x"}`, 400, "bad_request"},
		{"huge message", "POST", "/v1/conversations/" + id + "/messages", "application/json", `{"text":"` + strings.Repeat("a", MaxMessage+1) + `"}`, 400, "bad_request"},
		{"confirm nothing", "POST", "/v1/conversations/" + id + "/confirmations/abc", "application/json", `{"approve":true}`, 404, "not_found"},
		{"confirm without answer", "POST", "/v1/conversations/" + id + "/confirmations/abc", "application/json", `{}`, 400, "bad_request"},
		{"question nothing", "POST", "/v1/conversations/" + other + "/questions/abc", "application/json", `{"answer":{"code":"1"}}`, 404, "not_found"},
		{"delete unknown", "DELETE", "/v1/conversations/nope", "", "", 404, "not_found"},
		{"foreign host", "GET", "/v1/conversations", "", "", 403, "forbidden_host"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.code == "forbidden_host" {
				req.Host = "evil.example"
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			json.Unmarshal(b, &e)
			if res.StatusCode != tc.status || e.Error.Code != tc.code {
				t.Errorf("%d %s, want %d %s: %s", res.StatusCode, e.Error.Code, tc.status, tc.code, b)
			}
		})
	}
	// The other conversation's confirmation cannot be answered through this one.
	res := post(t, srv.URL+"/v1/conversations/"+other+"/messages", `{"text":"note this"}`)
	defer res.Body.Close()
	sse(t, res, func(typ string, d map[string]any) bool {
		if typ == "confirmation" {
			r := post(t, srv.URL+"/v1/conversations/"+id+"/confirmations/"+d["id"].(string), `{"approve":true}`)
			if r.StatusCode != http.StatusNotFound {
				t.Errorf("cross-conversation answer: %s", r.Status)
			}
			r.Body.Close()
			r = post(t, srv.URL+"/v1/conversations/"+other+"/confirmations/"+d["id"].(string), `{"approve":false}`)
			r.Body.Close()
		}
		return true
	})
	// List, then delete.
	var l struct{ Conversations []agent.Conversation }
	r, _ := http.Get(srv.URL + "/v1/conversations")
	decode(t, r, &l)
	if len(l.Conversations) != 2 {
		t.Errorf("%d conversations", len(l.Conversations))
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/v1/conversations/"+other, nil)
	r, _ = http.DefaultClient.Do(req)
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Errorf("delete: %s", r.Status)
	}
	r, _ = http.Get(srv.URL + "/v1/conversations/" + other)
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Errorf("get after delete: %s", r.Status)
	}
}
