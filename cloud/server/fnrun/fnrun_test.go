package fnrun_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/fnrun"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

// doc is a plugin with server functions: hello (user: caller, KV counter, hashes), stats
// (public, cached, calls the upstream API with a secret), leak (tries to return the secret),
// spin (runs into the operations limit) and upstream (returns what the API echoed).
const doc = `---
spec: 1
id: fndemo
name: 函数
description: Server function demo.
version: 2.1.0
author: pkuinfo
cloud:
  protocol: 1
  uses: [functions]
  disclosure: { zh: [你输入的名字会发到云端服务器。], en: [The name you enter is sent to the cloud server.] }
server:
  network: [api.example.org]
  secrets: [API_KEY]
  functions:
    hello:
      effect: write
      input:
        name: { type: string, max: 20 }
      steps:
        - let: n
          ability: kv.get
          args: "{ key: 'count' }"
        - ability: kv.set
          args: "{ key: 'count', value: (n ?? 0) + 1 }"
        - let: h
          ability: crypto.sha256
          args: "input.name"
        - let: m
          ability: crypto.hmacSha256
          args: "{ secret: 'API_KEY', text: input.name }"
        - let: r
          ability: crypto.randomId
          args: "{}"
      return: "{ hi: input.name, caller: caller.id, count: (n ?? 0) + 1, sha: h, mac: m, rid: r }"
    stats:
      effect: read
      access: public
      cache: 30s
      steps:
        - let: c
          request: { url: 'https://api.example.org/v1/count', headers: { authorization: 'Bearer ${secrets.API_KEY}' } }
          as: json
      return: "{ count: c.count, caller: caller }"
    leak:
      effect: read
      steps:
        - let: c
          request: { url: 'https://api.example.org/v1/echo', headers: { authorization: 'Bearer ${secrets.API_KEY}' } }
          as: json
      return: "c"
    spin:
      effect: read
      input:
        n: { type: number }
      steps:
        - let: xs
          value: "range(input.n).map(x => len(range(input.n).map(y => y + x)))"
      return: "len(xs)"
tools:
  t: tools/t.yaml
i18n:
  en: { name: Functions, description: Server function demo., tools: { t: { title: T } } }
---
`

const toolFile = `title: 工具
description: A tool, so the plugin has one.
effect: read
steps:
  - let: x
    value: "1"
return: x
`

const link = "https://plugins.example.org/fndemo/PLUGIN.md"

const officialLink = "https://github.com/pkuinfo/pku-harness-plugins/tree/main/plugins/fndemo"

// files is a plugin.Fetcher over the document's files, at link's folder.
type files map[string]string

func (f files) Fetch(_ context.Context, name string, max int64) ([]byte, error) {
	_, rel, _ := strings.Cut(name, "/fndemo/")
	b, ok := f[rel]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return []byte(b), nil
}

func docHash(t testing.TB, fl files) string {
	m := map[string][]byte{}
	for k, v := range fl {
		m[k] = []byte(v)
	}
	p, ds, err := plugin.LoadFiles(context.Background(), m)
	if err != nil || diag.HasErrors(ds) {
		t.Fatalf("load: %v %v", err, ds)
	}
	return p.Hash
}

// upstream is api.example.org: /v1/count answers a count when the bearer is the secret, and
// counts its hits; /v1/echo echoes the request headers.
type upstream struct{ hits atomic.Int64 }

func (u *upstream) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	switch {
	case r.URL.Host != "api.example.org":
		return nil, fmt.Errorf("unexpected host %s", r.URL.Host)
	case r.URL.Path == "/v1/count":
		u.hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer s3cr3t-value-42" {
			rec.WriteHeader(401)
			break
		}
		rec.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rec, `{"count": %d}`, 41+u.hits.Load())
	case r.URL.Path == "/v1/echo":
		rec.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rec).Encode(map[string]string{"auth": r.Header.Get("Authorization")})
	}
	return rec.Result(), nil
}

type env struct {
	t    *testing.T
	url  string
	st   server.Storage
	up   *upstream
	hash string
}

func newEnv(t *testing.T, policy fnrun.Policy, allow func(hash string) []protocol.DocumentRef) *env {
	fl := files{"PLUGIN.md": doc, "tools/t.yaml": toolFile}
	e := &env{t: t, st: server.NewMemory(), up: &upstream{}, hash: docHash(t, fl)}
	var fns server.Functions
	if policy != fnrun.PolicyOff {
		cfg := fnrun.Config{Policy: policy, Fetcher: fl, Storage: e.st, Transport: e.up}
		if allow != nil {
			cfg.Allow = allow(e.hash)
		}
		// The secret is bound to this document's link and to the official one; under open the
		// version must also be allowlisted, so open runs list it too.
		for _, l := range []string{link, officialLink} {
			cfg.Secrets = append(cfg.Secrets, fnrun.SecretBinding{Plugin: "fndemo", Name: "API_KEY", Link: l,
				Uses: []fnrun.SecretUse{{Host: "api.example.org", Header: "Authorization"}}, Value: "s3cr3t-value-42"})
		}
		if policy == fnrun.PolicyOpen {
			cfg.Allow = append(cfg.Allow, protocol.DocumentRef{Link: link, Hash: e.hash})
		}
		r, err := fnrun.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fns = r
	}
	c := server.DefaultConfig(e.st)
	c.PowDifficulty = 0
	c.Functions = fns
	srv, err := server.New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	e.url = hs.URL
	return e
}

type resp struct {
	status int
	body   string
}

func (e *env) do(method, path, tok string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, string(b)}
}

// device registers a device and returns a token for plugin fndemo with the functions service
// recording doc (nil: none).
func (e *env) device(d *protocol.DocumentRef) (string, resp) {
	e.t.Helper()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	box, _ := ecdh.X25519().GenerateKey(rand.Reader)
	sp, bp := protocol.B64.EncodeToString(pub), protocol.B64.EncodeToString(box.PublicKey().Bytes())
	var m protocol.MetaResponse
	json.Unmarshal([]byte(e.do("GET", "/v1/meta", "", nil).body), &m)
	n, _ := protocol.SolvePow(context.Background(), m.Pow.Salt, sp, bp, m.Pow.Difficulty)
	r := e.do("POST", "/v1/devices", "", protocol.RegisterDeviceRequest{SignPub: sp, BoxPub: bp, Pow: protocol.PowSolution{Salt: m.Pow.Salt, Nonce: n}})
	var dev protocol.RegisterDeviceResponse
	if err := json.Unmarshal([]byte(r.body), &dev); err != nil || r.status != 200 {
		e.t.Fatalf("register: %d %s", r.status, r.body)
	}
	nonce := make([]byte, 16)
	rand.Read(nonce)
	req := protocol.AuthTokenRequest{Aud: e.url, DeviceID: dev.DeviceID, Plugin: "fndemo", Services: []string{"functions", "store"},
		Ts: nowMs(), Nonce: protocol.B64.EncodeToString(nonce), Document: d}
	protocol.SignAuthChallenge(priv, &req)
	r = e.do("POST", "/v1/auth/token", "", req)
	var tok protocol.AuthTokenResponse
	json.Unmarshal([]byte(r.body), &tok)
	return tok.Token, r
}

// storeToken is a token of a fresh device for plugin fndemo with the store service only.
func (e *env) storeToken() string {
	e.t.Helper()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	box, _ := ecdh.X25519().GenerateKey(rand.Reader)
	sp, bp := protocol.B64.EncodeToString(pub), protocol.B64.EncodeToString(box.PublicKey().Bytes())
	var m protocol.MetaResponse
	json.Unmarshal([]byte(e.do("GET", "/v1/meta", "", nil).body), &m)
	n, _ := protocol.SolvePow(context.Background(), m.Pow.Salt, sp, bp, m.Pow.Difficulty)
	var dev protocol.RegisterDeviceResponse
	json.Unmarshal([]byte(e.do("POST", "/v1/devices", "", protocol.RegisterDeviceRequest{SignPub: sp, BoxPub: bp, Pow: protocol.PowSolution{Salt: m.Pow.Salt, Nonce: n}}).body), &dev)
	nonce := make([]byte, 16)
	rand.Read(nonce)
	req := protocol.AuthTokenRequest{Aud: e.url, DeviceID: dev.DeviceID, Plugin: "fndemo", Services: []string{"store"},
		Ts: nowMs(), Nonce: protocol.B64.EncodeToString(nonce)}
	protocol.SignAuthChallenge(priv, &req)
	var tok protocol.AuthTokenResponse
	json.Unmarshal([]byte(e.do("POST", "/v1/auth/token", "", req).body), &tok)
	return tok.Token
}

func (e *env) ref() *protocol.DocumentRef { return &protocol.DocumentRef{Link: link, Hash: e.hash} }

func (e *env) call(tok, fn string, input any) resp {
	e.t.Helper()
	body := map[string]any{}
	if input != nil {
		body["input"] = input
	}
	return e.do("POST", "/v1/fn/fndemo/"+fn, tok, body)
}

// TestPolicyOff: without a policy the server offers no functions, as today: the service is
// unsupported in tokens and meta, and /v1/fn answers 501.
func TestPolicyOff(t *testing.T) {
	e := newEnv(t, fnrun.PolicyOff, nil)
	if m := e.do("GET", "/v1/meta", "", nil); strings.Contains(m.body, `"functions"]`) || !strings.Contains(m.body, `"functions":[]`) {
		t.Errorf("meta: %s", m.body)
	}
	if _, r := e.device(e.ref()); r.status != 501 || !strings.Contains(r.body, `"unsupported"`) {
		t.Errorf("token with functions: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/fn/fndemo/hello", "", map[string]any{}); r.status != 501 {
		t.Errorf("fn: %d %s", r.status, r.body)
	}
}

// TestOpenPolicy runs a user function end to end: caller pseudonym, per-user KV, the crypto
// abilities with the operator's secret, and a token without a document refused.
func TestOpenPolicy(t *testing.T) {
	e := newEnv(t, fnrun.PolicyOpen, nil)
	if m := e.do("GET", "/v1/meta", "", nil); !strings.Contains(m.body, `"services":["store","channels","functions"]`) {
		t.Errorf("meta: %s", m.body)
	}
	if _, r := e.device(nil); r.status != 400 || !strings.Contains(r.body, "document") {
		t.Errorf("token without document: %d %s", r.status, r.body)
	}
	tok, _ := e.device(e.ref())
	tok2, _ := e.device(e.ref())
	var outs []map[string]any
	for _, tk := range []string{tok, tok, tok2} {
		r := e.call(tk, "hello", map[string]any{"name": "ann"})
		if r.status != 200 {
			t.Fatalf("hello: %d %s", r.status, r.body)
		}
		var out struct{ Output map[string]any }
		json.Unmarshal([]byte(r.body), &out)
		outs = append(outs, out.Output)
	}
	if outs[0]["count"] != 1.0 || outs[1]["count"] != 2.0 || outs[2]["count"] != 1.0 {
		t.Errorf("counts (per-user KV): %v %v %v", outs[0]["count"], outs[1]["count"], outs[2]["count"])
	}
	if outs[0]["caller"] != outs[1]["caller"] || outs[0]["caller"] == outs[2]["caller"] || len(outs[0]["caller"].(string)) != 22 {
		t.Errorf("callers: %v %v %v", outs[0]["caller"], outs[1]["caller"], outs[2]["caller"])
	}
	// sha256("ann") and HMAC-SHA-256(secret, "ann").
	sum := sha256.Sum256([]byte("ann"))
	mac := hmac.New(sha256.New, []byte("s3cr3t-value-42"))
	mac.Write([]byte("ann"))
	if outs[0]["sha"] != hex.EncodeToString(sum[:]) || outs[0]["mac"] != hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("sha %v mac %v", outs[0]["sha"], outs[0]["mac"])
	}
	if outs[0]["rid"] == outs[1]["rid"] {
		t.Errorf("randomId repeats")
	}
	// The caller's KV is not the plugin's store: the store API does not see it.
	if r := e.do("GET", "/v1/store/count", tok, nil); r.status != 404 {
		t.Errorf("store sees the function KV: %d %s", r.status, r.body)
	}
	// Errors: unknown function, bad input, another plugin's path.
	for _, c := range []struct {
		path   string
		body   any
		status int
	}{
		{"/v1/fn/fndemo/nope", map[string]any{}, 404},
		{"/v1/fn/fndemo/hello", map[string]any{"input": map[string]any{"name": strings.Repeat("x", 30)}}, 400},
		{"/v1/fn/fndemo/hello", "not an object", 400},
		{"/v1/fn/other/hello", map[string]any{}, 403},
		{"/v1/fn/fndemo/bad-name", map[string]any{}, 404},
		{"/v1/fn/fndemo/hello", map[string]any{"input": map[string]any{"name": "a"}, "version": 1}, 409},
		{"/v1/fn/fndemo/hello", map[string]any{"input": map[string]any{"name": "a"}, "version": 2}, 200},
		{"/v1/fn/fndemo/hello", map[string]any{"version": 0}, 400},
	} {
		if r := e.do("POST", c.path, tok, c.body); r.status != c.status {
			t.Errorf("%s %v: %d %s, want %d", c.path, c.body, r.status, r.body, c.status)
		}
	}
	if r := e.call("", "hello", nil); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
	// A token without the functions service, and a forged one, get nothing.
	storeTok := e.storeToken()
	if r := e.call(storeTok, "hello", map[string]any{"name": "a"}); r.status != 403 || !strings.Contains(r.body, "functions") {
		t.Errorf("store-only token: %d %s", r.status, r.body)
	}
	if r := e.call(tok[:len(tok)-4]+"AAAA", "hello", map[string]any{"name": "a"}); r.status != 401 {
		t.Errorf("forged token: %d %s", r.status, r.body)
	}
}

// TestPublicCached: a public function has no caller (caller is null) and its result is shared
// and cached for cache: 30s, so the upstream API is hit once.
func TestPublicCached(t *testing.T) {
	e := newEnv(t, fnrun.PolicyOpen, nil)
	tok, _ := e.device(e.ref())
	tok2, _ := e.device(e.ref())
	want := `{"output":{"count":42,"caller":null}}` + "\n"
	for _, tk := range []string{tok, tok2, tok} {
		if r := e.call(tk, "stats", nil); r.status != 200 || r.body != want {
			t.Errorf("stats: %d %s", r.status, r.body)
		}
	}
	if n := e.up.hits.Load(); n != 1 {
		t.Errorf("upstream hit %d times, want 1 (cached)", n)
	}
}

// TestSecretsNeverInResponses: a function that returns what the upstream echoed (the bearer
// with the secret) is refused, and no answer ever holds the secret.
func TestSecretsNeverInResponses(t *testing.T) {
	e := newEnv(t, fnrun.PolicyOpen, nil)
	tok, _ := e.device(e.ref())
	r := e.call(tok, "leak", nil)
	if r.status != 500 || strings.Contains(r.body, "s3cr3t") || !strings.Contains(r.body, "secret API_KEY") {
		t.Errorf("leak: %d %s", r.status, r.body)
	}
	for _, fn := range []string{"hello", "stats", "spin"} {
		if r := e.call(tok, fn, map[string]any{"name": "x", "n": 3}); strings.Contains(r.body, "s3cr3t") {
			t.Errorf("%s answered the secret: %s", fn, r.body)
		}
	}
}

// TestLimitsPerCall: the interpreter's limits apply to each call: a run over the operations
// budget fails (500, kind limit) and the next call runs afresh.
func TestLimitsPerCall(t *testing.T) {
	e := newEnv(t, fnrun.PolicyOpen, nil)
	tok, _ := e.device(e.ref())
	if r := e.call(tok, "spin", map[string]any{"n": 10}); r.status != 200 || r.body != `{"output":10}`+"\n" {
		t.Fatalf("spin 10: %d %s", r.status, r.body)
	}
	if r := e.call(tok, "spin", map[string]any{"n": 2000}); r.status != 500 || !strings.Contains(r.body, "operations") {
		t.Errorf("spin over the limit: %d %s", r.status, r.body)
	}
	if r := e.call(tok, "spin", map[string]any{"n": 10}); r.status != 200 {
		t.Errorf("spin after: %d %s", r.status, r.body)
	}
}

// TestAllowlistAndVerified: the allowlist runs exactly the listed version; verified runs only
// official links; a token naming another version than the link serves is a conflict.
func TestAllowlistAndVerified(t *testing.T) {
	e := newEnv(t, fnrun.PolicyAllowlist, func(h string) []protocol.DocumentRef { return []protocol.DocumentRef{{Link: link, Hash: h}} })
	tok, _ := e.device(e.ref())
	if r := e.call(tok, "hello", map[string]any{"name": "a"}); r.status != 200 {
		t.Errorf("allowlisted: %d %s", r.status, r.body)
	}
	if m := e.do("GET", "/v1/meta", "", nil); !strings.Contains(m.body, `"functions":[{"plugin":"fndemo","name":"hello","version":2}`) {
		t.Errorf("meta lists: %s", m.body)
	}
	other := &protocol.DocumentRef{Link: link, Hash: "sha256:" + strings.Repeat("0", 64)}
	tokOther, _ := e.device(other)
	if r := e.call(tokOther, "hello", map[string]any{"name": "a"}); r.status != 403 || !strings.Contains(r.body, "allowlist") {
		t.Errorf("not allowlisted: %d %s", r.status, r.body)
	}

	ev := newEnv(t, fnrun.PolicyVerified, nil)
	tok, _ = ev.device(ev.ref())
	if r := ev.call(tok, "hello", map[string]any{"name": "a"}); r.status != 403 || !strings.Contains(r.body, "verified") {
		t.Errorf("verified, community link: %d %s", r.status, r.body)
	}
	official := &protocol.DocumentRef{Link: officialLink, Hash: ev.hash}
	tok, _ = ev.device(official)
	if r := ev.call(tok, "hello", map[string]any{"name": "a"}); r.status != 200 {
		t.Errorf("verified, official link: %d %s", r.status, r.body)
	}

	eo := newEnv(t, fnrun.PolicyOpen, nil)
	tok, _ = eo.device(other)
	if r := eo.call(tok, "hello", map[string]any{"name": "a"}); r.status != 409 || !strings.Contains(r.body, "consent") {
		t.Errorf("changed document: %d %s", r.status, r.body)
	}
}

// TestParse: the environment forms.
func TestParse(t *testing.T) {
	for in, want := range map[string]fnrun.Policy{"": fnrun.PolicyOff, "off": fnrun.PolicyOff, "open": fnrun.PolicyOpen, " verified ": fnrun.PolicyVerified} {
		if p, err := fnrun.ParsePolicy(in); err != nil || p != want {
			t.Errorf("%q: %q %v", in, p, err)
		}
	}
	if _, err := fnrun.ParsePolicy("yes"); err == nil {
		t.Error("bad policy accepted")
	}
	h := "sha256:" + strings.Repeat("a", 64)
	l, err := fnrun.ParseAllowlist("https://x.org/a/PLUGIN.md@" + h + ", https://x.org/b/PLUGIN.md@" + h)
	if err != nil || len(l) != 2 || l[1].Link != "https://x.org/b/PLUGIN.md" {
		t.Errorf("allowlist: %v %v", l, err)
	}
	for _, bad := range []string{"https://x.org/a", "https://x.org/a@sha256:12", "@" + h} {
		if _, err := fnrun.ParseAllowlist(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := fnrun.SecretEnv("my-plugin", "API_KEY"); got != "CLOUD_FN_SECRET_MY_PLUGIN_API_KEY" {
		t.Errorf("secret env %s", got)
	}
}

func nowMs() int64 { return timeNow().UnixMilli() }

var timeNow = time.Now

// TestClientCall: the device library's Plugin.Call with the consented document set, against a
// server with functions and one without.
func TestClientCall(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, fnrun.PolicyOpen, nil)
	c, err := client.New(client.Config{BaseURL: e.url})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Plugin("fndemo", "functions")
	if _, err := p.Call(ctx, "hello", map[string]string{"name": "zoe"}); !client.IsCode(err, protocol.CodeBadRequest) {
		t.Errorf("without a document: %v", err)
	}
	if err := p.SetDocument(protocol.DocumentRef{Link: link, Hash: "md5:x"}); err == nil {
		t.Error("a bad hash was accepted")
	}
	if err := p.SetDocument(*e.ref()); err != nil {
		t.Fatal(err)
	}
	out, err := p.Call(ctx, "hello", map[string]string{"name": "zoe"})
	if err != nil || !strings.Contains(string(out), `"hi":"zoe"`) {
		t.Errorf("call: %s %v", out, err)
	}
	off := newEnv(t, fnrun.PolicyOff, nil)
	c2, _ := client.New(client.Config{BaseURL: off.url})
	p2, _ := c2.Plugin("fndemo", "functions")
	p2.SetDocument(*off.ref())
	if _, err := p2.Call(ctx, "hello", nil); !client.IsCode(err, protocol.CodeUnsupported) {
		t.Errorf("functions off: %v", err)
	}
}
