package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Role is who wrote a Message: "system", "user", "assistant" or "tool".
type Role string

// The four roles of the Chat Completions API.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of a conversation as a provider sees it (seed 003
// "测试 → 模拟模型": the loop sends the conversation, runs the tools the
// model asks for and sends their results back).
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// Reasoning is a reasoning model's thinking (reasoning_content); kept
	// for the transcript, never sent back.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID answers which call a tool message is the result of.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// ToolCall is one call a model asks for: its id, the tool's model name
// ("<plugin>__<tool>") and the arguments as the JSON text the model wrote
// (not necessarily valid).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec is a tool offered to the model: its model name, the description
// written for the model and the input as a plain JSON Schema object.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// Request is one round sent to a provider.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
	// ToolsJSON, when set, is Tools already encoded as the API's "tools"
	// array (EncodeTools); the loop encodes its table once per turn.
	ToolsJSON json.RawMessage
	// MaxTokens caps the reply (max_tokens); 0 leaves it to the provider.
	MaxTokens int
}

// Usage counts the tokens of one round or a whole turn.
type Usage struct {
	Input  int `json:"input"`
	Output int `json:"output"`
}

// Add adds u2 to u.
func (u *Usage) Add(u2 Usage) { u.Input += u2.Input; u.Output += u2.Output }

// Total is Input + Output.
func (u Usage) Total() int { return u.Input + u.Output }

// Reply is a provider's answer to one Request: the assistant message (text
// and tool calls), why it stopped ("stop", "tool_calls", "length", …) and
// the tokens it used (zero when the provider does not say).
type Reply struct {
	Message      Message
	FinishReason string
	Usage        Usage
}

// Delta is a piece of a streamed reply: text for the person, or reasoning.
type Delta struct {
	Text      string
	Reasoning string
}

// Provider is an OpenAI-compatible model service (docs/HOST-API.md "The AI provider").
// Complete sends one round and streams the reply's text to onDelta (which
// may be nil) as it arrives; it returns the whole reply, or an error that
// names the provider (*ProviderError for a refused request). Complete
// stops when ctx ends.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Reply, error)
}

// ProviderError is a request a provider refused or could not answer: its
// name and base URL host, the HTTP status (0 when no reply came), the
// provider's message, and how many attempts were made.
type ProviderError struct {
	Provider string
	Status   int
	Message  string
	Attempts int
	Err      error
}

// Error names the provider, the status and the provider's message.
func (e *ProviderError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Status == http.StatusTooManyRequests {
		b.WriteString(" (rate limited; wait a moment, or check the account's quota)")
	} else if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		b.WriteString(" (check the API key: harness model set --api-key-stdin)")
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *ProviderError) Unwrap() error { return e.Err }

// OpenAI is a Provider for any OpenAI-compatible Chat Completions service,
// built on github.com/openai/openai-go/v3. Use NewOpenAI.
type OpenAI struct {
	cfg    Config
	name   string
	client openai.Client
	plain  openai.Client
	idle   time.Duration
}

// Provider timeouts and retries (docs/HOST-API.md "The AI provider").
const (
	// HeaderTimeout is how long a provider may take to start its reply.
	HeaderTimeout = 90 * time.Second
	// IdleTimeout is how long a stream may stay silent between chunks.
	IdleTimeout = 90 * time.Second
	// MaxRetries is how many times a 408, 409, 429 or 5xx reply or a failed
	// connection is retried, waiting what Retry-After (or Retry-After-Ms)
	// says, else an exponential back-off from 0.5 s.
	MaxRetries = 3
	// MaxRetryWait is the longest Retry-After honoured; a longer one fails
	// at once with the provider's message.
	MaxRetryWait = 60 * time.Second
)

// NewOpenAI returns the provider for cfg. rt, when not nil, is the HTTP
// transport (tests); the default dials with a 10 s connect timeout. The
// API key is sent only to cfg.BaseURL (the client sends it on requests to
// its base URL, and net/http drops Authorization on redirects to another
// host). It is an error when the base URL is not http(s) or the model is
// empty.
func NewOpenAI(cfg Config, rt http.RoundTripper) (*OpenAI, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model: base URL %q: want http(s)://HOST/PATH (harness model set --base-url URL)", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, errors.New("model: no model name (harness model set --model NAME, or $HARNESS_MODEL)")
	}
	if rt == nil {
		rt = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: HeaderTimeout,
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		}
	}
	p := &OpenAI{cfg: cfg, name: ProviderName(cfg.BaseURL), idle: IdleTimeout}
	key := cfg.APIKey
	if key == "" {
		key = "none" // local servers (Ollama, vLLM, the mock) take any key; an empty one is an error in the SDK
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/") + "/"),
		option.WithAPIKey(key),
		// Ambient OPENAI_ORG_ID / OPENAI_PROJECT_ID belong to OpenAI, not to whichever provider this is.
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
		option.WithHTTPClient(&http.Client{Transport: rt}),
		option.WithMaxRetryDelay(MaxRetryWait),
	}
	// Test's client: no retries, and JSON replies left as they are.
	p.plain = openai.NewClient(append(opts, option.WithMaxRetries(0))...)
	p.client = openai.NewClient(append(opts, option.WithMaxRetries(MaxRetries), option.WithMiddleware(jsonToStream))...)
	return p, nil
}

// Name is the provider's name (a preset's name, else the base URL's host).
func (p *OpenAI) Name() string { return p.name }

// Complete implements Provider with a streaming request (stream_options
// include_usage). It tolerates what real providers send: reasoning_content
// deltas, an application/json reply to the streaming request, a tool
// call's arguments split over chunks, several calls interleaved by index,
// finish_reason "length" (returned as it is; the loop names it), and a
// stream that ends without [DONE].
func (p *OpenAI) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Reply, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	params := p.params(req)
	var attempts atomic.Int32
	opts := []option.RequestOption{option.WithMiddleware(
		func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			attempts.Add(1)
			return next(r)
		})}
	if len(req.ToolsJSON) > 0 {
		tools := req.ToolsJSON
		opts = append(opts, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			if r.Body == nil {
				return next(r)
			}
			b, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				return nil, err
			}
			b = spliceTools(b, tools)
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
			return next(r)
		}))
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params, opts...)
	defer stream.Close()
	// A silent stream is cut after p.idle.
	errIdle := fmt.Errorf("no data for %s", p.idle)
	// Before the first chunk the transport's HeaderTimeout and the retries bound the wait.
	watchdog := time.AfterFunc(10*time.Minute, func() { cancel(errIdle) })
	defer watchdog.Stop()

	acc := newAccumulator()
	for stream.Next() {
		watchdog.Reset(p.idle)
		acc.add(stream.Current(), onDelta)
	}
	if err := stream.Err(); err != nil {
		if c := context.Cause(ctx); c == errIdle {
			err = c
		} else if ctx.Err() != nil && c != nil {
			return nil, c
		}
		return nil, p.wrap(err, int(attempts.Load()))
	}
	return acc.reply(), nil
}

func (p *OpenAI) wrap(err error, attempts int) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	pe := &ProviderError{Provider: p.name, Attempts: attempts, Err: err}
	var ae *openai.Error
	if errors.As(err, &ae) {
		pe.Status = ae.StatusCode
		pe.Message = ae.Message
		if pe.Message == "" {
			pe.Message = strings.TrimSpace(string(limitBytes([]byte(ae.RawJSON()), 300)))
		}
	} else {
		pe.Message = err.Error()
	}
	// A service may quote the key it refused; the message goes to the person, the
	// transcript and logs, so the key is cut out of it (and out of the wrapped error).
	if k := p.cfg.APIKey; len(k) >= 4 && (strings.Contains(pe.Message, k) || strings.Contains(err.Error(), k)) {
		pe.Message = strings.ReplaceAll(pe.Message, k, "[key]")
		pe.Err = errors.New(strings.ReplaceAll(err.Error(), k, "[key]"))
	}
	return pe
}

func limitBytes(b []byte, n int) []byte {
	if len(b) > n {
		return append(b[:n:n], "…"...)
	}
	return b
}

// params builds the SDK's request from req.
func (p *OpenAI) params(req *Request) openai.ChatCompletionNewParams {
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages))
	for _, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			msgs = append(msgs, openai.SystemMessage(m.Content))
		case RoleUser:
			msgs = append(msgs, openai.UserMessage(m.Content))
		case RoleTool:
			msgs = append(msgs, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
					}})
			}
			msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.cfg.Model),
		Messages:      msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if len(req.ToolsJSON) > 0 {
		return params
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(t.Parameters),
		}))
	}
	return params
}

// accumulator builds a Reply from stream chunks: text and reasoning in
// order, tool calls by index (a chunk may carry several, interleaved, and
// an id or name only in its first piece).
type accumulator struct {
	text, reasoning strings.Builder
	calls           map[int64]*ToolCall
	finish          string
	usage           Usage
}

func newAccumulator() *accumulator { return &accumulator{calls: map[int64]*ToolCall{}} }

func (a *accumulator) add(c openai.ChatCompletionChunk, onDelta func(Delta)) {
	if c.Usage.TotalTokens > 0 || c.Usage.PromptTokens > 0 {
		a.usage = Usage{Input: int(c.Usage.PromptTokens), Output: int(c.Usage.CompletionTokens)}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only the first choice is used (n is 1)
		}
		d := ch.Delta
		var delta Delta
		if f, ok := d.JSON.ExtraFields["reasoning_content"]; ok {
			var s string
			if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
				delta.Reasoning = s
				a.reasoning.WriteString(s)
			}
		}
		if d.Content != "" {
			delta.Text = d.Content
			a.text.WriteString(d.Content)
		}
		if onDelta != nil && (delta.Text != "" || delta.Reasoning != "") {
			onDelta(delta)
		}
		for _, tc := range d.ToolCalls {
			call := a.calls[tc.Index]
			if call == nil {
				call = &ToolCall{}
				a.calls[tc.Index] = call
			}
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Function.Name != "" {
				call.Name += tc.Function.Name
			}
			call.Arguments += tc.Function.Arguments
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
}

func (a *accumulator) reply() *Reply {
	r := &Reply{
		Message:      Message{Role: RoleAssistant, Content: a.text.String(), Reasoning: a.reasoning.String()},
		FinishReason: a.finish,
		Usage:        a.usage,
	}
	idx := make([]int64, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	for n, i := range idx {
		c := *a.calls[i]
		if c.ID == "" {
			c.ID = "call_" + strconv.Itoa(n) // some local servers send none
		}
		r.Message.ToolCalls = append(r.Message.ToolCalls, c)
	}
	if r.FinishReason == "" {
		r.FinishReason = "stop"
		if len(r.Message.ToolCalls) > 0 {
			r.FinishReason = "tool_calls"
		}
	}
	return r
}

// jsonToStream turns a plain application/json completion, which some
// providers send even when asked to stream, into the one-chunk event
// stream the SDK reads.
func jsonToStream(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(r)
	if err != nil || res.StatusCode != http.StatusOK {
		return res, err
	}
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if mt != "application/json" {
		return res, nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	chunk, err := completionToChunk(body)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("data: ")
	b.Write(chunk)
	b.WriteString("\n\ndata: [DONE]\n\n")
	res.Body = io.NopCloser(&b)
	res.Header.Set("Content-Type", "text/event-stream")
	res.ContentLength = int64(b.Len())
	return res, nil
}

// completionToChunk rewrites a chat.completion object as a
// chat.completion.chunk: each choice's message becomes its delta, tool
// calls get their index.
func completionToChunk(body []byte) ([]byte, error) {
	var c struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Created int64           `json:"created"`
		Usage   json.RawMessage `json:"usage,omitempty"`
		Error   json.RawMessage `json:"error,omitempty"`
		Choices []struct {
			Index        int                        `json:"index"`
			FinishReason string                     `json:"finish_reason"`
			Message      map[string]json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("the reply is neither an event stream nor a chat completion: %v", err)
	}
	if len(c.Error) > 0 {
		return body, nil // the stream reader reports {"error":…}
	}
	type choice struct {
		Index        int                        `json:"index"`
		FinishReason string                     `json:"finish_reason,omitempty"`
		Delta        map[string]json.RawMessage `json:"delta"`
	}
	out := struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Model   string          `json:"model"`
		Created int64           `json:"created"`
		Usage   json.RawMessage `json:"usage,omitempty"`
		Choices []choice        `json:"choices"`
	}{ID: c.ID, Object: "chat.completion.chunk", Model: c.Model, Created: c.Created, Usage: c.Usage, Choices: []choice{}}
	for _, ch := range c.Choices {
		delta := ch.Message
		if raw, ok := delta["tool_calls"]; ok {
			var calls []map[string]any
			if json.Unmarshal(raw, &calls) == nil {
				for i := range calls {
					calls[i]["index"] = i
				}
				b, _ := json.Marshal(calls)
				delta["tool_calls"] = b
			}
		}
		out.Choices = append(out.Choices, choice{Index: ch.Index, FinishReason: ch.FinishReason, Delta: delta})
	}
	return json.Marshal(out)
}

// EncodeTools writes tools as the Chat Completions "tools" array:
// [{"type":"function","function":{"name","description","parameters"}}].
func EncodeTools(tools []ToolSpec) (json.RawMessage, error) {
	type fn struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	type tool struct {
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	out := make([]tool, len(tools))
	for i, t := range tools {
		out[i] = tool{Type: "function", Function: fn{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
	}
	return json.Marshal(out)
}

// spliceTools puts "tools": tools first into the JSON object body (the
// SDK's encoding of the request without tools), without re-encoding
// either.
func spliceTools(body, tools []byte) []byte {
	i := bytes.IndexByte(body, '{')
	if i < 0 {
		return body
	}
	rest := bytes.TrimLeft(body[i+1:], " \n\t\r")
	out := make([]byte, 0, len(body)+len(tools)+10)
	out = append(out, `{"tools":`...)
	out = append(out, tools...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// TestResult is what Test found: whether the service answered, how long
// the check took (ms), how it checked ("models": GET /models;
// "completion": a one-token completion, for services without a model
// list), whether the model is among the listed ones (ModelListed is nil
// when the list was not available) and up to 20 of the listed model ids.
type TestResult struct {
	OK          bool     `json:"ok"`
	Provider    string   `json:"provider"`
	Model       string   `json:"model"`
	Method      string   `json:"method"`
	Millis      int64    `json:"ms"`
	ModelListed *bool    `json:"modelListed,omitempty"`
	Models      []string `json:"models,omitempty"`
}

// Test makes a real request to the provider to see that the base URL, the
// key and the model work (docs/HOST-API.md "The AI provider": test connection): GET /models, then,
// when the service has no model list (404, 405, 501), a completion of one
// token. A refused key, an unknown model or an unreachable service is a
// *ProviderError naming the provider. Test makes no retries.
func (p *OpenAI) Test(ctx context.Context) (*TestResult, error) {
	start := time.Now()
	res := &TestResult{Provider: p.name, Model: p.cfg.Model, Method: "models"}
	page, err := p.plain.Models.List(ctx)
	var ae *openai.Error
	switch {
	case err == nil:
		listed := false
		for _, m := range page.Data {
			if m.ID == p.cfg.Model {
				listed = true
			}
			if len(res.Models) < 20 {
				res.Models = append(res.Models, m.ID)
			}
		}
		res.ModelListed = &listed
	case errors.As(err, &ae) && (ae.StatusCode == http.StatusNotFound || ae.StatusCode == http.StatusMethodNotAllowed || ae.StatusCode == http.StatusNotImplemented):
		res.Method = "completion"
		params := p.params(&Request{Messages: []Message{{Role: RoleUser, Content: "ping"}}, MaxTokens: 1})
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
		if _, err := p.plain.Chat.Completions.New(ctx, params); err != nil {
			return nil, p.wrap(err, 1)
		}
	default:
		return nil, p.wrap(err, 1)
	}
	res.OK = true
	res.Millis = time.Since(start).Milliseconds()
	return res, nil
}
