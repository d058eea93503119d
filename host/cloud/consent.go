package cloud

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/plugin"
)

// Decl is what a plugin's manifest says about its Cloud use (seed 003 "插件指南" §1): the
// services of cloud.uses (plus functions when it has a `server:` section or cloud.functions),
// e2e, optional, the disclosure lines, and the server functions it may call.
type Decl struct {
	Plugin       string   `json:"plugin"`
	Uses         []string `json:"uses"`
	E2E          bool     `json:"e2e"`
	Optional     bool     `json:"optional"`
	DisclosureZh []string `json:"disclosureZh"`
	DisclosureEn []string `json:"disclosureEn"`
	Backend      string   `json:"backend,omitempty"` // an external backend URL, shown before consent
	// Functions are the server functions the plugin may call (plugin.Manifest.CloudFunctions:
	// cloud.functions, else every function of `server:`); Plugin.Call refuses any other with
	// CodeNotDeclared, and a consent covers these names.
	Functions []string `json:"functions"`
	// Document is the plugin document (install link and content hash) whose server functions
	// the person consents to; set by DeclOfPlugin for a plugin that uses functions.
	Document *protocol.DocumentRef `json:"document,omitempty"`
}

// DeclOf reads m's Cloud declaration; nil when m uses no Cloud.
func DeclOf(m *plugin.Manifest) *Decl {
	if m == nil || (m.Cloud == nil && m.Server == nil) {
		return nil
	}
	d := &Decl{Plugin: m.ID, Uses: []string{}, DisclosureZh: []string{}, DisclosureEn: []string{},
		Functions: append([]string{}, m.CloudFunctions()...)}
	if c := m.Cloud; c != nil {
		d.Uses = append(d.Uses, c.Uses...)
		d.E2E, d.Optional, d.Backend = c.E2E, c.Optional, c.BackendURL
		d.DisclosureZh = append(d.DisclosureZh, c.DisclosureZh...)
		d.DisclosureEn = append(d.DisclosureEn, c.DisclosureEn...)
	}
	if (m.Server != nil || len(d.Functions) > 0) && !slices.Contains(d.Uses, "functions") {
		d.Uses = append(d.Uses, "functions")
	}
	return d
}

// DeclOfPlugin is DeclOf for an installed plugin: when it uses server functions, Document is
// its install link (plugin:ID when it has none) and content hash, the version a consent
// covers and tokens carry (seed 003 "服务端函数").
func DeclOfPlugin(p *plugin.Plugin) *Decl {
	if p == nil {
		return nil
	}
	d := DeclOf(p.Manifest)
	if d != nil && slices.Contains(d.Uses, "functions") && p.Hash != "" {
		link := p.Source
		if link == "" {
			link = "plugin:" + d.Plugin
		}
		d.Document = &protocol.DocumentRef{Link: link, Hash: p.Hash}
	}
	return d
}

// Consent is the record of a person allowing a plugin to use Cloud: the provider host it was
// given for, when, and the declaration (disclosure, e2e, services) the person was shown. ID
// is the consent's generation: new when a consent is given where there was none for that
// provider (after a withdrawal or a removal too) and when Cloud is turned off or the provider
// changes; a channel is bound to the ID it was opened under and never resumed under another.
type Consent struct {
	ID           string    `json:"-"` // 32 hex digits; not shown: it means nothing to a face
	Plugin       string    `json:"plugin"`
	Provider     string    `json:"provider"` // host[:port] of the provider
	At           time.Time `json:"at"`
	DisclosureZh []string  `json:"disclosureZh"`
	DisclosureEn []string  `json:"disclosureEn"`
	E2E          bool      `json:"e2e"`
	Uses         []string  `json:"uses"`
	// Functions are the server functions the person was shown and allowed.
	Functions []string `json:"functions"`
	// Document is the document version consented to, for a plugin with server functions.
	Document *protocol.DocumentRef `json:"document,omitempty"`
}

// Allow records that the person allows d's plugin to use the current provider. It fails with
// CodeUnavailable when no provider is set. When a removed plugin under the same id left data
// with this provider, that data is deleted first (CodeOffline, and nothing recorded, when the
// provider cannot be reached), so nothing it stored is readable by whatever is allowed now.
// A consent already given for this provider keeps its ID (an update asking again does not
// end its channels); any other gets a new one.
func (m *Manager) Allow(ctx context.Context, d *Decl) (*Consent, error) {
	if d == nil {
		return nil, errors.New("cloud: this plugin declares no Cloud use")
	}
	base, err := m.Provider(ctx)
	if err != nil {
		return nil, err
	}
	if base == "" {
		return nil, errf(d.Plugin, CodeUnavailable, "no Cloud provider is set (Settings → Cloud, or `harness cloud use URL`)")
	}
	if err := m.clearLeftover(ctx, d.Plugin, base); err != nil {
		return nil, err
	}
	id, err := m.consentID(ctx, d.Plugin, base)
	if err != nil {
		return nil, err
	}
	if id == "" {
		id = newConsentID()
	}
	m.mu.Lock()
	now := m.now()
	m.mu.Unlock()
	c := &Consent{ID: id, Plugin: d.Plugin, Provider: hostOf(base), At: now.UTC().Truncate(time.Millisecond),
		DisclosureZh: d.DisclosureZh, DisclosureEn: d.DisclosureEn, E2E: d.E2E, Uses: d.Uses, Functions: nonNil(d.Functions), Document: d.Document}
	disc, _ := json.Marshal(map[string][]string{"zh": c.DisclosureZh, "en": c.DisclosureEn})
	uses, _ := json.Marshal(c.Uses)
	fns, _ := json.Marshal(c.Functions)
	doc := ""
	if c.Document != nil {
		b, _ := json.Marshal(c.Document)
		doc = string(b)
	}
	_, err = m.db.SQL.ExecContext(ctx, `INSERT INTO cloud_consent (plugin, provider, at, disclosure, e2e, uses, document, functions, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (plugin) DO UPDATE SET provider = excluded.provider, at = excluded.at, disclosure = excluded.disclosure, e2e = excluded.e2e, uses = excluded.uses, document = excluded.document, functions = excluded.functions, id = excluded.id`,
		c.Plugin, c.Provider, c.At.UnixMilli(), string(disc), c.E2E, string(uses), doc, string(fns), c.ID)
	if err != nil {
		return nil, fmt.Errorf("cloud: consent: %w", err)
	}
	return c, nil
}

// ConsentOf returns plugin's consent record, nil when there is none (whatever provider it
// names).
func (m *Manager) ConsentOf(ctx context.Context, plugin string) (*Consent, error) {
	var c Consent
	var at int64
	var disc, uses, doc, fns string
	err := m.db.SQL.QueryRowContext(ctx, `SELECT id, plugin, provider, at, disclosure, e2e, uses, document, functions FROM cloud_consent WHERE plugin = ?`, plugin).
		Scan(&c.ID, &c.Plugin, &c.Provider, &at, &disc, &c.E2E, &uses, &doc, &fns)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cloud: consent: %w", err)
	}
	c.At = time.UnixMilli(at).UTC()
	var d map[string][]string
	if err := json.Unmarshal([]byte(disc), &d); err != nil {
		return nil, fmt.Errorf("cloud: consent of %s: %w", plugin, err)
	}
	c.DisclosureZh, c.DisclosureEn = nonNil(d["zh"]), nonNil(d["en"])
	if err := json.Unmarshal([]byte(uses), &c.Uses); err != nil {
		return nil, fmt.Errorf("cloud: consent of %s: %w", plugin, err)
	}
	if err := json.Unmarshal([]byte(fns), &c.Functions); err != nil {
		return nil, fmt.Errorf("cloud: consent of %s: %w", plugin, err)
	}
	c.Functions = nonNil(c.Functions)
	if doc != "" {
		c.Document = new(protocol.DocumentRef)
		if err := json.Unmarshal([]byte(doc), c.Document); err != nil {
			return nil, fmt.Errorf("cloud: consent of %s: %w", plugin, err)
		}
	}
	return &c, nil
}

// Consented reports whether plugin has a consent for the current provider that covers d:
// given for this provider host, for no fewer services than d uses now (a plugin update that
// adds a service or a server function asks again), and, for a plugin with server functions,
// for this version of its document (an update asks again: the provider runs only the
// consented version).
func (m *Manager) Consented(ctx context.Context, d *Decl) (bool, error) {
	base, err := m.Provider(ctx)
	if err != nil || base == "" || d == nil {
		return false, err
	}
	c, err := m.ConsentOf(ctx, d.Plugin)
	if err != nil || c == nil {
		return false, err
	}
	if c.Provider != hostOf(base) {
		return false, nil
	}
	for _, u := range d.Uses {
		if !slices.Contains(c.Uses, u) {
			return false, nil
		}
	}
	for _, f := range d.Functions {
		if !slices.Contains(c.Functions, f) {
			return false, nil
		}
	}
	if d.E2E != c.E2E && !d.E2E {
		return false, nil // consented to end-to-end, now plaintext: ask again
	}
	if d.Document != nil && (c.Document == nil || *c.Document != *d.Document) {
		return false, nil
	}
	return true, nil
}
