package host

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// CallRequest is one tool call through the host.
type CallRequest struct {
	// Actor is who calls: ActorUser, ActorAgent or ActorScheduler.
	Actor Actor
	// Plugin and Tool name the tool.
	Plugin, Tool string
	// Input is the tool input as an expr value (nil, bool, float64, string,
	// []any, *expr.Object); nil means {}. expr.FromJSON makes one from JSON.
	Input any
	// Turn identifies the agent's turn, for taint: after an untrusted
	// result in a turn, the agent's later write, money and public calls in
	// the same turn need confirmation. Calls without a turn ("") share one
	// turn, so a client that sends none is not left unprotected: after an
	// untrusted result its writes need confirmation until EndTurn("") or
	// TaintTTL.
	Turn string
	// Drawn is the handle of a document the assistant drew (NoteDrawn) whose
	// button this call is. The call is then the assistant's whatever Actor
	// says, and is decided under the turn that drew the document, even after
	// that turn ended; an unknown or expired handle is decided as a turn that
	// holds untrusted and private data. "" for any other call.
	Drawn string
}

// CallResult is the outcome of a call the rules let through, or the
// confirmation it waits for.
type CallResult struct {
	// Value is the tool's result (an expr value); nil when Confirmation is set.
	Value any
	// Untrusted marks Value as third-party data, never to be followed as
	// instructions: every result of a Community or remote plugin (seed 004
	// "Install links"), and an Official plugin's tool that declares
	// untrusted: true. Every face (API, MCP, the assistant) shows it as such;
	// an agent's untrusted result taints its turn.
	Untrusted bool
	// Private marks Value as the person's private data (a result fetched with
	// their campus session, or a built-in's private result): an agent turn
	// that read it asks before any call that can reach a third party.
	Private bool
	// Confirmation is set when the call waits for the user's answer
	// (Confirm); the tool has not run.
	Confirmation *Confirmation
	// Duration is how long the tool ran.
	Duration time.Duration
}

// Confirmation is a call the user must confirm before it runs (an ask mode,
// or a durable write in a tainted turn). The client shows Reason, the tool
// and its input, and answers with Host.Confirm(ID, approve).
type Confirmation struct {
	ID      string        `json:"id"`
	Actor   Actor         `json:"actor"`
	Plugin  string        `json:"plugin"`
	Tool    string        `json:"tool"`
	Title   string        `json:"title"`
	TitleEn string        `json:"titleEn,omitempty"` // the English title (ToolTitleEn), "" when there is none
	Effect  plugin.Effect `json:"effect"`
	Reason  string        `json:"reason"`
	Why     string        `json:"why,omitempty"` // Reason as a code (WhyAsk, WhyUntrusted) for a front end to word
	Turn    string        `json:"turn,omitempty"`
	Expires time.Time     `json:"expires"`
	input   any
	drawn   string // CallRequest.Drawn of the call asked about
	hash    string // the plugin version the user is asked about
	remote  bool   // a remote plugin's call (confirmRemote)
}

// Input returns the input the confirmed call will run with (an expr value).
func (c *Confirmation) Input() any { return c.input }

// ConfirmationTTL is how long a Confirmation can be answered.
const ConfirmationTTL = 10 * time.Minute

// TaintTTL is how long a turn keeps what it holds (an untrusted or private
// result) after its last call.
const TaintTTL = time.Hour

// Call runs one tool of an installed plugin as req.Actor under the
// permission rules (Decide): a refused call is a *Refusal; an agent call
// that needs the user's answer returns a CallResult with Confirmation set
// and runs nothing; otherwise the tool runs with the host's KV, campus
// client and abilities. A failed run is the *interp.Error of the run. Every
// call, refused or not, is written to the audit log — a call to run before
// it runs — and a call whose entry cannot be written fails with an
// *AuditFailure (which says whether the tool ran). A remote plugin's tool
// (WithRemotes) goes through the same rules and log; its result is
// untrusted.
func (h *Host) Call(ctx context.Context, req CallRequest) (*CallResult, error) {
	start := time.Now()
	req = h.legacy(req) // a built-in's renamed id or tool
	state := h.turnState(&req)
	p, t, modes, official, err := h.tool(ctx, req.Plugin, req.Tool)
	if err != nil {
		if isNotFound(err) && h.remotes != nil {
			if _, rerr := h.remotes.Get(ctx, req.Plugin); rerr == nil {
				return h.callRemote(ctx, req, state, start)
			}
		}
		return nil, err
	}
	if !official {
		// A plugin installed before the rule, or one changed since, runs only if it
		// still keeps it: the host cannot follow data inside a third party's code.
		if _, why := ThirdPartyRule(p.Manifest); why != "" {
			if err := h.audit(ctx, req, t.Effect, "refused", why, time.Since(start)); err != nil {
				return nil, err
			}
			return nil, &Refusal{Actor: req.Actor, Plugin: req.Plugin, Tool: req.Tool, Reason: why}
		}
	}
	v := Decide(req.Actor, t, modes[t.Effect], state, reachOf(p, t, official, false, h.reaching(p, t, req.Input), req.Input))
	d, reason := v.Decision, v.Reason
	switch d {
	case Refuse:
		ref := &Refusal{Actor: req.Actor, Plugin: req.Plugin, Tool: req.Tool, Reason: reason}
		if err := h.audit(ctx, req, t.Effect, "refused", reason, time.Since(start)); err != nil {
			return nil, err
		}
		return nil, ref
	case Confirm:
		// A call that would fail on its input is refused now, not after a person approved it.
		if _, err := interp.CheckInput(t, req.Input); err != nil {
			if aerr := h.audit(ctx, req, t.Effect, "error", err.Error(), time.Since(start)); aerr != nil {
				return nil, aerr
			}
			return nil, err
		}
		c := &Confirmation{
			ID: newID(), Actor: req.Actor, Plugin: req.Plugin, Tool: req.Tool, Title: t.Title, TitleEn: ToolTitleEn(p, req.Tool),
			Effect: t.Effect, Reason: reason, Why: v.Why, Turn: req.Turn, drawn: req.Drawn, Expires: h.now().Add(ConfirmationTTL), input: req.Input,
			hash: p.Hash,
		}
		h.mu.Lock()
		h.sweep()
		h.pending[c.ID] = c
		h.mu.Unlock()
		if err := h.audit(ctx, req, t.Effect, "confirm", reason, time.Since(start)); err != nil {
			h.unpend(c.ID)
			return nil, err
		}
		return &CallResult{Confirmation: c}, nil
	}
	return h.run(ctx, req, p, t, start)
}

// Confirm answers a Confirmation: approve runs the call as it was asked,
// the user having just allowed it, unless meanwhile the plugin changed
// version (an accepted update may have made the tool stronger than the
// question said) or the rules now refuse the call (a mode set to deny):
// then, as when the user declines, the answer is a *Refusal. An unknown or
// expired id is *NotFound.
func (h *Host) Confirm(ctx context.Context, id string, approve bool) (*CallResult, error) {
	h.mu.Lock()
	c := h.pending[id]
	delete(h.pending, id)
	h.mu.Unlock()
	if c == nil || !h.now().Before(c.Expires) {
		return nil, &NotFound{What: fmt.Sprintf("no confirmation %q is waiting (it was answered, or it expired after %s)", id, ConfirmationTTL)}
	}
	if c.remote {
		return h.confirmRemote(ctx, c, approve)
	}
	req := CallRequest{Actor: c.Actor, Plugin: c.Plugin, Tool: c.Tool, Input: c.input, Turn: c.Turn, Drawn: c.drawn}
	start := time.Now()
	p, t, modes, _, err := h.tool(ctx, c.Plugin, c.Tool)
	if err != nil {
		return nil, err
	}
	reason := "the user declined"
	if approve {
		if v := Decide(c.Actor, t, modes[t.Effect], TurnState{}, Reach{}); v.Decision == Refuse {
			reason = v.Reason
		} else if p.Hash != c.hash {
			reason = fmt.Sprintf("%s changed since the confirmation was asked (now %s); ask again", c.Plugin, p.Manifest.Version)
		} else {
			if err := h.audit(ctx, req, t.Effect, "approved", approvedNote(c), 0); err != nil {
				return nil, err
			}
			return h.run(ctx, req, p, t, start)
		}
	}
	if err := h.audit(ctx, req, t.Effect, "refused", reason, time.Since(start)); err != nil {
		return nil, err
	}
	return nil, &Refusal{Actor: c.Actor, Plugin: c.Plugin, Tool: c.Tool, Reason: reason}
}

// Pending returns the confirmations waiting for an answer.
func (h *Host) Pending() []*Confirmation {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep()
	out := make([]*Confirmation, 0, len(h.pending))
	for _, c := range h.pending {
		out = append(out, c)
	}
	return out
}

// EndTurn forgets an agent turn's state (what it read), unless a document the
// assistant drew in it is still on screen (NoteDrawn): its buttons are decided
// under the turn until TaintTTL.
func (h *Host) EndTurn(turn string) {
	h.mu.Lock()
	if e := h.turns[turnKey(ActorAgent, turn)]; e != nil && !e.drawn {
		delete(h.turns, turnKey(ActorAgent, turn))
	}
	h.mu.Unlock()
}

// sweep drops expired confirmations, turn states and drawn documents; h.mu is held.
func (h *Host) sweep() {
	now := h.now()
	for id, c := range h.pending {
		if !now.Before(c.Expires) {
			delete(h.pending, id)
		}
	}
	for k, e := range h.turns {
		if now.Sub(e.at) > TaintTTL {
			delete(h.turns, k)
		}
	}
	for id, d := range h.drawnDocs {
		if now.Sub(d.at) > TaintTTL {
			delete(h.drawnDocs, id)
		}
	}
}

// turnEntry is one turn's state in Host.turns.
type turnEntry struct {
	state TurnState
	at    time.Time // when it last changed, or when a document was drawn in it
	drawn bool      // a document drawn in the turn may still call under it
}

// drawnDoc is a document the assistant drew: the turn it was drawn in.
type drawnDoc struct {
	turn string
	at   time.Time
}

// MaxDrawn bounds the drawn documents the host remembers (NoteDrawn); past it
// the oldest is forgotten, and its buttons are then decided as a turn that
// holds untrusted and private data.
const MaxDrawn = 4096

// turnKey is the key of a turn in Host.turns: the agent's and the
// scheduler's turns never share state.
func turnKey(actor Actor, turn string) string {
	if actor == ActorScheduler {
		return "scheduler\x00" + turn
	}
	return turn
}

// NoteDrawn records that the assistant drew a document in agent turn turn (a
// ui__render card in the chat) and returns its handle, an opaque id the
// document's buttons send as CallRequest.Drawn (the API's "drawn"), so that a
// tap on them is decided under that turn. A handle lasts TaintTTL.
func (h *Host) NoteDrawn(turn string) string {
	id := "d-" + newID()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep()
	if len(h.drawnDocs) >= MaxDrawn {
		var oldest string
		for k, d := range h.drawnDocs {
			if oldest == "" || d.at.Before(h.drawnDocs[oldest].at) {
				oldest = k
			}
		}
		delete(h.drawnDocs, oldest)
	}
	now := h.now()
	h.drawnDocs[id] = drawnDoc{turn: turn, at: now}
	e := h.turns[turnKey(ActorAgent, turn)]
	if e == nil {
		e = &turnEntry{}
		h.turns[turnKey(ActorAgent, turn)] = e
	}
	e.drawn, e.at = true, now
	return id
}

// MarkTurn adds s to what agent turn turn holds: the assistant calls it at a
// turn's start with what the conversation's earlier turns read (their results
// are in the history the model reads again).
func (h *Host) MarkTurn(turn string, s TurnState) {
	if !s.Held() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.markLocked(turnKey(ActorAgent, turn), s)
}

// markLocked adds s to the entry of key; h.mu is held.
func (h *Host) markLocked(key string, s TurnState) {
	e := h.turns[key]
	if e == nil {
		e = &turnEntry{}
		h.turns[key] = e
	}
	e.state, e.at = e.state.merge(s), h.now()
}

// Turn returns what agent turn turn holds so far.
func (h *Host) Turn(turn string) TurnState {
	r := CallRequest{Actor: ActorAgent, Turn: turn}
	return h.turnState(&r)
}

// turnState is what the turn of req holds. A drawn document's call becomes
// the agent's, in the turn that drew it (req is changed to say so); an
// unknown handle holds everything. A person's own call holds nothing.
func (h *Host) turnState(req *CallRequest) TurnState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.Drawn != "" {
		req.Actor = ActorAgent
		d, ok := h.drawnDocs[req.Drawn]
		if !ok || h.now().Sub(d.at) > TaintTTL {
			req.Turn = "drawn\x00" + req.Drawn
			return TurnState{Untrusted: true, Private: true}
		}
		req.Turn = d.turn
	}
	if req.Actor == ActorUser {
		return TurnState{}
	}
	e := h.turns[turnKey(req.Actor, req.Turn)]
	if e == nil || h.now().Sub(e.at) > TaintTTL {
		return TurnState{}
	}
	// TaintTTL counts from the turn's last call: a turn still in use (one that
	// keeps asking while nobody answers) never forgets what it holds.
	e.at = h.now()
	return e.state
}

// noteRead adds what an allowed call's result holds to its turn.
func (h *Host) noteRead(req CallRequest, untrusted, private bool) {
	if req.Actor == ActorUser || (!untrusted && !private) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.markLocked(turnKey(req.Actor, req.Turn), TurnState{Untrusted: untrusted, Private: private})
}

// approvedNote is the audit note of a confirmed call: who allowed it and why
// they were asked.
func approvedNote(c *Confirmation) string {
	return fmt.Sprintf("the person approved confirmation %s (%s: %s)", c.ID, c.Why, c.Reason)
}

// tool finds an enabled plugin's tool and the plugin's permission modes, in
// one query (this is on every call's path).
func (h *Host) tool(ctx context.Context, id, name string) (*plugin.Plugin, *plugin.Tool, map[plugin.Effect]Mode, bool, error) {
	var (
		enabled, official bool
		seq               int
		hash, raw         string
	)
	err := h.stmtTool.QueryRowContext(ctx, id).Scan(&enabled, &seq, &hash, &raw, &official)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil, false, &NotFound{What: fmt.Sprintf("no plugin %q is installed", id), Plugin: id}
	}
	if err != nil {
		return nil, nil, nil, false, fmt.Errorf("host: plugin %s: %w", id, err)
	}
	if !enabled {
		return nil, nil, nil, false, &Conflict{Msg: fmt.Sprintf("plugin %s is disabled; enable it first", id)}
	}
	p, err := h.parsed(ctx, id, seq, hash)
	if err != nil {
		return nil, nil, nil, false, err
	}
	t := p.Tool(name)
	if t == nil {
		t = functionTool(p, name) // "fn:NAME", a server function (function.go)
	}
	if t == nil {
		return nil, nil, nil, false, &NotFound{What: fmt.Sprintf("plugin %s has no tool %q", id, name)}
	}
	if !official && !t.Untrusted {
		// A Community plugin's results are third-party data, whatever it declares
		// (seed 004 "Install links"): they are marked and taint the agent's turn.
		tc := *t
		tc.Untrusted = true
		t = &tc
	}
	modes := map[plugin.Effect]Mode{}
	for _, e := range plugin.Effects {
		modes[e] = ModeAsk // a row lost to a bug never opens a door
	}
	for _, kv := range strings.Split(raw, ",") {
		if e, m, ok := strings.Cut(kv, "="); ok {
			if eff, err := plugin.ParseEffect(e); err == nil {
				modes[eff] = Mode(m)
			}
		}
	}
	return p, t, modes, official, nil
}

// run runs an allowed call and records it.
func (h *Host) run(ctx context.Context, req CallRequest, p *plugin.Plugin, t *plugin.Tool, start time.Time) (*CallResult, error) {
	ctx = interp.WithActor(ctx, string(req.Actor)) // a call step inside runs as the same actor
	input := req.Input
	if input == nil {
		input = expr.NewObject(0)
	}
	// The call is in the log before it runs, so no tool runs unrecorded.
	entry, err := h.auditStart(ctx, req, t.Effect)
	if err != nil {
		return nil, err
	}
	runStart := time.Now()
	v, untrusted, err := h.runTool(ctx, req, p, t, input)
	untrusted = untrusted || t.Untrusted
	took := time.Since(runStart)
	if err != nil {
		if aerr := h.auditEnd(ctx, entry, req, "error", err.Error(), time.Since(start)); aerr != nil {
			return nil, aerr
		}
		return nil, err
	}
	private := privateOf(p, t, h.privateTools(p))
	h.noteRead(req, untrusted, private)
	if err := h.auditEnd(ctx, entry, req, "ok", "", time.Since(start)); err != nil {
		return nil, err
	}
	return &CallResult{Value: v, Untrusted: untrusted, Private: private, Duration: took}, nil
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// MarshalJSON writes the confirmation with its input, so that a client can
// show what the call will do.
func (c *Confirmation) MarshalJSON() ([]byte, error) {
	in, err := expr.ToJSON(c.input, "")
	if err != nil {
		return nil, err
	}
	type plain Confirmation
	return json.Marshal(struct {
		*plain
		Input json.RawMessage `json:"input"`
	}{(*plain)(c), in})
}
