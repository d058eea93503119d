package cloud

import "context"

// Panel is the Cloud block of a plugin's details (seed 003 "插件指南" §2): the provider host,
// the plugin's disclosure line by line, the E2E badge, the services it uses and the quota it
// has used, whether it is allowed (and the consent record), and its status.
type Panel struct {
	Plugin       string   `json:"plugin"`
	Provider     string   `json:"provider"` // host[:port], "" when Cloud is off
	DisclosureZh []string `json:"disclosureZh"`
	DisclosureEn []string `json:"disclosureEn"`
	E2E          bool     `json:"e2e"`
	Uses         []string `json:"uses"`
	Functions    []string `json:"functions"` // the server functions the plugin may call
	Optional     bool     `json:"optional"`
	Backend      string   `json:"backend,omitempty"`
	Consented    bool     `json:"consented"`
	Consent      *Consent `json:"consent"` // the record, also one for another provider; nil when none
	Status       Status   `json:"status"`
	Usage        Usage    `json:"usage"`
}

// Panel builds d's consent panel; it may probe the provider like Status.
func (m *Manager) Panel(ctx context.Context, d *Decl) (*Panel, error) {
	base, err := m.Provider(ctx)
	if err != nil {
		return nil, err
	}
	p := &Panel{Plugin: d.Plugin, DisclosureZh: nonNil(d.DisclosureZh), DisclosureEn: nonNil(d.DisclosureEn),
		E2E: d.E2E, Uses: nonNil(d.Uses), Functions: nonNil(d.Functions), Optional: d.Optional, Backend: d.Backend}
	if base != "" {
		p.Provider = hostOf(base)
	}
	if p.Consent, err = m.ConsentOf(ctx, d.Plugin); err != nil {
		return nil, err
	}
	p.Status = m.status(ctx, d)
	p.Consented = p.Status.Consented
	usage := m.Usage
	if p.Status.Consented && p.Status.Online {
		usage = func(ctx context.Context, _ string) (Usage, error) { return m.UsageOf(ctx, d) }
	}
	if p.Usage, err = usage(ctx, d.Plugin); err != nil {
		return nil, err
	}
	return p, nil
}

// Status is the device-wide status (no plugin: Consented is false): provider, base URL and
// whether it answers.
func (m *Manager) Status(ctx context.Context) Status {
	st := m.status(ctx, nil)
	st.Available = st.Provider != "off" && st.Online
	return st
}

// Registered reports whether this device has an identity with the current provider.
func (m *Manager) Registered(ctx context.Context) (bool, error) {
	base, err := m.Provider(ctx)
	if err != nil || base == "" {
		return false, err
	}
	return m.registered(ctx, base)
}
