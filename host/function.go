package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// FunctionPrefix names a plugin's server function where a tool name goes: a CallRequest with
// Tool "fn:NAME" runs server function NAME of the plugin's `server:` section on the Cloud
// provider (seed 003 "服务端函数": widgets may bind `{ fn }`), through the same rules, effect
// modes and audit as a tool. A server function is never offered to the model as a tool.
const FunctionPrefix = "fn:"

// functionTool is the tool view of server function name ("fn:NAME") of p, nil when p declares
// no such function.
func functionTool(p *plugin.Plugin, name string) *plugin.Tool {
	fn, ok := strings.CutPrefix(name, FunctionPrefix)
	if !ok || p.Manifest == nil || p.Manifest.Server == nil {
		return nil
	}
	for _, f := range p.Manifest.Server.Functions {
		if f.Tool != nil && f.Name == fn {
			t := *f.Tool
			t.Name = name
			t.UserOnly = true // reached by the person's own widgets, never by the model
			return &t
		}
	}
	return nil
}

// runFunction runs an allowed call of a server function: the input is checked against the
// function's fields, then sent through the plugin's consent-gated Cloud handle.
func (h *Host) runFunction(ctx context.Context, p *plugin.Plugin, t *plugin.Tool, input any) (any, error) {
	in, err := interp.CheckInput(t, input)
	if err != nil {
		return nil, err
	}
	b, err := expr.ToJSON(in, "")
	if err != nil {
		return nil, fmt.Errorf("host: %s.%s: input: %w", p.Manifest.ID, t.Name, err)
	}
	out, err := cloud.For(h.db).CallFor(ctx, p, strings.TrimPrefix(t.Name, FunctionPrefix), json.RawMessage(b))
	if err != nil {
		var ce *cloud.Error
		if errors.As(err, &ce) {
			return nil, interp.Wrap(KindTool, fmt.Sprintf("%s.%s: %v", p.Manifest.ID, t.Name, err), err)
		}
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return expr.FromJSON(out)
}
