package mcpx

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/plugin"
)

// HostRemotes returns r as the host's host.Remotes (host.WithRemotes): the
// host then lists the remote plugins beside its own (kind "remote",
// Community) and runs their calls through its permission rules and audit
// log, while the Registry keeps the servers and tokens.
func (r *Registry) HostRemotes() host.Remotes { return hostRemotes{r} }

type hostRemotes struct{ r *Registry }

func (h hostRemotes) List(ctx context.Context) ([]*host.RemotePlugin, error) {
	list, err := h.r.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*host.RemotePlugin, 0, len(list))
	for _, p := range list {
		out = append(out, forHost(p))
	}
	return out, nil
}

func (h hostRemotes) Get(ctx context.Context, id string) (*host.RemotePlugin, error) {
	p, err := h.r.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return forHost(p), nil
}

func (h hostRemotes) CallTool(ctx context.Context, id, tool string, input json.RawMessage) (json.RawMessage, error) {
	p, err := h.r.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	rt := p.Tool(tool)
	if rt == nil {
		return nil, &host.NotFound{What: fmt.Sprintf("plugin %s has no tool %q", id, tool)}
	}
	return p.Client().Call(ctx, rt.Remote, input)
}

func (h hostRemotes) SetMode(ctx context.Context, id string, e plugin.Effect, m host.Mode) error {
	return h.r.SetMode(ctx, id, e, m)
}

func (h hostRemotes) SetEnabled(ctx context.Context, id string, on bool) error {
	return h.r.SetEnabled(ctx, id, on)
}

func (h hostRemotes) Remove(ctx context.Context, id string) error { return h.r.Remove(ctx, id) }

func forHost(p *RemotePlugin) *host.RemotePlugin {
	name := p.Server.Title
	if name == "" {
		name = p.Server.Name
	}
	out := &host.RemotePlugin{
		ID: p.ID, Name: name, URL: p.Server.URL, Enabled: p.Enabled, Modes: p.Modes,
		Instructions: RemoteInstructions(p.ID, p.Server.Instructions), InstalledAt: p.InstalledAt,
	}
	for _, t := range p.Server.Tools {
		title := t.Title
		if title == "" {
			title = t.Name
		}
		out.Tools = append(out.Tools, host.RemoteTool{Name: t.Name, Title: title, Description: t.Description,
			Effect: t.Effect, InputSchema: t.InputSchema})
	}
	return out
}
