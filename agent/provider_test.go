package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// scripted is a provider endpoint that answers every request with body
// (as content type ct) and status.
func scripted(t *testing.T, status int, ct, body string) *OpenAI {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	p, err := NewOpenAI(Config{BaseURL: srv.URL + "/v1", Model: "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sseBody(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String() + "data: [DONE]\n\n"
}

func TestProviderTolerance(t *testing.T) {
	cases := []struct {
		name, ct, body string
		want           string // reply rendered by show
		deltas         string
	}{
		{name: "reasoning then text", ct: "text/event-stream", body: sseBody(
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"想一想"}}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"你好"}}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`),
			want: "stop text=你好 reasoning=想一想 usage=7/2", deltas: "[r:想一想][t:你好]"},
		{name: "calls interleaved by index, arguments split", ct: "text/event-stream", body: sseBody(
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"y__t","arguments":""}}]}}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"x__t","arguments":"{\"q\":"}}]}}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			want: `tool_calls a:x__t({"q":1}) b:y__t({})`},
		{name: "JSON reply to a stream request", ct: "application/json; charset=utf-8",
			body: `{"id":"1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"x__t","arguments":"{}"}}]}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
			want: `tool_calls reasoning=r usage=3/1 c:x__t({})`},
		{name: "cut at length", ct: "text/event-stream", body: sseBody(
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"半"},"finish_reason":"length"}]}`),
			want: "length text=半"},
		{name: "no finish reason, no ids, no DONE", ct: "text/event-stream",
			body: "data: " + `{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"x__t","arguments":"{}"}}]}}]}` + "\n\n",
			want: `tool_calls call_0:x__t({})`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := scripted(t, 200, tc.ct, tc.body)
			var deltas strings.Builder
			r, err := p.Complete(context.Background(), &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, func(d Delta) {
				if d.Reasoning != "" {
					deltas.WriteString("[r:" + d.Reasoning + "]")
				}
				if d.Text != "" {
					deltas.WriteString("[t:" + d.Text + "]")
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := show(r); got != tc.want {
				t.Errorf("reply %q, want %q", got, tc.want)
			}
			if tc.deltas != "" && deltas.String() != tc.deltas {
				t.Errorf("deltas %q, want %q", deltas.String(), tc.deltas)
			}
		})
	}
}

func show(r *Reply) string {
	s := r.FinishReason
	if r.Message.Content != "" {
		s += " text=" + r.Message.Content
	}
	if r.Message.Reasoning != "" {
		s += " reasoning=" + r.Message.Reasoning
	}
	if r.Usage.Total() > 0 {
		s += fmt.Sprintf(" usage=%d/%d", r.Usage.Input, r.Usage.Output)
	}
	for _, c := range r.Message.ToolCalls {
		s += fmt.Sprintf(" %s:%s(%s)", c.ID, c.Name, c.Arguments)
	}
	return s
}

func TestProviderErrors(t *testing.T) {
	cases := []struct {
		name, ct, body string
		status         int
		want           string
	}{
		{"rate limited", "application/json", `{"error":{"message":"quota","type":"rate_limit"}}`, 429, `HTTP 429 Too Many Requests: quota (rate limited; wait a moment, or check the account's quota) after 4 attempts`},
		{"bad key", "application/json", `{"error":{"message":"invalid api key"}}`, 401, `HTTP 401 Unauthorized: invalid api key (check the API key: harness model set --api-key-stdin)`},
		{"error inside the stream", "text/event-stream", sseBody(`{"error":{"message":"overloaded"}}`), 200, `overloaded`},
		{"not JSON", "application/json", `<html>`, 200, `the reply is neither an event stream nor a chat completion`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := scripted(t, tc.status, tc.ct, tc.body)
			_, err := p.Complete(context.Background(), &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil)
			var pe *ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "127.0.0.1:") {
				t.Errorf("err = %v, want %q in it", err, tc.want)
			}
		})
	}
}

func TestProviderCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	p, _ := NewOpenAI(Config{BaseURL: srv.URL + "/v1", Model: "m"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Complete(ctx, &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	if err := SaveConfig(dir, Config{BaseURL: "ftp://x", Model: "m"}, false); err == nil {
		t.Fatal("ftp base URL accepted")
	}
	if err := SaveConfig(dir, Config{BaseURL: "https://u:p@x/v1", Model: "m"}, false); err == nil {
		t.Fatal("user info accepted")
	}
	if err := SaveConfig(dir, Config{BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: "sk-secret"}, true); err != nil {
		t.Fatal(err)
	}
	c, src, err := LoadConfig(dir, func(k string) string {
		if k == EnvModel {
			return "deepseek-reasoner"
		}
		return ""
	})
	if err != nil || c.APIKey != "sk-secret" || c.Model != "deepseek-reasoner" || src.Model != "env" || src.APIKey != "stored" {
		t.Fatalf("%+v %+v %v", c, src, err)
	}
	if got := ProviderName(c.BaseURL); got != "DeepSeek (api.deepseek.com)" {
		t.Errorf("provider name %q", got)
	}
}
