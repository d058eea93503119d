package abilities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/lang/expr"
)

// ErrCloudNotConfigured is the error of cloud.call while the host has no
// PKU harness Cloud provider set (seed 004 "Server functions"; Settings →
// Cloud, or `harness cloud use URL`).
var ErrCloudNotConfigured = errors.New("cloud not configured: no PKU harness Cloud provider is set, so server functions cannot run (Settings → Cloud, or `harness cloud use URL`)")

// cloudCall is cloud.call { fn, input } (read; seed 003 "服务端函数": the
// phone calls a server function through this ability). It runs the
// plugin's function fn on the provider through the plugin's consent-gated
// handle (host/cloud), with the document the plugin was installed from
// (its link and content hash) in the token, and returns the function's
// output. It fails with the host/cloud error codes: consent_required,
// offline (never queued), unavailable, not_declared, protocol.
func (s *Set) cloudCall(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("fn", "input"); err != nil {
		return nil, err
	}
	fn, err := c.args.str("fn", true, 64)
	if err != nil {
		return nil, err
	}
	if !protocol.ValidFunctionName(fn) {
		return nil, fmt.Errorf("fn %q is not a function name (^[a-zA-Z][a-zA-Z0-9_]{0,63}$)", fn)
	}
	var input any
	if v := c.args.get("input"); v != nil {
		b, err := expr.ToJSON(v, "")
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		input = json.RawMessage(b)
	}
	m := cloud.For(s.db)
	if base, err := m.Provider(ctx); err != nil {
		return nil, err
	} else if base == "" {
		return nil, ErrCloudNotConfigured
	}
	d := cloud.DeclOf(c.man)
	if d == nil {
		return nil, fmt.Errorf("plugin %s declares no server functions (no server: section or cloud.uses: [functions])", c.Plugin)
	}
	p, err := m.Plugin(d)
	if err != nil {
		return nil, err
	}
	if c.p != nil && c.p.Hash != "" {
		link := c.p.Source
		if link == "" {
			link = "plugin:" + c.Plugin
		}
		if err := p.SetDocument(protocol.DocumentRef{Link: link, Hash: c.p.Hash}); err != nil {
			return nil, err
		}
	}
	out, err := p.Call(ctx, fn, input)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	v, err := expr.FromJSON(out)
	if err != nil {
		return nil, fmt.Errorf("the output of %s: %w", fn, err)
	}
	return v, nil
}
