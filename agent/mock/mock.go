// Package mock is the mock model of seed 003 ("测试 → 模拟模型";
// examples/mock-llm there): an OpenAI-compatible Chat Completions server
// that answers from a script instead of a model, so the assistant's loop
// can be run end to end without an API key. It picks a route by keywords
// in the person's last message, asks for that route's tool calls one round
// at a time, and then sums up the tools' results. Replies stream (text in
// small pieces, tool-call arguments split across chunks, a
// reasoning_content delta first) unless the request sets stream false.
//
// The model is "mock-agent"; `harness model mock` serves it on
// 127.0.0.1:8789 (DefaultAddr; docs/DECISIONS.md §11). Routes are a Plan
// table: DefaultRoutes adapts the seed's table to this project's tools;
// Options.Routes adds routes ahead of them.
package mock

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Model is the model name the mock answers to.
const Model = "mock-agent"

// DefaultAddr is where `harness model mock` listens (docs/DECISIONS.md §11).
const DefaultAddr = "127.0.0.1:8789"

// Call is a tool call a route asks for: the tool's model name and the
// arguments as JSON text (sent as it is, so a route can send bad JSON).
type Call struct {
	Tool string
	Args string
}

// Step is what a route does in one round: ask for calls, or answer with
// text (which ends the turn). Exactly one of Calls and Text is set.
type Step struct {
	Calls []Call
	Text  string
}

// State is what a route sees of the conversation: the person's last
// message, the results of the tools called since (in order), the tools
// offered, and the context blocks the app injected.
type State struct {
	Message string
	Results []Result
	Tools   map[string]bool
	// Context is the text of every <context …>…</context> block of the
	// system messages, in order.
	Context []string
}

// Result is one tool result the app sent back.
type Result struct {
	Tool    string
	Content string
}

// Round is how many tool rounds the route has had in this turn.
func (s *State) Round() int { return len(s.Results) }

// Last is the content of the latest result, "" when there is none.
func (s *State) Last() string {
	if len(s.Results) == 0 {
		return ""
	}
	return s.Results[len(s.Results)-1].Content
}

// Route is one line of the plan table: a message containing any of Words
// (case-insensitive) takes it; Plan returns the next step.
type Route struct {
	Name  string
	Words []string
	Plan  func(s *State) Step
}

// Options configures New.
type Options struct {
	// Routes are tried before DefaultRoutes.
	Routes []Route
	// Delay is a pause between streamed chunks (0: none), to watch the
	// stream in a terminal.
	Delay time.Duration
	// Now is the clock for dates in arguments; nil means time.Now.
	Now func() time.Time
}

// Server is the mock model's http.Handler: POST /v1/chat/completions and
// GET /v1/models. Requests counts the completions answered.
type Server struct {
	opts     Options
	routes   []Route
	Requests atomic.Int64
}

// New returns the mock model.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts}
	s.routes = append(append([]Route{}, opts.Routes...), DefaultRoutes(opts.Now)...)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": Model, "object": "model", "owned_by": "pku-harness"}}})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		s.complete(w, r)
	default:
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s (the mock model serves POST /v1/chat/completions)", r.Method, r.URL.Path))
	}
}

// request is the part of a Chat Completions request the mock reads.
type request struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// text reads a message content: a string or an array of text parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "the body is not a chat completion request: "+err.Error())
		return
	}
	if req.Model != Model {
		writeError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("the mock model is %q, not %q", Model, req.Model))
		return
	}
	st := s.state(&req)
	step := s.plan(st)
	if req.Stream {
		s.stream(w, r, step, body)
		return
	}
	msg := map[string]any{"role": "assistant", "content": step.Text}
	finish := "stop"
	if len(step.Calls) > 0 {
		finish = "tool_calls"
		var calls []any
		for i, c := range step.Calls {
			calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", st.Round(), i), "type": "function",
				"function": map[string]any{"name": c.Tool, "arguments": c.Args}})
		}
		msg["tool_calls"] = calls
		msg["content"] = nil
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "mock-" + fmt.Sprint(s.Requests.Load()), "object": "chat.completion", "created": s.opts.Now().Unix(), "model": Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   usage(body, step),
	})
}

func usage(body []byte, step Step) map[string]int {
	in := len(body) / 4
	out := utf8.RuneCountInString(step.Text)/2 + 1
	for _, c := range step.Calls {
		out += len(c.Args)/4 + 4
	}
	return map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
}

// state reads the turn: the last user message and the tool results after it.
func (s *Server) state(req *request) *State {
	st := &State{Tools: map[string]bool{}}
	for _, t := range req.Tools {
		st.Tools[t.Function.Name] = true
	}
	names := map[string]string{}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			st.Context = append(st.Context, contextBlocks(text(m.Content))...)
		case "user":
			st.Message = text(m.Content)
			st.Results = nil
		case "assistant":
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
			}
		case "tool":
			st.Results = append(st.Results, Result{Tool: names[m.ToolCallID], Content: text(m.Content)})
		}
	}
	return st
}

// contextBlocks returns every <context …>…</context> block of s.
func contextBlocks(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "<context")
		if i < 0 {
			return out
		}
		j := strings.Index(s[i:], "</context>")
		if j < 0 {
			return out
		}
		out = append(out, s[i:i+j+len("</context>")])
		s = s[i+j+len("</context>"):]
	}
}

// plan picks the route and its step; a call to a tool that is not offered
// becomes a text saying so.
func (s *Server) plan(st *State) Step {
	msg := strings.ToLower(st.Message)
	for _, r := range s.routes {
		for _, w := range r.Words {
			if strings.Contains(msg, strings.ToLower(w)) {
				step := r.Plan(st)
				for _, c := range step.Calls {
					if !st.Tools[c.Tool] && !strings.HasPrefix(c.Tool, "no_such") {
						return Step{Text: fmt.Sprintf("我想调用 `%s`,但这一轮没有提供这个工具(插件没有安装、被停用,或者需要先用 plugins__use 加载)。", c.Tool)}
					}
				}
				return step
			}
		}
	}
	return Step{Text: "(模拟模型)我没有找到与这条消息匹配的脚本。试试:校车、提醒、马上、看板、表单、remember、食堂、who、写插件。"}
}

// stream writes step as server-sent chunks.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, step Step, body []byte) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	id := "mock-" + fmt.Sprint(s.Requests.Load())
	created := s.opts.Now().Unix()
	send := func(delta map[string]any, finish any, u map[string]int) bool {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if u != nil {
			chunk["choices"] = []any{}
			chunk["usage"] = u
		}
		b, _ := json.Marshal(chunk)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		if s.opts.Delay > 0 {
			select {
			case <-r.Context().Done():
				return false
			case <-time.After(s.opts.Delay):
			}
		}
		return true
	}
	if !send(map[string]any{"role": "assistant", "content": "", "reasoning_content": "按脚本应答。"}, nil, nil) {
		return
	}
	finish := "stop"
	if len(step.Calls) > 0 {
		finish = "tool_calls"
		// Every call's id and name first, then the arguments in pieces,
		// interleaved across calls by index, as real providers do.
		for i, c := range step.Calls {
			if !send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", len(step.Calls), i),
				"type": "function", "function": map[string]any{"name": c.Tool, "arguments": ""}}}}, nil, nil) {
				return
			}
		}
		pieces := make([][]string, len(step.Calls))
		most := 0
		for i, c := range step.Calls {
			pieces[i] = split(c.Args, 3)
			most = max(most, len(pieces[i]))
		}
		for k := range most {
			for i := range step.Calls {
				if k < len(pieces[i]) {
					if !send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": pieces[i][k]}}}}, nil, nil) {
						return
					}
				}
			}
		}
	} else {
		for _, p := range split(step.Text, 40) {
			if !send(map[string]any{"content": p}, nil, nil) {
				return
			}
		}
	}
	if !send(map[string]any{}, finish, nil) {
		return
	}
	send(nil, nil, usage(body, step))
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// split cuts s into pieces of n runes (never inside a UTF-8 sequence).
func split(s string, n int) []string {
	var out []string
	for s != "" {
		i, k := 0, 0
		for i < len(s) && k < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": code, "code": code}})
}
