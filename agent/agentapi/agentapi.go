// Package agentapi puts the assistant on the host's JSON API (docs/HOST-API.md
// "Conversations (the assistant)"): create, list, get and
// delete conversations, post a message and receive the turn as
// Server-Sent Events, answer a confirmation or a question, cancel a turn.
// The routes are added to a host/api Server with its guard (token or
// loopback Host, JSON bodies).
package agentapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/agent"
	"github.com/pkuinfo/harness/host/api"
)

// MaxMessage is the longest message a person may post, in bytes.
const MaxMessage = 32 << 10

// Heartbeat is how often a quiet event stream sends a comment line, so
// that proxies keep it open while a confirmation waits.
const Heartbeat = 15 * time.Second

// Routes serves the conversation routes of one Agent.
type Routes struct {
	Agent  *agent.Agent
	Waiter *agent.Waiter
}

// Register adds the routes to s.
func Register(s *api.Server, a *agent.Agent) *Routes {
	r := &Routes{Agent: a, Waiter: &agent.Waiter{}}
	s.HandleFunc("POST /v1/conversations", r.create)
	s.HandleFunc("GET /v1/conversations", r.list)
	s.HandleFunc("GET /v1/conversations/{id}", r.get)
	s.HandleFunc("DELETE /v1/conversations/{id}", r.remove)
	s.HandleStream("POST /v1/conversations/{id}/messages", r.message)
	s.HandleFunc("POST /v1/conversations/{id}/confirmations/{cid}", r.confirm)
	s.HandleFunc("POST /v1/conversations/{id}/questions/{qid}", r.answer)
	s.HandleFunc("POST /v1/conversations/{id}/cancel", r.cancel)
	s.HandleFunc("GET /v1/commands", r.commands)
	return r
}

func badRequest(format string, args ...any) error {
	return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: fmt.Sprintf(format, args...)}
}

func (rt *Routes) create(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Title string `json:"title"`
	}
	if err := api.ReadJSON(r, &req); err != nil {
		return err
	}
	c, err := rt.Agent.Conversations.Create(r.Context(), req.Title)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusCreated, c)
}

func (rt *Routes) list(w http.ResponseWriter, r *http.Request) error {
	cs, err := rt.Agent.Conversations.List(r.Context(), 0)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"conversations": cs})
}

func (rt *Routes) get(w http.ResponseWriter, r *http.Request) error {
	c, err := rt.Agent.Conversations.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"conversation": c, "running": rt.Agent.Running(c.ID)})
}

func (rt *Routes) remove(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if rt.Agent.Running(id) {
		return &api.Error{Status: http.StatusConflict, Code: "conflict", Message: "a turn is running in conversation " + id + "; cancel it first"}
	}
	if err := rt.Agent.Conversations.Delete(r.Context(), id); err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"deleted": id})
}

// commands is the chat's / menu: every enabled plugin's commands.
func (rt *Routes) commands(w http.ResponseWriter, r *http.Request) error {
	cmds, err := agent.Commands(r.Context(), rt.Agent.Host)
	if err != nil {
		return err
	}
	if cmds == nil {
		cmds = []agent.SlashCommand{}
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"commands": cmds})
}

func (rt *Routes) cancel(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	if err := api.ReadJSON(r, &req); err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"cancelled": rt.Agent.Cancel(r.PathValue("id"))})
}

func (rt *Routes) confirm(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Approve *bool `json:"approve"`
	}
	if err := api.ReadJSON(r, &req); err != nil {
		return err
	}
	if req.Approve == nil {
		return badRequest(`send {"approve": true} or {"approve": false}`)
	}
	if err := rt.Waiter.Approve(r.PathValue("id"), r.PathValue("cid"), *req.Approve); err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"answered": r.PathValue("cid"), "approve": *req.Approve})
}

func (rt *Routes) answer(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Answer  map[string]any `json:"answer"`
		Decline bool           `json:"decline"`
	}
	if err := api.ReadJSON(r, &req); err != nil {
		return err
	}
	if req.Answer == nil && !req.Decline {
		return badRequest(`send {"answer": {FIELD: VALUE, …}} or {"decline": true}`)
	}
	if req.Decline {
		req.Answer = nil
	}
	if err := rt.Waiter.Respond(r.PathValue("id"), r.PathValue("qid"), req.Answer); err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"answered": r.PathValue("qid")})
}

// message runs a turn and streams its events: each as "event: TYPE" and
// "data: JSON", flushed at once; "done" ends the stream. Errors before
// the stream starts (unknown conversation, a turn already running, a bad
// body) are the API's JSON errors.
func (rt *Routes) message(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Text string `json:"text"`
	}
	if err := api.ReadJSON(r, &req); err != nil {
		return err
	}
	req.Text = strings.TrimSpace(req.Text)
	if req.Text == "" {
		return badRequest(`send {"text": "the message"}`)
	}
	if len(req.Text) > MaxMessage {
		return badRequest("the message has %d bytes; the limit is %d", len(req.Text), MaxMessage)
	}
	id := r.PathValue("id")
	if _, err := rt.Agent.Conversations.Get(r.Context(), id); err != nil {
		return err
	}
	if rt.Agent.Running(id) {
		return &api.Error{Status: http.StatusConflict, Code: "busy", Message: "conversation " + id + " already has a turn running; cancel it first"}
	}
	rc := http.NewResponseController(w)
	// A turn may wait minutes for a confirmation: lift serve's write timeout for this stream.
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()

	var mu sync.Mutex
	buf := make([]byte, 0, 512)
	send := func(ev agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		buf = append(buf[:0], "event: "...)
		buf = append(buf, ev.Type...)
		buf = append(buf, "\ndata: "...)
		b, err := json.Marshal(ev)
		if err != nil {
			b = []byte(`{"type":"error","kind":"internal","message":"an event could not be encoded"}`)
		}
		buf = append(buf, b...)
		buf = append(buf, "\n\n"...)
		if _, err := w.Write(buf); err == nil {
			_ = rc.Flush()
		}
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				mu.Lock()
				_, _ = io.WriteString(w, ": keep-alive\n\n")
				_ = rc.Flush()
				mu.Unlock()
			}
		}
	}()
	err := rt.Agent.Turn(r.Context(), id, req.Text, rt.Waiter.ForConversation(id), send)
	var te *agent.TurnError
	if errors.As(err, &te) && te.Code == "busy" {
		// Another request started a turn between the check above and this one.
		send(agent.Event{Type: "error", Kind: "busy", Message: te.Message})
		send(agent.Event{Type: "done", Stop: "error"})
		return nil
	}
	if err != nil && !errors.As(err, &te) {
		// A storage failure: the stream has started, so it is an event.
		send(agent.Event{Type: "error", Kind: "internal", Message: "internal error (see the server log)"})
		send(agent.Event{Type: "done", Stop: "error"})
		if !errors.Is(err, context.Canceled) {
			return nil
		}
	}
	return nil
}
