package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/pkuinfo/harness/agent"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/internal/msg"
	"github.com/pkuinfo/harness/mcpx"
	"github.com/pkuinfo/harness/mcpx/mcpurl"
)

// The settings routes of the web app (docs/HOST-API.md "The web app",
// "The AI provider" and "Remote plugins"): the assistant's
// model — read, change and test it, the key written only, never read back —
// and adding a remote plugin after its review sheet. All of them sit behind
// the API's guard.
func init() {
	RegisterServeSetup(func(_ context.Context, h *host.Host, srv *api.Server) error {
		m := &modelRoutes{dir: h.Store().Dir(), getenv: envLookup}
		srv.HandleFunc("GET /v1/model", m.show)
		srv.HandleFunc("PUT /v1/model", m.set)
		srv.HandleFunc("GET /v1/model/presets", m.presets)
		srv.HandleFunc("POST /v1/model/test", m.test)
		rr := &remoteRoutes{h: h, reg: mcpx.NewRegistry(h.Store())}
		srv.HandleFunc("POST /v1/remote-plugins/review", rr.review)
		srv.HandleFunc("POST /v1/remote-plugins", rr.add)
		srv.HandleFunc("POST /v1/remote-plugins/{id}/refresh", rr.refresh)
		return nil
	})
}

// envLookup is os.Getenv; tests of this file replace it.
var envLookup = os.Getenv

// MaxKeyLen is the longest API key or remote-plugin token the routes take,
// in bytes.
const MaxKeyLen = 4096

// modelTestTimeout bounds POST /v1/model/test.
const modelTestTimeout = 20 * time.Second

type modelRoutes struct {
	dir    string
	getenv func(string) string
	mu     sync.Mutex // one writer of model.json and model.key at a time
}

// modelView is what GET /v1/model answers: never the key, only whether one
// is set, its last four characters (agent.KeyHint) and where it comes from.
type modelView struct {
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	// Preset names the preset whose base URL this is, "" for none.
	Preset string `json:"preset"`
	Key    struct {
		Set  bool   `json:"set"`
		Hint string `json:"hint,omitempty"`
		From string `json:"from,omitempty"`
	} `json:"key"`
	// From says where base URL and model come from: "stored", "env" or "".
	From struct {
		BaseURL string `json:"baseURL"`
		Model   string `json:"model"`
	} `json:"from"`
	// KeyDropped is set by PUT when the base URL moved to another service
	// and the old service's key was removed rather than sent there.
	KeyDropped bool `json:"keyDropped,omitempty"`
}

func (m *modelRoutes) view() (*modelView, error) {
	c, src, err := agent.LoadConfig(m.dir, m.getenv)
	if err != nil {
		return nil, err
	}
	v := &modelView{BaseURL: c.BaseURL, Model: c.Model, Preset: presetOf(c.BaseURL)}
	v.Key.Set, v.Key.Hint, v.Key.From = c.APIKey != "", agent.KeyHint(c.APIKey), src.APIKey
	v.From.BaseURL, v.From.Model = src.BaseURL, src.Model
	return v, nil
}

// presetOf names the preset with base URL u ("" for none).
func presetOf(u string) string {
	for _, p := range agent.Presets {
		if strings.TrimRight(p.BaseURL, "/") == strings.TrimRight(u, "/") && u != "" {
			return p.Name
		}
	}
	return ""
}

func (m *modelRoutes) show(w http.ResponseWriter, r *http.Request) error {
	v, err := m.view()
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, v)
}

func (m *modelRoutes) presets(w http.ResponseWriter, r *http.Request) error {
	return api.WriteJSON(w, http.StatusOK, map[string]any{"presets": agent.Presets})
}

func settingsError(field, format string, args ...any) error {
	return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: field + ": " + fmt.Sprintf(format, args...),
		Extra: map[string]any{"field": field}}
}

// changeError is agent.Apply's refusal as the API's error: 400 bad_request
// with the field, or 409 env_key when the key in use is the environment's.
func changeError(err error) error {
	var ce *agent.ChangeError
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Kind {
	case agent.ChangeEnvKey:
		return &api.Error{Status: http.StatusConflict, Code: "env_key", Extra: map[string]any{"field": "baseURL"},
			Message: fmt.Sprintf("baseURL: the API key comes from $%s, which harness serve would send to %s: unset $%s (or set $%s) and restart harness serve to change the service here",
				agent.EnvAPIKey, agent.ProviderName(ce.Value), agent.EnvAPIKey, agent.EnvBaseURL)}
	case agent.ChangeNoPreset:
		return settingsError("preset", "no preset %q (GET /v1/model/presets lists them)", ce.Value)
	case agent.ChangeMissing:
		if ce.Field == "baseURL" {
			return settingsError("baseURL", "%s", strings.TrimPrefix(agent.CheckBaseURL("").Error(), "--base-url "))
		}
		return settingsError("model", "give the model's name (1 to 200 characters, e.g. deepseek-chat)")
	}
	return settingsError(ce.Field, "%s", ce.Msg)
}

func (m *modelRoutes) set(w http.ResponseWriter, r *http.Request) error {
	var ch agent.Change
	if err := api.ReadJSON(r, &ch); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, _, err := agent.LoadConfig(m.dir, nil) // the stored configuration, without the environment
	if err != nil {
		return err
	}
	done, err := agent.Apply(cur, ch, m.getenv)
	if err != nil {
		return changeError(err)
	}
	if err := agent.SaveConfig(m.dir, done.Config, done.SetKey); err != nil {
		return err
	}
	v, err := m.view()
	if err != nil {
		return err
	}
	v.KeyDropped = done.KeyDropped
	return api.WriteJSON(w, http.StatusOK, v)
}

// test is POST /v1/model/test: the configuration in use, changed by the
// body when it has one (so a choice can be tried before it is saved), is
// tried with a real request (agent.OpenAI.Test). The stored key is used
// only for its own service. The answer is 200 either way: {"ok": true,
// …TestResult} or {"ok": false, "error": "…"}; the key never appears in
// it (it is cut out of the provider's message).
func (m *modelRoutes) test(w http.ResponseWriter, r *http.Request) error {
	var ch agent.Change
	if err := api.ReadJSON(r, &ch); err != nil {
		return err
	}
	cur, _, err := agent.LoadConfig(m.dir, m.getenv)
	if err != nil {
		return err
	}
	stored := cur.APIKey
	done, err := agent.Apply(cur, ch, nil)
	if err != nil {
		return changeError(err)
	}
	cur = done.Config
	p, err := agent.NewOpenAI(cur, nil)
	if err != nil {
		return settingsError("baseURL", "%v", err)
	}
	ctx, cancel := context.WithTimeout(r.Context(), modelTestTimeout)
	defer cancel()
	res, err := p.Test(ctx)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("%s did not answer within %s", agent.ProviderName(cur.BaseURL), modelTestTimeout)
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "provider": agent.ProviderName(cur.BaseURL), "model": cur.Model,
			"error": redact(msg, cur.APIKey, stored)})
	}
	return api.WriteJSON(w, http.StatusOK, res)
}

// redact cuts every secret of at least four bytes out of s.
func redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) >= 4 {
			s = strings.ReplaceAll(s, k, "[key]")
		}
	}
	return s
}

type remoteRoutes struct {
	h   *host.Host
	reg *mcpx.Registry
}

// remoteBody is the body of POST /v1/remote-plugins/review and POST
// /v1/remote-plugins: the server's URL, its bearer token ("" for none)
// and, to add, the hash of the reviewed sheet.
type remoteBody struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	Hash  string `json:"hash"`
}

// remoteSheet is the review sheet of a remote plugin: its id, the server,
// whether a token will be kept, each tool with its effect and starting
// mode, the instructions the model will read, and Hash, the SHA-256 of
// the server's description, which POST /v1/remote-plugins must send back.
type remoteSheet struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Title        string            `json:"title,omitempty"`
	Version      string            `json:"version,omitempty"`
	URL          string            `json:"url"`
	HasToken     bool              `json:"hasToken"`
	Official     bool              `json:"official"`
	Instructions string            `json:"instructions"`
	Tools        []remoteSheetTool `json:"tools"`
	Hash         string            `json:"hash"`
}

type remoteSheetTool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Effect      string `json:"effect"`
	Mode        string `json:"mode"`
}

func (b *remoteBody) check() error {
	b.URL, b.Token = strings.TrimSpace(b.URL), strings.TrimSpace(b.Token)
	if b.URL == "" {
		return settingsError("url", "give the remote plugin's URL, e.g. https://example.org/mcp")
	}
	if _, err := mcpurl.Check(b.URL); err != nil {
		return settingsError("url", "%s", strings.ReplaceAll(err.Error(), "--token", "the token field"))
	}
	if len(b.Token) > MaxKeyLen || strings.ContainsFunc(b.Token, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return settingsError("token", "a token is one word of at most %d bytes, without spaces", MaxKeyLen)
	}
	return nil
}

// describe connects to the server and builds its sheet; a server that
// cannot be reached is a 502 remote_unreachable, one that wants a token
// token_required, one that refuses it token_refused; the message never
// holds the token.
func (rr *remoteRoutes) describe(ctx context.Context, b *remoteBody) (*mcpx.RemoteServer, *remoteSheet, error) {
	srv, err := (&mcpx.RemoteClient{URL: b.URL, Token: b.Token}).Describe(ctx)
	if err != nil {
		msg := redact(err.Error(), b.Token)
		msg = strings.ReplaceAll(msg, "add it with --token", "give it in the token field")
		// The code lets a front end say it in the person's language.
		code := "remote_unreachable"
		switch {
		case strings.Contains(msg, "wants a bearer token"):
			code = "token_required"
		case strings.Contains(msg, "refused the token"):
			code = "token_refused"
		}
		return nil, nil, &api.Error{Status: http.StatusBadGateway, Code: code, Message: msg}
	}
	js, _ := json.Marshal(srv)
	sum := sha256.Sum256(js)
	sh := &remoteSheet{ID: srv.PluginID, Name: srv.Name, Title: srv.Title, Version: srv.Version, URL: srv.URL, HasToken: b.Token != "",
		Instructions: mcpx.RemoteInstructions(srv.PluginID, srv.Instructions), Tools: []remoteSheetTool{}, Hash: "sha256:" + hex.EncodeToString(sum[:])}
	modes := mcpx.RemoteModes()
	for _, t := range srv.Tools {
		sh.Tools = append(sh.Tools, remoteSheetTool{Name: t.Name, Title: t.Title, Description: t.Description, Effect: t.Effect.String(), Mode: string(modes[t.Effect])})
	}
	return srv, sh, nil
}

func (rr *remoteRoutes) review(w http.ResponseWriter, r *http.Request) error {
	var b remoteBody
	if err := api.ReadJSON(r, &b); err != nil {
		return err
	}
	if b.Hash != "" {
		return settingsError("hash", "a review takes no hash (send it to POST /v1/remote-plugins to add the plugin)")
	}
	if err := b.check(); err != nil {
		return err
	}
	_, sh, err := rr.describe(r.Context(), &b)
	if err != nil {
		return err
	}
	if _, err := rr.h.Show(r.Context(), sh.ID); err == nil {
		return &host.Conflict{Msg: fmt.Sprintf("plugin %s is already installed", sh.ID)}
	}
	return api.WriteJSON(w, http.StatusOK, sh)
}

// add is POST /v1/remote-plugins: describe the server again and add it
// only when it still matches the reviewed hash (a 409 otherwise), with
// the token sealed by the registry.
func (rr *remoteRoutes) add(w http.ResponseWriter, r *http.Request) error {
	var b remoteBody
	if err := api.ReadJSON(r, &b); err != nil {
		return err
	}
	if err := b.check(); err != nil {
		return err
	}
	if !strings.HasPrefix(b.Hash, "sha256:") {
		return settingsError("hash", "give the hash of the review sheet (POST /v1/remote-plugins/review); a remote plugin is added only after its review")
	}
	srv, sh, err := rr.describe(r.Context(), &b)
	if err != nil {
		return err
	}
	if sh.Hash != b.Hash {
		return &api.Error{Status: http.StatusConflict, Code: "changed", Message: fmt.Sprintf("the server at %s changed its tools since the review: review it again", srv.URL)}
	}
	p, err := rr.reg.Add(r.Context(), srv, b.Token)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusCreated, map[string]any{"id": p.ID, "name": sh.Name, "tools": len(p.Server.Tools), "hasToken": p.HasToken})
}

// refresh is POST /v1/remote-plugins/{id}/refresh: the server's tools listed again (as
// `harness plugins update-remote` does), answered as an update outcome: current, applied with
// the changes in note (in the body's lang, zh-Hans or en), or failed with the reason.
func (rr *remoteRoutes) refresh(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Lang string `json:"lang"`
	}
	if err := api.ReadJSON(r, &b); err != nil {
		return err
	}
	lang, err := msg.Resolve(b.Lang, func(string) string { return "" })
	if err != nil {
		return settingsError("lang", "%q: use zh-Hans or en", b.Lang)
	}
	o, err := refreshRemote(r.Context(), rr.reg, r.PathValue("id"), lang)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, o)
}
