package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// SetDocument records the plugin document the person consented to (its install link and content
// hash), which tokens with the functions service carry: the server runs only that version of the
// plugin's server functions (seed 003 “服务端函数”). A token minted before is dropped, so the next
// call presents the new document. The link and hash are checked as the server checks them.
func (p *Plugin) SetDocument(d protocol.DocumentRef) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("cloud client: plugin %s: %w", p.id, err)
	}
	p.mu.Lock()
	p.doc = &d
	p.token = ""
	p.mu.Unlock()
	return nil
}

// Call runs the plugin's server function fn with input (any JSON-marshallable value, or nil) on
// the provider (POST /v1/fn/{plugin}/{fn}) and returns its output as JSON. The Plugin needs the
// functions service and a document (SetDocument). Errors are *protocol.Error from the server:
// `unsupported` when the provider runs no functions (the official server), `forbidden` when its
// policy refuses the document, `conflict` when the consented version is no longer the one at its
// link, `rate_limited` over the call rate.
func (p *Plugin) Call(ctx context.Context, fn string, input any) (json.RawMessage, error) {
	if !protocol.ValidFunctionName(fn) {
		return nil, fmt.Errorf("cloud client: function %q: not a FunctionName (^[a-zA-Z][a-zA-Z0-9_]{0,63}$)", fn)
	}
	var req struct {
		Input any `json:"input,omitempty"`
	}
	req.Input = input
	var resp struct {
		Output json.RawMessage `json:"output"`
	}
	path := "/v1/fn/" + url.PathEscape(p.id) + "/" + url.PathEscape(fn)
	if err := p.do(ctx, http.MethodPost, path, nil, &req, &resp); err != nil {
		return nil, err
	}
	return resp.Output, nil
}
