package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// Functions runs plugin server functions for POST /v1/fn/{plugin}/{name} (seed 003 “服务端函数”,
// seed 004 "Server functions"). cloud/server/fnrun implements it with the plugin interpreter and
// the operator's policy (CLOUD_FN_POLICY). With Config.Functions nil the server offers no
// functions: the route answers `501 unsupported`, as the official server does.
type Functions interface {
	// Call runs one function and returns its output as JSON. Errors that are *protocol.Error
	// go to the client as they are (forbidden: the policy refuses the document; not_found: no
	// such function; bad_request: bad input); any other error is `500 server`. Neither the
	// output nor an error message may hold an operator secret.
	Call(ctx context.Context, c FunctionCall) (json.RawMessage, error)
	// Listed is what GET /v1/meta announces in `functions` (the functions of the documents the
	// operator allows by name; empty when the policy does not name documents).
	Listed() []protocol.MetaFunction
}

// FunctionCall is one call: the function, the document version the caller's token records, who
// calls and the input.
type FunctionCall struct {
	Plugin string               // the plugin id (the token's and the path's)
	Name   string               // the function name (FunctionName)
	Doc    protocol.DocumentRef // the consented document recorded in the token
	Caller string               // caller.id: the per-plugin pseudonym of the device
	Device string               // the device id, for the caller's server KV; never shown to the function
	// DeviceStore is the device-wide store quota the caller's server KV counts against, with
	// the device's own store (Config.DeviceStore); zero means DefaultDeviceStore.
	DeviceStore DeviceStoreLimits
	Input       json.RawMessage // the request's input, or nil
	// Version is the request's function version (the major version of the document the
	// caller expects), 0 when not given: a runner answers conflict when the consented document
	// has another.
	Version int64
}

// maxFunctionRequest bounds the body of POST /v1/fn/…: the input of a function, like a tool's.
const maxFunctionRequest = 256 << 10

// callFunction answers POST /v1/fn/{plugin}/{name}.
func (s *Server) callFunction(plugin, name string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.pluginToken(w, r, protocol.ServiceFunctions, false)
		if err != nil {
			return err
		}
		if plugin != c.Plg {
			return errf(protocol.CodeForbidden, "the token is for plugin %s, not %s", c.Plg, plugin)
		}
		if !protocol.ValidFunctionName(name) {
			return errf(protocol.CodeNotFound, "no function %q: a FunctionName matches ^[a-zA-Z][a-zA-Z0-9_]{0,63}$", name)
		}
		if c.Doc == "" {
			return errf(protocol.CodeForbidden, "the token records no consented document; ask for a token with document")
		}
		if err := s.limit(w, s.calls, c.Sub); err != nil {
			return err
		}
		var req protocol.FunctionRequest
		if err := readJSON(w, r, maxFunctionRequest, &req); err != nil {
			return err
		}
		select {
		case s.fnRuns <- struct{}{}:
			defer func() { <-s.fnRuns }()
		default:
			e := errf(protocol.CodeRateLimited, "the server is running %d functions at once, its limit; try again in a second", cap(s.fnRuns))
			e.RetryAfterS = 1
			w.Header().Set("Retry-After", "1")
			return e
		}
		out, err := s.cfg.Functions.Call(r.Context(), FunctionCall{Plugin: plugin, Name: name,
			Doc: protocol.DocumentRef{Link: c.Doc, Hash: c.Hash}, Caller: s.callerID(c.Sub, plugin), Device: c.Sub, Input: req.Input,
			Version: version(req.Version), DeviceStore: s.cfg.DeviceStore})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, functionResponse{Output: out})
		return nil
	}
}

// functionResponse is FunctionResponse with the output kept as the runner's JSON.
type functionResponse struct {
	Output json.RawMessage `json:"output"`
}

// callerID is caller.id: HMAC(server secret, "caller", device, plugin), 16 bytes base64url. The
// same device gets a different id in each plugin, and no plugin can link it to the device id.
func (s *Server) callerID(device, plugin string) string {
	return protocol.B64.EncodeToString(s.mac("caller", device, plugin)[:16])
}

// functionsPolicy is the calls-per-device limit of POST /v1/fn (Limits.functions.callsPerMin).
func functionsPolicy(l protocol.Limits) RatePolicy {
	n := 0
	if l.Functions != nil {
		n = int(l.Functions.CallsPerMin)
	}
	return RatePolicy{Name: "functions", Quota: n, Window: time.Minute}
}

// listedFunctions is GET /v1/meta's functions: never null.
func (s *Server) listedFunctions() []protocol.MetaFunction {
	if s.cfg.Functions == nil {
		return []protocol.MetaFunction{}
	}
	if l := s.cfg.Functions.Listed(); l != nil {
		return l
	}
	return []protocol.MetaFunction{}
}

func version(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}
