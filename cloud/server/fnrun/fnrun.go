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
// crypto.hmacSha256 with a secret named in server.secrets and set by the operator
// (CLOUD_FN_SECRET_<PLUGIN>_<NAME>), crypto.randomId, and https requests to server.network
// hosts. They never get campus access. An output that would carry a secret is refused, and
// error messages have secrets masked.
package fnrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/interp"
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
	// Secret returns the operator's value of secret name for plugin; ok false when unset. Nil
	// is EnvSecrets.
	Secret func(plugin, name string) (string, bool)
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
	if cfg.Secret == nil {
		cfg.Secret = EnvSecrets(os.LookupEnv)
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

// EnvSecrets looks secrets up in the environment: secret NAME of plugin my-plugin is
// CLOUD_FN_SECRET_MY_PLUGIN_NAME.
func EnvSecrets(lookup func(string) (string, bool)) func(plugin, name string) (string, bool) {
	return func(p, name string) (string, bool) {
		return lookup(SecretEnv(p, name))
	}
}

// SecretEnv is the environment variable of secret name of plugin p.
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
		var ds []plugin.Diagnostic
		var err error
		p, ds, err = plugin.Load(ctx, r.cfg.Fetcher, d.Link)
		if err != nil {
			return nil, fmt.Errorf("fetch the document: %w", err)
		}
		if plugin.HasErrors(ds) {
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
	secrets := map[string]string{}
	for _, name := range p.Manifest.Server.Secrets {
		if v, ok := r.cfg.Secret(c.Plugin, name); ok {
			secrets[name] = v
		}
	}
	o := interp.ServerOptions{Transport: r.cfg.Transport, AllowPrivateAddrs: r.cfg.AllowPrivateAddrs,
		Secrets: secrets, Now: r.cfg.Now}
	if !public {
		o.Caller = c.Caller
		o.KV = &kv{st: r.cfg.Storage, ns: server.Namespace{Device: c.Device, Plugin: c.Plugin + "/fn"}, q: r.cfg.KVLimits, now: r.cfg.Now}
	}
	v, err := interp.RunServer(ctx, p, c.Name, input, o)
	if err != nil {
		var ie *interp.Error
		if errors.As(err, &ie) && ie.Kind == interp.KindInput {
			return nil, wireErr(protocol.CodeBadRequest, mask(ie.Error(), secrets))
		}
		return nil, wireErr(protocol.CodeServer, "function "+c.Name+" failed: "+mask(err.Error(), secrets))
	}
	out, err := expr.ToJSON(v, "")
	if err != nil {
		return nil, wireErr(protocol.CodeServer, "function "+c.Name+": result: "+err.Error())
	}
	if name := leaks(out, secrets); name != "" {
		return nil, wireErr(protocol.CodeServer, "function "+c.Name+": the result holds the value of secret "+name+"; refused")
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

// leaks returns the name of a secret whose value appears in out (as it is, or JSON-escaped), or
// "".
func leaks(out []byte, secrets map[string]string) string {
	s := string(out)
	for name, v := range secrets {
		if v == "" {
			continue
		}
		esc, _ := json.Marshal(v)
		if strings.Contains(s, v) || strings.Contains(s, string(esc[1:len(esc)-1])) {
			return name
		}
	}
	return ""
}

// mask replaces every secret value in msg with [secret NAME].
func mask(msg string, secrets map[string]string) string {
	for name, v := range secrets {
		if v != "" {
			msg = strings.ReplaceAll(msg, v, "[secret "+name+"]")
		}
	}
	return msg
}

// kv is a caller's server KV in the store tables.
type kv struct {
	st  server.Storage
	ns  server.Namespace
	q   protocol.StoreLimits
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
	_, err = k.st.StorePut(ctx, k.ns, server.StoreItem{Key: key, Value: b, ExpiresAt: exp}, nil, server.StoreQuota{StoreLimits: k.q}, now.UnixMilli())
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
