package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// KindRemote is Installed.Kind for a remote plugin: an MCP server over
// Streamable HTTP (docs/HOST-API.md "Remote plugins") that the host does not run itself.
const KindRemote = "remote"

// Remotes is where the host finds remote plugins (docs/HOST-API.md
// "Remote plugins"). Package mcpx implements it over its own table and registers it
// with WithRemotes, so the host lists remote plugins and their tools beside
// its own and runs their calls through Decide, confirmations, taint and the
// audit log, without knowing MCP. Errors of Get for an unknown id are
// *NotFound.
type Remotes interface {
	// List returns every installed remote plugin, by id.
	List(ctx context.Context) ([]*RemotePlugin, error)
	// Get returns one installed remote plugin.
	Get(ctx context.Context, id string) (*RemotePlugin, error)
	// CallTool runs one tool with a JSON object input and returns its JSON
	// result, which is third-party data. Call reports its error as an
	// *interp.Error of kind http.
	CallTool(ctx context.Context, id, tool string, input json.RawMessage) (json.RawMessage, error)
	// SetMode, SetEnabled and Remove change an installed remote plugin.
	SetMode(ctx context.Context, id string, e plugin.Effect, m Mode) error
	SetEnabled(ctx context.Context, id string, on bool) error
	Remove(ctx context.Context, id string) error
}

// RemotePlugin is a remote plugin as the host sees it: always Community,
// its tools read or write (readOnlyHint), never userOnly.
type RemotePlugin struct {
	ID, Name, URL string
	// Instructions go to the model as they are (mcpx prefaces the
	// server's own as third-party text).
	Instructions string
	Enabled      bool
	Modes        map[plugin.Effect]Mode
	Tools        []RemoteTool
	InstalledAt  time.Time
}

// RemoteTool is one tool of a remote plugin; InputSchema is JSON Schema.
type RemoteTool struct {
	Name, Title, Description string
	Effect                   plugin.Effect
	InputSchema              map[string]any
}

// WithRemotes sets where the host finds remote plugins; without it there
// are none.
func WithRemotes(r Remotes) Option { return func(h *Host) { h.remotes = r } }

// installedRemote is a remote plugin as List and Show report it.
func installedRemote(p *RemotePlugin) *Installed {
	d := Declarations{Campus: []string{}, Network: []string{}, Abilities: []string{}, Remote: p.URL, Tools: []ToolDecl{}}
	for _, t := range p.Tools {
		d.Tools = append(d.Tools, ToolDecl{Name: t.Name, Effect: t.Effect, Untrusted: true})
	}
	return &Installed{ID: p.ID, Name: p.Name, Kind: KindRemote, Source: p.URL, Enabled: p.Enabled,
		InstalledAt: p.InstalledAt, Declarations: d}
}

// remote returns the remote plugin id, or a *NotFound when there is none.
func (h *Host) remote(ctx context.Context, id string) (*RemotePlugin, error) {
	if h.remotes == nil {
		return nil, &NotFound{What: fmt.Sprintf("no plugin %q is installed", id), Plugin: id}
	}
	return h.remotes.Get(ctx, id)
}

// isNotFound reports whether err is a *NotFound: the id may be a remote
// plugin's.
func isNotFound(err error) bool {
	var nf *NotFound
	return errors.As(err, &nf)
}

// remoteTool finds an enabled remote plugin's tool as a plugin.Tool for
// Decide.
func (h *Host) remoteTool(ctx context.Context, id, name string) (*RemotePlugin, *plugin.Tool, error) {
	p, err := h.remote(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if !p.Enabled {
		return nil, nil, &Conflict{Msg: fmt.Sprintf("plugin %s is disabled; enable it first", id)}
	}
	for _, t := range p.Tools {
		if t.Name == name {
			return p, &plugin.Tool{Name: t.Name, Title: t.Title, Effect: t.Effect, Untrusted: true}, nil
		}
	}
	return nil, nil, &NotFound{What: fmt.Sprintf("plugin %s has no tool %q", id, name)}
}

// callRemote is Call for a remote plugin's tool: the same rules, audit and
// confirmations; every result is untrusted and taints the agent's turn.
func (h *Host) callRemote(ctx context.Context, req CallRequest, state TurnState, start time.Time) (*CallResult, error) {
	p, t, err := h.remoteTool(ctx, req.Plugin, req.Tool)
	if err != nil {
		return nil, err
	}
	v := Decide(req.Actor, t, p.Modes[t.Effect], state, reachOf(nil, t, false, true, false, req.Input))
	d, reason := v.Decision, v.Reason
	switch d {
	case Refuse:
		if err := h.audit(ctx, req, t.Effect, "refused", reason, time.Since(start)); err != nil {
			return nil, err
		}
		return nil, &Refusal{Actor: req.Actor, Plugin: req.Plugin, Tool: req.Tool, Reason: reason}
	case Confirm:
		c := &Confirmation{
			ID: newID(), Actor: req.Actor, Plugin: req.Plugin, Tool: req.Tool, Title: t.Title,
			Effect: t.Effect, Reason: reason, Why: v.Why, Turn: req.Turn, Expires: h.now().Add(ConfirmationTTL), input: req.Input,
			remote: true, drawn: req.Drawn,
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
	return h.runRemote(ctx, req, t, start)
}

// confirmRemote is Confirm for a remote plugin's call.
func (h *Host) confirmRemote(ctx context.Context, c *Confirmation, approve bool) (*CallResult, error) {
	req := CallRequest{Actor: c.Actor, Plugin: c.Plugin, Tool: c.Tool, Input: c.input, Turn: c.Turn, Drawn: c.drawn}
	start := time.Now()
	p, t, err := h.remoteTool(ctx, c.Plugin, c.Tool)
	if err != nil {
		return nil, err
	}
	reason := "the user declined"
	if approve {
		if v := Decide(c.Actor, t, p.Modes[t.Effect], TurnState{}, Reach{}); v.Decision == Refuse {
			reason = v.Reason
		} else if t.Effect != c.Effect {
			reason = fmt.Sprintf("%s.%s changed since the confirmation was asked (now effect %s); ask again", c.Plugin, c.Tool, t.Effect)
		} else {
			if err := h.audit(ctx, req, t.Effect, "approved", approvedNote(c), 0); err != nil {
				return nil, err
			}
			return h.runRemote(ctx, req, t, start)
		}
	}
	if err := h.audit(ctx, req, t.Effect, "refused", reason, time.Since(start)); err != nil {
		return nil, err
	}
	return nil, &Refusal{Actor: c.Actor, Plugin: c.Plugin, Tool: c.Tool, Reason: reason}
}

func (h *Host) runRemote(ctx context.Context, req CallRequest, t *plugin.Tool, start time.Time) (*CallResult, error) {
	input := req.Input
	if input == nil {
		input = expr.NewObject(0)
	}
	in, err := expr.ToJSON(input, "")
	if err != nil {
		return nil, err
	}
	entry, err := h.auditStart(ctx, req, t.Effect)
	if err != nil {
		return nil, err
	}
	runStart := time.Now()
	out, err := h.remotes.CallTool(ctx, req.Plugin, req.Tool, in)
	took := time.Since(runStart)
	if err != nil {
		if aerr := h.auditEnd(ctx, entry, req, "error", err.Error(), time.Since(start)); aerr != nil {
			return nil, aerr
		}
		// A failed tool run, as a host plugin's would be (the API answers 422).
		return nil, &interp.Error{Kind: interp.KindHTTP, Msg: err.Error()}
	}
	v, err := expr.FromJSON(out)
	if err != nil {
		if aerr := h.auditEnd(ctx, entry, req, "error", err.Error(), time.Since(start)); aerr != nil {
			return nil, aerr
		}
		return nil, fmt.Errorf("host: %s.%s: result: %w", req.Plugin, req.Tool, err)
	}
	h.noteRead(req, true, false)
	if err := h.auditEnd(ctx, entry, req, "ok", "", time.Since(start)); err != nil {
		return nil, err
	}
	return &CallResult{Value: v, Untrusted: true, Duration: took}, nil
}

// remoteAgentTools are the agent tools of the enabled remote plugins.
func (h *Host) remoteAgentTools(ctx context.Context) ([]AgentTool, error) {
	if h.remotes == nil {
		return nil, nil
	}
	list, err := h.remotes.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []AgentTool
	for _, p := range list {
		if !p.Enabled {
			continue
		}
		for _, t := range p.Tools {
			if p.Modes[t.Effect] == ModeDeny {
				continue
			}
			out = append(out, AgentTool{
				Name: p.ID + "__" + t.Name, Plugin: p.ID, Tool: t.Name, Title: t.Title,
				Description: t.Description, Effect: t.Effect, Mode: p.Modes[t.Effect],
				Untrusted: true, Remote: true, InputSchema: t.InputSchema, Instructions: p.Instructions,
			})
		}
	}
	return out, nil
}
