package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/plugin"
)

// Plugin is one plugin's consent-gated Cloud handle (seed 003 "插件指南": ctx.cloud): every
// method checks, in order, that a provider is set (CodeUnavailable), that the person allowed
// this plugin (CodeConsentRequired), that its manifest lists the service
// (CodeNotDeclared) and that the provider offers it (CodeUnavailable), and only then talks
// to the provider with a token scoped to this plugin and its services.
type Plugin struct {
	m    *Manager
	decl Decl
	doc  *protocol.DocumentRef
}

// Plugin returns the handle of the plugin d declares. It does no I/O.
func (m *Manager) Plugin(d *Decl) (*Plugin, error) {
	if d == nil {
		return nil, errors.New("cloud: this plugin declares no Cloud use (no cloud: section in its manifest)")
	}
	if !protocol.ValidPluginID(d.Plugin) {
		return nil, fmt.Errorf("cloud: plugin %q: not a Cloud plugin id (^[a-z0-9][a-z0-9-]{1,63}$)", d.Plugin)
	}
	p := &Plugin{m: m, decl: *d}
	if d.Document != nil {
		if err := p.SetDocument(*d.Document); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// SetDocument records the consented document (install link and content hash) that tokens
// with the functions service carry, so the provider runs only that version (seed 003
// "服务端函数").
func (p *Plugin) SetDocument(d protocol.DocumentRef) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("cloud: plugin %s: %w", p.decl.Plugin, err)
	}
	p.doc = &d
	return nil
}

// ID is the plugin id.
func (p *Plugin) ID() string { return p.decl.Plugin }

// Decl is the plugin's declaration.
func (p *Plugin) Decl() Decl { return p.decl }

// Status is status() of seed 003 "插件指南" §3: Provider is "official", "custom" or "off";
// BaseURL the provider origin (omitted when off); Consented whether this plugin may use it;
// Online whether the provider answers. Available is ctx.cloud.available: a provider is set,
// the plugin is consented, the provider is online and offers every service the plugin uses;
// Reason says why not in English, Why as a code a face translates ("no_provider",
// "consent_required", "offline", "not_offered" with Missing the services not offered).
type Status struct {
	Provider  string   `json:"provider"`
	BaseURL   string   `json:"baseURL,omitempty"`
	Consented bool     `json:"consented"`
	Online    bool     `json:"online"`
	Available bool     `json:"available"`
	Reason    string   `json:"reason,omitempty"`
	Why       string   `json:"why,omitempty"`
	Missing   []string `json:"missing,omitempty"`
}

// The Why codes of a Status.
const (
	WhyNoProvider = "no_provider"
	WhyConsent    = "consent_required"
	WhyOffline    = "offline"
	WhyNotOffered = "not_offered"
)

// Status reports the plugin's status(); it may probe the provider (GET /v1/meta) when it has
// not been heard from for 15 s.
func (p *Plugin) Status(ctx context.Context) Status {
	return p.m.status(ctx, &p.decl)
}

func (m *Manager) status(ctx context.Context, d *Decl) Status {
	base, err := m.Provider(ctx)
	if err != nil {
		return Status{Provider: "off", Reason: err.Error()}
	}
	if base == "" {
		return Status{Provider: "off", Reason: "no Cloud provider is set", Why: WhyNoProvider}
	}
	st := Status{Provider: "custom", BaseURL: base}
	if OfficialURL != "" && base == OfficialURL {
		st.Provider = "official"
	}
	if d != nil {
		st.Consented, _ = m.Consented(ctx, d)
	}
	if d == nil || st.Consented {
		st.Online = m.Online(ctx)
	} else {
		// Not consented: no request reaches the provider on the plugin's behalf, not even an
		// anonymous probe; online is what was last observed.
		st.Online = m.lastOnline()
	}
	switch {
	case d != nil && !st.Consented:
		st.Reason, st.Why = "the person has not allowed this plugin to use Cloud", WhyConsent
	case !st.Online:
		st.Reason, st.Why = "the provider cannot be reached", WhyOffline
	}
	if d != nil && st.Reason == "" {
		if ok, why := m.Availability(ctx, d); !ok {
			st.Reason, st.Why = why, WhyNotOffered
			if meta, _ := m.KnownMeta(ctx); meta != nil {
				st.Missing = missing(meta, d.Uses)
			}
		}
	}
	st.Available = st.Reason == ""
	return st
}

// Availability reports whether the provider offers every service d uses (seed 003: a plugin
// whose `uses` the provider does not offer is unavailable, with the reason). With no provider
// or no meta known yet it is false with a reason.
func (m *Manager) Availability(ctx context.Context, d *Decl) (bool, string) {
	meta, err := m.KnownMeta(ctx)
	if err != nil {
		return false, err.Error()
	}
	if meta == nil {
		return false, "no Cloud provider is set"
	}
	if miss := missing(meta, d.Uses); len(miss) > 0 {
		return false, fmt.Sprintf("%s does not offer %s", meta.Host, strings.Join(miss, ", "))
	}
	return true, ""
}

// gate checks a call to service and returns the plugin's client scope.
func (p *Plugin) gate(ctx context.Context, service string) (*client.Plugin, error) {
	id := p.decl.Plugin
	base, err := p.m.Provider(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.consent(ctx, base); err != nil {
		return nil, err
	}
	if !slices.Contains(p.decl.Uses, service) {
		return nil, errf(id, CodeNotDeclared, "the manifest's cloud.uses does not list %s", service)
	}
	meta, _ := p.m.KnownMeta(ctx)
	if meta != nil {
		if miss := missing(meta, []string{service}); len(miss) > 0 {
			return nil, errf(id, CodeUnavailable, "%s does not offer %s", meta.Host, service)
		}
	}
	services := tokenServices(meta, p.decl.Uses)
	return p.m.scope(ctx, id, services, p.doc)
}

// consent checks that a provider is set and the person allowed the plugin with it: the two
// refusals carry the ConsentAsk a face turns into the consent panel.
func (p *Plugin) consent(ctx context.Context, base string) error {
	id := p.decl.Plugin
	if base == "" {
		e := errf(id, CodeUnavailable, "no Cloud provider is set (Settings → Cloud, or `harness cloud use URL`)")
		e.Ask = askFor(id, "")
		return e
	}
	ok, err := p.m.Consented(ctx, &p.decl)
	if err != nil {
		return err
	}
	if !ok {
		e := errf(id, CodeConsentRequired, "allow this plugin to use Cloud with %s first (Settings → Cloud, or `harness cloud consent %s on`)", hostOf(base), id)
		e.Ask = askFor(id, hostOf(base))
		return e
	}
	return nil
}

// RequestConsent is cloud.requestConsent() for a built-in's tool or screen (seed 003 "插件指南"
// §2): nil at once when the person already allowed the plugin with the current provider;
// otherwise an *Error with CodeConsentRequired (CodeUnavailable when no provider is set) whose
// Ask is the request to show the host's consent panel. It never grants by itself: the host's
// API answers the call `consent_required` with the Ask, the web app shows the Settings → Cloud
// panel over the screen and runs the tool again once the person allowed, and the CLI names
// `harness cloud consent PLUGIN on`. It makes no request to the provider.
func (p *Plugin) RequestConsent(ctx context.Context) error {
	base, err := p.m.Provider(ctx)
	if err != nil {
		return err
	}
	return p.consent(ctx, base)
}

// Call runs the plugin's server function fn with input (any JSON-able value) and returns its
// output as JSON (seed 003 "服务端函数"; the `cloud.call` ability). It needs `functions` in the
// plugin's uses (a `server:` section or cloud.functions implies it) and fn among the
// declaration's Functions (CodeNotDeclared otherwise, before any request). Offline it fails at once with CodeOffline:
// a call is never queued.
func (p *Plugin) Call(ctx context.Context, fn string, input any) (json.RawMessage, error) {
	cp, err := p.gate(ctx, protocol.ServiceFunctions)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(p.decl.Functions, fn) {
		return nil, errf(p.decl.Plugin, CodeNotDeclared, "the manifest declares no server function %q (cloud.functions, or the server: section)", fn)
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	out, err := cp.Call(rctx, fn, input)
	return out, p.m.wrap(ctx, p.decl.Plugin, err)
}

// CallFor runs server function fn of the installed plugin document p (its manifest's
// declaration, its install link and content hash as the consented document), for the
// `cloud.call` ability and widgets bound to `{ fn }`. Errors are Call's, and CodeUnavailable
// when no provider is set.
func (m *Manager) CallFor(ctx context.Context, p *plugin.Plugin, fn string, input any) (json.RawMessage, error) {
	if p == nil || p.Manifest == nil {
		return nil, errors.New("cloud: no plugin")
	}
	d := DeclOfPlugin(p)
	if d == nil {
		return nil, fmt.Errorf("cloud: plugin %s declares no server functions (no server: section or cloud.uses: [functions])", p.Manifest.ID)
	}
	h, err := m.Plugin(d)
	if err != nil {
		return nil, err
	}
	return h.Call(ctx, fn, input)
}

// tokenServices are the protocol services a token for uses asks for: those the provider
// offers (all of them while its meta is unknown), so one it does not offer (push, say) does
// not keep the plugin from the ones it does.
func tokenServices(meta *Meta, uses []string) []string {
	services := make([]string, 0, len(uses))
	for _, u := range uses {
		if s := wireService(u); protocol.ValidService(s) && (meta == nil || slices.Contains(meta.Services, s)) {
			services = append(services, s)
		}
	}
	return services
}
