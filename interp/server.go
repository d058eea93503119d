package interp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/net/html"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// ServerKV is a server function's key-value storage, already scoped to one plugin and one
// caller by the server that runs it (seed 004 "Server functions": "server-side KV storage").
// Values are expr values; ttl 0 keeps a value until it is deleted.
type ServerKV interface {
	Get(ctx context.Context, key string) (v any, ok bool, err error)
	Set(ctx context.Context, key string, v any, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
}

// ServerOptions configures one RunServer: what the server gives a function instead of the host's
// abilities. There is never a campus client: server functions never get campus access.
type ServerOptions struct {
	// Transport sends the function's https requests, to server.network hosts only (checked
	// before Transport is used). Nil is the default public-only transport.
	Transport http.RoundTripper
	// AllowPrivateAddrs lets the default transport dial loopback and private addresses. Only for
	// tests.
	AllowPrivateAddrs bool
	// Secrets are the operator's values of the secrets the document declares, by name; a
	// declared secret the operator did not set is null. crypto.hmacSha256 takes its key from
	// here by name.
	Secrets map[string]string
	// SecretRefs, when not nil, is what `secrets.NAME` reads instead of the value: a stand-in
	// the server swaps for the value on the request as it leaves, so the function's
	// expressions never hold the value itself. A declared name missing here is null, even when
	// Secrets has it (crypto.hmacSha256 still takes its key from Secrets).
	SecretRefs map[string]string
	// Caller is caller.id, the per-plugin pseudonym of the calling device; "" makes caller null
	// (an `access: public` function).
	Caller string
	// KV backs kv.get, kv.set and kv.delete; nil fails them with kind "ability".
	KV ServerKV
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnRequest, when set, is called for each request the run sends.
	OnRequest func(RequestRecord)
}

// serverRun is what a server function's run adds to a tool's: the bindings of `secrets` and
// `caller`, and the server abilities.
type serverRun struct {
	secrets *expr.Object
	caller  any
	raw     map[string]string
	kv      ServerKV
}

func (s *serverRun) lookup(name string) any {
	if name == "secrets" {
		return s.secrets
	}
	return s.caller
}

// ServerFunction returns the server function name of p, or nil.
func ServerFunction(p *plugin.Plugin, name string) *plugin.ServerFunction {
	if p == nil || p.Manifest == nil || p.Manifest.Server == nil {
		return nil
	}
	for _, f := range p.Manifest.Server.Functions {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// RunServer runs the server function fn of a loaded plugin with input (seed 004 "Server
// functions"; seed 003 “服务端函数”): the same steps and expressions as a tool, under every
// limit a tool's run has (run time, operations, steps, requests, reply and result sizes), with
// `secrets` and `caller` in scope, requests to server.network hosts only, no campus access, and
// the server abilities kv.get/set/delete, crypto.sha256, crypto.hmacSha256 and crypto.randomId.
// Errors are *Error as from Run.
func RunServer(ctx context.Context, p *plugin.Plugin, fn string, input any, o ServerOptions) (any, error) {
	sf := ServerFunction(p, fn)
	if sf == nil {
		return nil, errf(KindInput, "no server function %q", fn)
	}
	srv := &serverRun{secrets: expr.NewObject(4), raw: map[string]string{}, kv: o.KV}
	for _, name := range p.Manifest.Server.Secrets {
		v, ok := o.Secrets[name]
		if ok {
			srv.raw[name] = v
		}
		if o.SecretRefs != nil {
			v, ok = o.SecretRefs[name]
		}
		if ok {
			srv.secrets.Set(name, v)
		} else {
			srv.secrets.Set(name, nil)
		}
	}
	if o.Caller != "" {
		c := expr.NewObject(4)
		c.Set("id", o.Caller)
		srv.caller = c
	}
	limit := MaxRunTime
	ctx, cancel := context.WithTimeoutCause(ctx, limit, &runTimeError{limit})
	defer cancel()
	clock := o.Now
	if clock == nil {
		clock = time.Now
	}
	opts := &Options{Transport: o.Transport, AllowPrivateAddrs: o.AllowPrivateAddrs, Now: clock, OnRequest: o.OnRequest}
	r := &run{
		p:       p,
		o:       opts,
		clock:   clock,
		now:     clock(),
		net:     newNetClient(p.Manifest.Server.Network, nil, opts),
		budget:  expr.NewBudget(MaxOperations),
		srv:     srv,
		replyAt: map[string]string{},
		docURL:  map[*html.Node]string{},
	}
	// The same deadline, grace and result check as Run (finish).
	return r.guard(ctx, sf.Tool, input)
}

// serverAbility runs one `ability:` step of a server function.
func (r *run) serverAbility(ctx context.Context, s *scope, st *plugin.Step) (any, error) {
	t := s.tc.t
	var op plugin.AbilityOp
	found := false
	for _, o := range plugin.ServerAbilities {
		if o.Name() == st.Ability {
			op, found = o, true
		}
	}
	if !found {
		return nil, errf(KindAbility, "ability %s: not a server ability", st.Ability)
	}
	if !t.Effect.AtLeast(op.Effect) {
		return nil, errf(KindAbility, "ability %s: the operation is %s, stronger than this %s function", st.Ability, op.Effect, t.Effect)
	}
	args, err := r.eval(ctx, s, st.Args)
	if err != nil {
		return nil, err
	}
	str := func(name string, required bool) (string, error) {
		if o, ok := args.(*expr.Object); ok {
			if v, ok := o.Get(name); ok {
				if x, ok := v.(string); ok {
					return x, nil
				}
				return "", errf(KindAbility, "ability %s: args.%s must be a string", st.Ability, name)
			}
		}
		if required {
			return "", errf(KindAbility, "ability %s: args.%s is required", st.Ability, name)
		}
		return "", nil
	}
	// text is args itself when args is a string, else args.text.
	text := func() (string, error) {
		if x, ok := args.(string); ok {
			return x, nil
		}
		return str("text", true)
	}
	switch st.Ability {
	case "crypto.sha256":
		x, err := text()
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(x))
		return hex.EncodeToString(sum[:]), nil
	case "crypto.hmacSha256":
		name, err := str("secret", true)
		if err != nil {
			return nil, err
		}
		key, ok := r.srv.raw[name]
		if !ok {
			return nil, errf(KindAbility, "ability %s: secret %s is not set by the operator (or not in server.secrets)", st.Ability, name)
		}
		x, err := str("text", true)
		if err != nil {
			return nil, err
		}
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte(x))
		return hex.EncodeToString(m.Sum(nil)), nil
	case "crypto.randomId":
		b := make([]byte, 16)
		rand.Read(b)
		return base64.RawURLEncoding.EncodeToString(b), nil
	}
	// kv.*
	if r.srv.kv == nil {
		return nil, errf(KindAbility, "ability %s: no server KV for this call (a public function has no caller)", st.Ability)
	}
	key, err := str("key", true)
	if err != nil {
		return nil, err
	}
	if key == "" || len(key) > 256 {
		return nil, errf(KindAbility, "ability %s: args.key must be 1–256 characters", st.Ability)
	}
	var res any
	switch st.Ability {
	case "kv.get":
		v, ok, err := r.srv.kv.Get(ctx, key)
		if err == nil && ok {
			res = v
		}
		if err != nil {
			return nil, serverKVErr(ctx, st.Ability, err)
		}
	case "kv.set":
		o, _ := args.(*expr.Object)
		var v any
		if o != nil {
			v, _ = o.Get("value")
		}
		var ttl time.Duration
		if o != nil {
			if x, ok := o.Get("ttlS"); ok {
				n, ok := x.(float64)
				if !ok || n < 0 || n > 365*24*3600 {
					return nil, errf(KindAbility, "ability %s: args.ttlS must be a number of seconds, 0–31536000", st.Ability)
				}
				ttl = time.Duration(n * float64(time.Second))
			}
		}
		if err := r.srv.kv.Set(ctx, key, v, ttl); err != nil {
			return nil, serverKVErr(ctx, st.Ability, err)
		}
	case "kv.delete":
		if err := r.srv.kv.Delete(ctx, key); err != nil {
			return nil, serverKVErr(ctx, st.Ability, err)
		}
	}
	return res, nil
}

func serverKVErr(ctx context.Context, ability string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if ce := ctxErr(ctx); ce != nil {
		return ce
	}
	return &Error{Kind: KindAbility, Msg: fmt.Sprintf("ability %s: %v", ability, err), err: err}
}
