// Package fnrun runs plugin server functions for the Cloud reference server (seed 003
// “服务端函数”, seed 004 "Server functions"): the `server:` section of the document a person
// consented to, run by the plugin interpreter (interp.RunServer) under the operator's policy.
//
// The policy (CLOUD_FN_POLICY) decides which documents may run at all:
//
//   - allowlist: only the exact versions (link and content hash) in CLOUD_FN_ALLOWLIST;
//   - verified: documents whose link is an Official one (github.com/pkuinfo/pku-harness-plugins,
//     plugin.ResolveLink), at the version the token records;
//   - open: any document, at the version the token records.
//
// Unset (off) the server offers no functions at all (501 unsupported), as the official server.
// Every call runs the version recorded in the caller's token: the document is fetched by its link
// once, kept by its hash, and refused (409 conflict) when the link now serves another version.
// Functions get the server's abilities only: the caller's own server KV, crypto.sha256,
// crypto.hmacSha256, crypto.randomId, and https requests to server.network hosts. They never
// get campus access.
//
// Secrets are given by identity, never by the id a document claims: each operator secret is
// bound to an approved link (and, when pinned, content hash) in CLOUD_FN_SECRETS
// (SecretBinding), and under the open policy only to a version also on the allowlist. A
// function never holds a secret's value: `secrets.NAME` is a random stand-in, which the runner
// swaps for the value only in the request header or query parameter to the host the binding
// names. The stand-in or the value in any other part of any request, in a result or in an
// error message (as it is, split, reversed, re-cased, percent/base64/hex encoded or in pieces)
// is refused, and so is a reply that echoes the value.
package fnrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// Policy is CLOUD_FN_POLICY: which documents may run.
type Policy string

// The policies. PolicyOff is the default: no functions.
const (
	PolicyOff       Policy = ""
	PolicyAllowlist Policy = "allowlist"
	PolicyVerified  Policy = "verified"
	PolicyOpen      Policy = "open"
)

// Config configures a Runner.
type Config struct {
	// Policy decides which documents run; PolicyOff is refused by New (leave Config.Functions
	// of the server nil instead).
	Policy Policy
	// Allow is the allowlist: the exact document versions PolicyAllowlist runs.
	Allow []protocol.DocumentRef
	// Fetcher reads the documents' files by URL; nil is a plugin.HTTPFetcher (public addresses
	// only).
	Fetcher plugin.Fetcher
	// Secrets are the operator's secrets, each bound to the plugin identity it is given to
	// (SecretBinding; ParseSecrets reads CLOUD_FN_SECRETS). Nil: no function gets a secret.
	Secrets []SecretBinding
	// Storage holds the callers' server KV (in the store tables, under namespace plugin "/fn",
	// so deleting a device deletes it); required.
	Storage server.Storage
	// KVLimits bound each caller's server KV; zero is the store's default limits.
	KVLimits protocol.StoreLimits
	// Transport and AllowPrivateAddrs are passed to interp.RunServer (tests only for the
	// latter).
	Transport         http.RoundTripper
	AllowPrivateAddrs bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Runner implements server.Functions.
type Runner struct {
	cfg Config

	mu    sync.Mutex
	docs  map[string]*plugin.Plugin // by content hash
	cache map[string]cached         // function results, by document, function, input (and caller)
}

type cached struct {
	out     json.RawMessage
	expires time.Time
}

// maxDocs and maxCached bound the Runner's memory: when full, a map starts again empty.
const (
	maxDocs   = 256
	maxCached = 4096
)

// New checks cfg and returns a Runner.
func New(cfg Config) (*Runner, error) {
	switch cfg.Policy {
	case PolicyAllowlist, PolicyVerified, PolicyOpen:
	case PolicyOff:
		return nil, errors.New("fnrun: the policy is off: leave server functions unset")
	default:
		return nil, fmt.Errorf("fnrun: policy %q: want verified, allowlist or open", cfg.Policy)
	}
	if cfg.Storage == nil {
		return nil, errors.New("fnrun: Storage is required (the callers' server KV)")
	}
	for i, d := range cfg.Allow {
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("fnrun: allowlist entry %d: %w", i+1, err)
		}
	}
	if cfg.Fetcher == nil {
		cfg.Fetcher = &plugin.HTTPFetcher{}
	}
	for i := range cfg.Secrets {
		if err := cfg.Secrets[i].validate(); err != nil {
			return nil, fmt.Errorf("fnrun: secret %d: %w", i+1, err)
		}
		if cfg.Secrets[i].Value == "" {
			return nil, fmt.Errorf("fnrun: secret %d (%s %s): no value", i+1, cfg.Secrets[i].Plugin, cfg.Secrets[i].Name)
		}
	}
	if cfg.Transport == nil {
		cfg.Transport = interp.NewTransport(cfg.AllowPrivateAddrs)
	}
	if cfg.KVLimits == (protocol.StoreLimits{}) {
		cfg.KVLimits = protocol.DefaultLimits().Store
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Runner{cfg: cfg, docs: map[string]*plugin.Plugin{}, cache: map[string]cached{}}, nil
}

// ParsePolicy reads CLOUD_FN_POLICY ("" or "off" is PolicyOff).
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(strings.TrimSpace(s)); p {
	case "", "off":
		return PolicyOff, nil
	case PolicyAllowlist, PolicyVerified, PolicyOpen:
		return p, nil
	}
	return "", fmt.Errorf("CLOUD_FN_POLICY=%q: want off, verified, allowlist or open", s)
}

// ParseAllowlist reads CLOUD_FN_ALLOWLIST: entries LINK@sha256:HEX separated by commas,
// spaces or newlines. An error names the entry.
func ParseAllowlist(s string) ([]protocol.DocumentRef, error) {
	var out []protocol.DocumentRef
	for i, e := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		at := strings.LastIndex(e, "@sha256:")
		if at < 0 {
			return nil, fmt.Errorf("CLOUD_FN_ALLOWLIST entry %d %q: want LINK@sha256:HEX", i+1, e)
		}
		d := protocol.DocumentRef{Link: e[:at], Hash: e[at+1:]}
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("CLOUD_FN_ALLOWLIST entry %d: %w", i+1, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// SecretEnv is the environment variable that holds the value of secret name bound for plugin
// p in CLOUD_FN_SECRETS: CLOUD_FN_SECRET_MY_PLUGIN_NAME for my-plugin.
func SecretEnv(p, name string) string {
	return "CLOUD_FN_SECRET_" + strings.ToUpper(strings.ReplaceAll(p, "-", "_")) + "_" + name
}

// Listed implements server.Functions: with the allowlist, the functions of the allowed
// documents already loaded (each at version = its manifest's major version, at least 1).
func (r *Runner) Listed() []protocol.MetaFunction {
	if r.cfg.Policy != PolicyAllowlist {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []protocol.MetaFunction
	for _, d := range r.cfg.Allow {
		p := r.docs[d.Hash]
		if p == nil || p.Manifest.Server == nil {
			continue
		}
		for _, f := range p.Manifest.Server.Functions {
			out = append(out, protocol.MetaFunction{Plugin: p.Manifest.ID, Name: f.Name, Version: major(p.Manifest.Version)})
		}
	}
	return out
}

func major(v string) int64 {
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return max(n, 1)
}

// Preload fetches the allowlisted documents, so that Listed names their functions from the
// start. Errors name each document that could not be loaded; the others are kept.
func (r *Runner) Preload(ctx context.Context) error {
	var errs []error
	for _, d := range r.cfg.Allow {
		if _, err := r.document(ctx, d, ""); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Link, err))
		}
	}
	return errors.Join(errs...)
}

// allowed applies the policy to a document.
func (r *Runner) allowed(d protocol.DocumentRef) error {
	switch r.cfg.Policy {
	case PolicyOpen:
		return nil
	case PolicyVerified:
		if l, err := plugin.ResolveLink(d.Link); err == nil && l.Official {
			return nil
		}
		return wireErr(protocol.CodeForbidden, "this server runs the functions of verified (official) plugins only (CLOUD_FN_POLICY=verified)")
	case PolicyAllowlist:
		for _, a := range r.cfg.Allow {
			if a == d {
				return nil
			}
		}
		return wireErr(protocol.CodeForbidden, "this document version is not on the operator's allowlist (CLOUD_FN_POLICY=allowlist)")
	}
	return wireErr(protocol.CodeUnsupported, "server functions are off")
}

// document returns the plugin at d, fetched once and kept by hash. plugin "" skips the id
// check.
func (r *Runner) document(ctx context.Context, d protocol.DocumentRef, id string) (*plugin.Plugin, error) {
	r.mu.Lock()
	p := r.docs[d.Hash]
	r.mu.Unlock()
	if p == nil {
		var ds []diag.Diagnostic
		var err error
		p, ds, err = plugin.Load(ctx, r.cfg.Fetcher, d.Link)
		if err != nil {
			return nil, fmt.Errorf("fetch the document: %w", err)
		}
		if diag.HasErrors(ds) {
			return nil, wireErr(protocol.CodeForbidden, "the document at "+d.Link+" does not validate")
		}
		if p.Hash != d.Hash {
			return nil, wireErr(protocol.CodeConflict, "the document at "+d.Link+" is now "+p.Hash+
				", not the consented "+d.Hash+"; consent to the new version")
		}
		r.mu.Lock()
		if len(r.docs) >= maxDocs {
			clear(r.docs)
		}
		r.docs[d.Hash] = p
		r.mu.Unlock()
	}
	if id != "" && p.Manifest.ID != id {
		return nil, wireErr(protocol.CodeForbidden, "the document is plugin "+p.Manifest.ID+", not "+id)
	}
	return p, nil
}

func wireErr(code protocol.ErrorCode, msg string) *protocol.Error {
	return &protocol.Error{Code: code, Message: msg}
}

// Call implements server.Functions.
func (r *Runner) Call(ctx context.Context, c server.FunctionCall) (json.RawMessage, error) {
	if err := r.allowed(c.Doc); err != nil {
		return nil, err
	}
	p, err := r.document(ctx, c.Doc, c.Plugin)
	if err != nil {
		return nil, err
	}
	sf := interp.ServerFunction(p, c.Name)
	if sf == nil {
		return nil, wireErr(protocol.CodeNotFound, "plugin "+c.Plugin+" has no server function "+c.Name)
	}
	if v := major(p.Manifest.Version); c.Version != 0 && c.Version != v {
		return nil, wireErr(protocol.CodeConflict, fmt.Sprintf("%s@%d: the consented document has version %d of its functions", c.Name, c.Version, v))
	}
	var input any
	if len(c.Input) > 0 {
		if input, err = expr.FromJSON(c.Input); err != nil {
			return nil, wireErr(protocol.CodeBadRequest, "input: "+err.Error())
		}
	}
	public := sf.Access == "public"
	key := ""
	if sf.Cache > 0 {
		in, _ := expr.ToJSON(input, "")
		key = c.Doc.Hash + "\x00" + c.Name + "\x00" + string(in)
		if !public {
			key += "\x00" + c.Caller
		}
		r.mu.Lock()
		hit, ok := r.cache[key]
		r.mu.Unlock()
		if ok && r.cfg.Now().Before(hit.expires) {
			return hit.out, nil
		}
	}
	// The function sees stand-ins; the guard swaps them for the values where the operator
	// allows, and refuses them (in any form) everywhere else.
	gs := grants(r.grant(c.Doc, p))
	secrets, refs := map[string]string{}, map[string]string{}
	for _, g := range gs {
		secrets[g.b.Name], refs[g.b.Name] = g.b.Value, g.standIn
	}
	o := interp.ServerOptions{Transport: r.cfg.Transport, Secrets: secrets, SecretRefs: refs, Now: r.cfg.Now}
	if len(gs) > 0 {
		o.Transport = &guard{inner: r.cfg.Transport, gs: gs}
	}
	needles := allNeedles(gs)
	if !public {
		o.Caller = c.Caller
		dev := c.DeviceStore
		if dev == (server.DeviceStoreLimits{}) {
			dev = server.DefaultDeviceStore
		}
		o.KV = &kv{st: r.cfg.Storage, ns: server.Namespace{Device: c.Device, Plugin: c.Plugin + "/fn"},
			q: server.StoreQuota{StoreLimits: r.cfg.KVLimits, Device: dev}, now: r.cfg.Now}
	}
	v, err := interp.RunServer(ctx, p, c.Name, input, o)
	if err != nil {
		var qe *server.QuotaError
		if errors.As(err, &qe) {
			return nil, wireErr(protocol.CodeQuota, "function "+c.Name+": the store is full: "+qe.Limit)
		}
		var ie *interp.Error
		if errors.As(err, &ie) && ie.Kind == interp.KindInput {
			return nil, wireErr(protocol.CodeBadRequest, withheld(ie.Error(), gs, needles))
		}
		msg := withheld(err.Error(), gs, needles)
		var rf *refusal
		if errors.As(err, &rf) && msg != maskSecrets(err.Error(), gs) {
			msg = "a request was refused: " + rf.msg
		}
		return nil, wireErr(protocol.CodeServer, "function "+c.Name+" failed: "+msg)
	}
	out, err := expr.ToJSON(v, "")
	if err != nil {
		return nil, wireErr(protocol.CodeServer, "function "+c.Name+": result: "+err.Error())
	}
	if name := found(string(out), needles); name != "" {
		return nil, wireErr(protocol.CodeServer, "function "+c.Name+": the result holds secret "+name+
			" (as it is, or split, reversed, re-cased, encoded or in pieces); a secret may only go in the requests the operator allows; refused")
	}
	if key != "" {
		r.mu.Lock()
		if len(r.cache) >= maxCached {
			clear(r.cache)
		}
		r.cache[key] = cached{out: out, expires: r.cfg.Now().Add(sf.Cache)}
		r.mu.Unlock()
	}
	return out, nil
}

// withheld is an error message with every stand-in and value masked as [secret NAME]; a
// message that still holds a secret in another form is withheld whole.
func withheld(msg string, gs []*granted, ns []needle) string {
	msg = maskSecrets(msg, gs)
	if name := found(msg, ns); name != "" {
		return "(the message is withheld: it held secret " + name + " in another form)"
	}
	return msg
}

// kv is a caller's server KV in the store tables, counted with the device's own store against
// the device-wide quota.
type kv struct {
	st  server.Storage
	ns  server.Namespace
	q   server.StoreQuota
	now func() time.Time
}

func (k *kv) Get(ctx context.Context, key string) (any, bool, error) {
	it, err := k.st.StoreGet(ctx, k.ns, key, k.now().UnixMilli())
	if errors.Is(err, server.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := expr.FromJSON(it.Value)
	return v, err == nil, err
}

func (k *kv) Set(ctx context.Context, key string, v any, ttl time.Duration) error {
	b, err := expr.ToJSON(v, "")
	if err != nil {
		return err
	}
	if int64(len(b)) > k.q.MaxValueBytes {
		return fmt.Errorf("the value is %d bytes, the limit is %d", len(b), k.q.MaxValueBytes)
	}
	now := k.now()
	var exp int64
	if ttl > 0 {
		exp = now.Add(ttl).UnixMilli()
	}
	_, err = k.st.StorePut(ctx, k.ns, server.StoreItem{Key: key, Value: b, ExpiresAt: exp}, nil, k.q, now.UnixMilli())
	return err
}

func (k *kv) Delete(ctx context.Context, key string) error {
	err := k.st.StoreDelete(ctx, k.ns, key, k.now().UnixMilli())
	if errors.Is(err, server.ErrNotFound) {
		return nil
	}
	return err
}

var _ server.Functions = (*Runner)(nil)
