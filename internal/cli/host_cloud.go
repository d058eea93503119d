package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/internal/msg"
)

func init() {
	Register(&Command{
		Path:    "cloud use",
		Usage:   "URL|off [--data DIR]",
		Summary: "set the PKU harness Cloud provider plugins use (checked with GET /v1/meta first), or turn Cloud off",
		Run:     cloudUseCmd,
		Flags:   hostFlagsOnly,
	})
	Register(&Command{
		Path:    "cloud status",
		Usage:   "[--json] [--data DIR]",
		Summary: "show the Cloud provider, whether it answers, and each plugin's services, consent, availability and quota used",
		Run:     cloudStatusCmd,
		Flags:   func(fs *flag.FlagSet) { new(cloudCmdFlags).register(fs) },
	})
	Register(&Command{
		Path:    "cloud consent",
		Usage:   "PLUGIN on|off [--data DIR]",
		Summary: "allow a plugin to use the Cloud provider (showing what leaves this device), or withdraw it",
		Run:     cloudConsentCmd,
		Flags:   hostFlagsOnly,
	})
	Register(&Command{
		Path:    "cloud forget",
		Usage:   "[PLUGIN] [--yes] [--data DIR]",
		Summary: "clear one plugin's cloud data, or without PLUGIN delete all of this device's cloud data (DELETE /v1/devices/me)",
		Run:     cloudForgetCmd,
		Flags:   func(fs *flag.FlagSet) { new(cloudCmdFlags).register(fs) },
	})
	RegisterServeSetup(cloudRoutes)
}

// cloudCmdFlags are the flags of the cloud host commands.
type cloudCmdFlags struct {
	hf   hostFlags
	json bool
	yes  bool
}

func (f *cloudCmdFlags) register(fs *flag.FlagSet) {
	f.hf.register(fs)
	fs.BoolVar(&f.json, "json", false, "print JSON")
	fs.BoolVar(&f.yes, "yes", false, "do not ask before deleting")
}

// cloudCmd is one run of a cloud host command: its flags, positional arguments, language and
// the opened host.
type cloudCmd struct {
	env  *Env
	name string
	f    cloudCmdFlags
	args []string
	lang msg.Lang
	h    *host.Host
	m    *cloud.Manager
	done func()
}

// openCloudCmd parses the flags and opens the host; on failure it has said why and returns
// the exit code.
func openCloudCmd(env *Env, name, usage string, minArgs, maxArgs int) (*cloudCmd, int) {
	c := &cloudCmd{env: env, name: name}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	c.f.register(fs)
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return nil, ExitUsage
	}
	if len(args) < minArgs || len(args) > maxArgs {
		fmt.Fprintf(env.Stderr, "usage: %s %s\n", name, usage)
		return nil, ExitUsage
	}
	c.args = args
	if c.lang, err = c.f.hf.language(); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return nil, ExitUsage
	}
	c.f.hf.readOnly = name == "harness cloud status" // the one that only reads
	h, db, err := openHost(context.Background(), &c.f.hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return nil, ExitFail
	}
	c.h, c.m = h, cloud.For(db)
	c.done = func() { cloud.Release(db); db.Close() }
	return c, ExitOK
}

func (c *cloudCmd) fail(err error) int {
	var ce *cloud.CheckError
	if errors.As(err, &ce) {
		fmt.Fprintf(c.env.Stderr, "%s: %s\n", c.name, checkErrorText(c.lang, ce))
		return ExitFail
	}
	fmt.Fprintf(c.env.Stderr, "%s: %s\n", c.name, hostError(c.lang, err))
	return ExitFail
}

// checkErrorText says in one line, in lang, why the provider at ce.Origin failed "test
// connection": unreachable (refused, no answer, no such host) or not answering as a provider.
// The chain of wrapped errors is reduced to its innermost cause.
func checkErrorText(lang msg.Lang, ce *cloud.CheckError) string {
	var ne net.Error
	var dns *net.DNSError
	switch {
	case errors.Is(ce.Err, syscall.ECONNREFUSED):
		return lang.T(msg.CloudUnreachable, ce.Origin, lang.T(msg.CloudNetRefused))
	case errors.As(ce.Err, &dns) && dns.IsNotFound:
		return lang.T(msg.CloudUnreachable, ce.Origin, lang.T(msg.CloudNetNoHost))
	case errors.Is(ce.Err, context.DeadlineExceeded) || errors.As(ce.Err, &ne) && ne.Timeout():
		return lang.T(msg.CloudUnreachable, ce.Origin, lang.T(msg.CloudNetTimeout))
	}
	var oe *net.OpError
	if errors.As(ce.Err, &oe) {
		return lang.T(msg.CloudUnreachable, ce.Origin, innermost(oe))
	}
	return lang.T(msg.CloudNotProvider, ce.Origin, innermost(ce.Err))
}

// innermost is the message of the deepest error err wraps (a single chain).
func innermost(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

func (c *cloudCmd) t(k msg.Key, args ...any) string { return c.lang.T(k, args...) }

// cloudDecls lists the installed plugins that declare Cloud use, in the host's order.
func cloudDecls(ctx context.Context, h *host.Host) ([]*cloud.Decl, error) {
	list, err := h.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []*cloud.Decl
	for _, in := range list {
		if in.Kind == host.KindRemote {
			continue
		}
		p, err := h.Plugin(ctx, in.ID)
		if err != nil {
			continue // an unreadable plugin has no Cloud to show
		}
		if d := cloud.DeclOfPlugin(p); d != nil {
			out = append(out, d)
		}
	}
	return out, nil
}

// cloudDecl is the declaration of installed plugin id; an error names what is wrong.
func cloudDecl(ctx context.Context, h *host.Host, id string, lang msg.Lang) (*cloud.Decl, error) {
	p, err := h.Plugin(ctx, id)
	if err != nil {
		return nil, err
	}
	d := cloud.DeclOfPlugin(p)
	if d == nil {
		return nil, errors.New(lang.T(msg.CloudNoDecl, id))
	}
	return d, nil
}

// cloudUseCmd is `harness cloud use URL|off` (seed 003 "PKU harness Cloud": Settings → Cloud).
func cloudUseCmd(env *Env) int {
	c, code := openCloudCmd(env, "harness cloud use", "URL|off [--data DIR]", 1, 1)
	if c == nil {
		return code
	}
	defer c.done()
	meta, err := c.m.Use(context.Background(), c.args[0])
	if err != nil {
		return c.fail(err)
	}
	if code := c.printClosing(); code != ExitOK {
		return code
	}
	if meta == nil {
		fmt.Fprintln(env.Stdout, c.t(msg.CloudOff))
		return ExitOK
	}
	fmt.Fprintln(env.Stdout, c.t(msg.CloudUsing, meta.Origin, strings.Join(meta.Services, ", "), meta.Operator.Name))
	fmt.Fprintln(env.Stdout, c.t(msg.CloudLimits, meta.Limits.Store.MaxKeys, meta.Limits.Store.MaxBytes, meta.Limits.Channels.MaxOpen))
	return ExitOK
}

// printClosing says, per plugin, how many channels the provider has not confirmed closed.
func (c *cloudCmd) printClosing() int {
	pend, err := c.m.Closing(context.Background(), "")
	if err != nil {
		return c.fail(err)
	}
	n := map[string]int{}
	var order []string
	for _, p := range pend {
		if n[p.Plugin] == 0 {
			order = append(order, p.Plugin)
		}
		n[p.Plugin]++
	}
	for _, id := range order {
		fmt.Fprintln(c.env.Stdout, c.t(msg.CloudClosing, n[id], id))
	}
	return ExitOK
}

// closePendingLoop closes the Cloud channels a withdrawal, a provider change or a removal left
// pending (the provider was unreachable then, or no host process ran): at `harness serve`
// start, then every minute until ctx ends.
func closePendingLoop(ctx context.Context, h *host.Host, log *slog.Logger) {
	m := cloud.For(h.Store())
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		n, err := m.ClosePending(ctx, "")
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("cloud: close withdrawn channels", "err", err)
		case n > 0:
			log.Debug("cloud: withdrawn channels not closed on the provider yet", "pending", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// cloudReport is what `harness cloud status --json` and GET /v1/cloud answer.
type cloudReport struct {
	Status     cloud.Status   `json:"status"`
	Meta       *cloud.Meta    `json:"meta"`
	Registered bool           `json:"registered"`
	Plugins    []*cloud.Panel `json:"plugins"`
}

func buildCloudReport(ctx context.Context, h *host.Host, m *cloud.Manager) (*cloudReport, error) {
	r := &cloudReport{Status: m.Status(ctx), Plugins: []*cloud.Panel{}}
	var err error
	if r.Meta, err = m.KnownMeta(ctx); err != nil {
		return nil, err
	}
	if r.Registered, err = m.Registered(ctx); err != nil {
		return nil, err
	}
	ds, err := cloudDecls(ctx, h)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		p, err := m.Panel(ctx, d)
		if err != nil {
			return nil, err
		}
		r.Plugins = append(r.Plugins, p)
	}
	return r, nil
}

// cloudStatusCmd is `harness cloud status` (seed 003 "插件指南" §3: status()).
func cloudStatusCmd(env *Env) int {
	c, code := openCloudCmd(env, "harness cloud status", "[--json] [--data DIR]", 0, 0)
	if c == nil {
		return code
	}
	defer c.done()
	r, err := buildCloudReport(context.Background(), c.h, c.m)
	if err != nil {
		return c.fail(err)
	}
	if c.f.json {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			return c.fail(err)
		}
		return ExitOK
	}
	if r.Status.Provider == "off" {
		fmt.Fprintln(env.Stdout, c.t(msg.CloudStatusOff))
	} else {
		on := c.t(msg.CloudOffline)
		if r.Status.Online {
			on = c.t(msg.CloudOnline)
		}
		fmt.Fprintln(env.Stdout, c.t(msg.CloudStatusHead, r.Status.Provider, r.Status.BaseURL, on))
		dev := c.t(msg.CloudDeviceNo)
		if r.Registered {
			dev = c.t(msg.CloudDeviceYes)
		}
		fmt.Fprintln(env.Stdout, c.t(msg.CloudDevice, dev))
	}
	if len(r.Plugins) == 0 {
		fmt.Fprintln(env.Stdout, c.t(msg.CloudNoPlugins))
		return ExitOK
	}
	tw := newTable(env.Stdout)
	fmt.Fprintln(tw, c.t(msg.CloudPluginsHead))
	for _, p := range r.Plugins {
		e2e, consent, st := c.t(msg.No), c.t(msg.CloudNotAllowed), c.t(msg.CloudAvailable)
		if p.E2E {
			e2e = c.t(msg.Yes)
		}
		if p.Consented {
			consent = c.t(msg.CloudAllowed)
		}
		if !p.Status.Available {
			st = whyText(c.lang, p.Provider, p.Status)
		}
		// "≈" marks a figure counted from this device's mirror, not on the provider.
		approx := func(from string) string {
			if from == cloud.FromProvider {
				return ""
			}
			return "≈"
		}
		used := fmt.Sprintf("%s%d/%d keys, %s%d/%d B", approx(p.Usage.KeysFrom), p.Usage.Keys, p.Usage.MaxKeys,
			approx(p.Usage.BytesFrom), p.Usage.Bytes, p.Usage.MaxBytes)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Plugin, strings.Join(p.Uses, ","), e2e, consent, st, used)
	}
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	return ExitOK
}

// whyText says in lang why a plugin's Cloud is unavailable (Status.Why), the host's English
// reason for a code it does not know.
func whyText(lang msg.Lang, host string, st cloud.Status) string {
	switch st.Why {
	case cloud.WhyNoProvider:
		return lang.T(msg.CloudWhyNoProvider)
	case cloud.WhyConsent:
		return lang.T(msg.CloudWhyConsent)
	case cloud.WhyOffline:
		return lang.T(msg.CloudWhyOffline)
	case cloud.WhyNotOffered:
		return lang.T(msg.CloudWhyNotOffered, host, strings.Join(st.Missing, ", "))
	}
	return st.Reason
}

// cloudConsentCmd is `harness cloud consent PLUGIN on|off` (seed 003 "插件指南" §2): on shows
// the provider host, the disclosure line by line, the E2E badge and the services, then
// records the consent.
func cloudConsentCmd(env *Env) int {
	c, code := openCloudCmd(env, "harness cloud consent", "PLUGIN on|off [--data DIR]", 2, 2)
	if c == nil {
		return code
	}
	defer c.done()
	ctx := context.Background()
	id, onOff := c.args[0], c.args[1]
	if onOff != "on" && onOff != "off" {
		fmt.Fprintf(env.Stderr, "%s: %q: say on or off\n", c.name, onOff)
		fmt.Fprintf(env.Stderr, "usage: %s PLUGIN on|off [--data DIR]\n", c.name)
		return ExitUsage
	}
	d, err := cloudDecl(ctx, c.h, id, c.lang)
	if err != nil {
		return c.fail(err)
	}
	if onOff == "off" {
		if err := c.m.Revoke(ctx, id); err != nil {
			return c.fail(err)
		}
		fmt.Fprintln(env.Stdout, c.t(msg.CloudConsentOff, id))
		if pend, err := c.m.Closing(ctx, id); err != nil {
			return c.fail(err)
		} else if len(pend) > 0 {
			fmt.Fprintln(env.Stdout, c.t(msg.CloudClosing, len(pend), id))
		}
		return ExitOK
	}
	base, err := c.m.Provider(ctx)
	if err != nil {
		return c.fail(err)
	}
	if base == "" {
		return c.fail(errors.New(c.t(msg.CloudNoProvider)))
	}
	p, err := c.m.Panel(ctx, d)
	if err != nil {
		return c.fail(err)
	}
	writeDisclosure(env.Stdout, c.lang, p)
	con, err := c.m.Allow(ctx, d)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintln(env.Stdout, c.t(msg.CloudConsentOn, id, con.Provider))
	return ExitOK
}

// writeDisclosure prints a consent panel's text: provider, disclosure lines, E2E badge,
// services.
func writeDisclosure(w io.Writer, lang msg.Lang, p *cloud.Panel) {
	fmt.Fprintln(w, lang.T(msg.CloudConsentHead, p.Plugin, p.Provider))
	lines := p.DisclosureZh
	if lang == msg.En && len(p.DisclosureEn) == len(p.DisclosureZh) {
		lines = p.DisclosureEn
	}
	for _, l := range lines {
		fmt.Fprintln(w, "  - "+l)
	}
	badge := lang.T(msg.CloudNotE2E)
	if p.E2E {
		badge = lang.T(msg.CloudE2E)
	}
	fmt.Fprintln(w, lang.T(msg.CloudConsentE2E, badge))
	fmt.Fprintln(w, lang.T(msg.CloudConsentUses, strings.Join(p.Uses, ", ")))
	if len(p.Functions) > 0 {
		fmt.Fprintln(w, lang.T(msg.CloudConsentFunctions, strings.Join(p.Functions, ", ")))
	}
	if p.Backend != "" {
		fmt.Fprintln(w, lang.T(msg.CloudBackend, p.Backend))
	}
}

// cloudForgetCmd is `harness cloud forget [PLUGIN]`: "clear this plugin's cloud data", or
// "delete all cloud data" (DELETE /v1/devices/me, then the identity is forgotten), asked
// first unless --yes.
func cloudForgetCmd(env *Env) int {
	c, code := openCloudCmd(env, "harness cloud forget", "[PLUGIN] [--yes] [--data DIR]", 0, 1)
	if c == nil {
		return code
	}
	defer c.done()
	ctx := context.Background()
	if len(c.args) == 1 {
		d, err := cloudDecl(ctx, c.h, c.args[0], c.lang)
		if err != nil {
			return c.fail(err)
		}
		if err := c.m.ClearPlugin(ctx, d); err != nil {
			return c.fail(err)
		}
		fmt.Fprintln(env.Stdout, c.t(msg.CloudCleared, d.Plugin))
		return ExitOK
	}
	base, err := c.m.Provider(ctx)
	if err != nil {
		return c.fail(err)
	}
	if base == "" {
		return c.fail(errors.New(c.t(msg.CloudNoProvider)))
	}
	host := strings.TrimPrefix(strings.TrimPrefix(base, "https://"), "http://")
	if !c.f.yes && !confirm(env.Stdin, env.Stderr, c.t(msg.Confirm, c.t(msg.CloudForgetAsk, host))) {
		fmt.Fprintln(env.Stderr, c.t(msg.CloudNotForgot))
		return ExitFail
	}
	if err := c.m.ForgetAll(ctx); err != nil {
		return c.fail(err)
	}
	fmt.Fprintln(env.Stdout, c.t(msg.CloudForgotten, host))
	return ExitOK
}

// CloudRoutes adds the Cloud settings routes of docs/HOST-API.md ("Cloud") to srv, as `harness
// serve` does: for a program (a browser test) that serves the web app in process.
func CloudRoutes(ctx context.Context, h *host.Host, srv *api.Server) error {
	return cloudRoutes(ctx, h, srv)
}

// cloudRoutes adds the Cloud settings routes of docs/HOST-API.md ("Cloud") to `harness serve`.
func cloudRoutes(_ context.Context, h *host.Host, srv *api.Server) error {
	m := cloud.For(h.Store())
	srv.HandleFunc("GET /v1/cloud", func(w http.ResponseWriter, r *http.Request) error {
		rep, err := buildCloudReport(r.Context(), h, m)
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, rep)
	})
	srv.HandleFunc("PUT /v1/cloud", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			URL *string `json:"url"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		if body.URL == nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: `url is required: the provider's https URL, or "off"`}
		}
		if _, err := m.Use(r.Context(), *body.URL); err != nil {
			return cloudAPIError(err)
		}
		rep, err := buildCloudReport(r.Context(), h, m)
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, rep)
	})
	srv.HandleFunc("POST /v1/cloud/test", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			URL string `json:"url"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		meta, err := m.Check(r.Context(), body.URL)
		if err != nil {
			return cloudAPIError(err)
		}
		return api.WriteJSON(w, http.StatusOK, meta)
	})
	srv.HandleFunc("GET /v1/cloud/status", func(w http.ResponseWriter, r *http.Request) error {
		return api.WriteJSON(w, http.StatusOK, m.Status(r.Context()))
	})
	decl := func(r *http.Request) (*cloud.Decl, error) {
		id := r.PathValue("id")
		p, err := h.Plugin(r.Context(), id)
		if err != nil {
			return nil, err
		}
		d := cloud.DeclOfPlugin(p)
		if d == nil {
			return nil, &api.Error{Status: http.StatusNotFound, Code: "not_found", Message: fmt.Sprintf("plugin %s does not use Cloud (no cloud: section in its manifest)", id)}
		}
		return d, nil
	}
	panel := func(w http.ResponseWriter, r *http.Request, d *cloud.Decl) error {
		p, err := m.Panel(r.Context(), d)
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, p)
	}
	srv.HandleFunc("GET /v1/cloud/plugins/{id}/consent", func(w http.ResponseWriter, r *http.Request) error {
		d, err := decl(r)
		if err != nil {
			return err
		}
		return panel(w, r, d)
	})
	srv.HandleFunc("PUT /v1/cloud/plugins/{id}/consent", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Actor string `json:"actor"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		if body.Actor != string(host.ActorUser) {
			return &api.Error{Status: http.StatusForbidden, Code: "user_only", Message: `only the person may allow a plugin to use Cloud: send {"actor":"user"} from their own tap`}
		}
		d, err := decl(r)
		if err != nil {
			return err
		}
		if _, err := m.Allow(r.Context(), d); err != nil {
			return cloudAPIError(err)
		}
		return panel(w, r, d)
	})
	srv.HandleFunc("DELETE /v1/cloud/plugins/{id}/consent", func(w http.ResponseWriter, r *http.Request) error {
		d, err := decl(r)
		if err != nil {
			return err
		}
		if err := m.Revoke(r.Context(), d.Plugin); err != nil {
			return err
		}
		return panel(w, r, d)
	})
	srv.HandleFunc("DELETE /v1/cloud/plugins/{id}/data", func(w http.ResponseWriter, r *http.Request) error {
		d, err := decl(r)
		if err != nil {
			return err
		}
		if err := m.ClearPlugin(r.Context(), d); err != nil {
			return cloudAPIError(err)
		}
		return panel(w, r, d)
	})
	srv.HandleFunc("DELETE /v1/cloud/data", func(w http.ResponseWriter, r *http.Request) error {
		if err := m.ForgetAll(r.Context()); err != nil {
			return cloudAPIError(err)
		}
		rep, err := buildCloudReport(r.Context(), h, m)
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, rep)
	})
	return nil
}

// cloudAPIError maps a Cloud failure to the API's error reply: a provider that does not
// answer or is not a Cloud provider is 502 provider_unreachable (or offline); a bad URL 400;
// a refusal of the provider 502 provider with its code.
func cloudAPIError(err error) error {
	var ce *cloud.Error
	if errors.As(err, &ce) {
		switch ce.Code {
		case cloud.CodeOffline:
			return &api.Error{Status: http.StatusBadGateway, Code: "offline", Message: err.Error()}
		case cloud.CodeUnavailable:
			return &api.Error{Status: http.StatusConflict, Code: "unavailable", Message: err.Error()}
		case cloud.CodeProtocol:
			return &api.Error{Status: http.StatusBadGateway, Code: "provider", Message: err.Error(), Extra: map[string]any{"providerCode": string(ce.Wire)}}
		}
		return &api.Error{Status: http.StatusConflict, Code: string(ce.Code), Message: err.Error()}
	}
	var ue *cloud.URLError
	if errors.As(err, &ue) {
		return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: err.Error()}
	}
	var ke *cloud.CheckError
	if errors.As(err, &ke) {
		return &api.Error{Status: http.StatusBadGateway, Code: "provider_unreachable", Message: err.Error()}
	}
	return err
}
