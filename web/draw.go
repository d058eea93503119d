package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// DrawRequest is the body of POST /v1/ui/draw: one document to draw, named by Plugin with Widget
// or Screen (the plugin's own file), or given inline as Document (a dashboard card's document
// bound to Tool with Args, both "plugin.tool"; or a ui__render document from the chat, with no
// data). Size is sm, md or lg (default md), Locale zh-Hans or en, Form the screen's field values,
// Refresh asks the host to re-read the data sources now instead of from its cache.
type DrawRequest struct {
	Plugin   string          `json:"plugin,omitempty"`
	Widget   string          `json:"widget,omitempty"`
	Screen   string          `json:"screen,omitempty"`
	Document json.RawMessage `json:"document,omitempty"`
	Tool     string          `json:"tool,omitempty"`
	Args     map[string]any  `json:"args,omitempty"`
	Size     string          `json:"size,omitempty"`
	Locale   string          `json:"locale,omitempty"`
	Form     map[string]any  `json:"form,omitempty"`
	Refresh  bool            `json:"refresh,omitempty"`
}

// DrawReply is the answer: State "ok" with the drawn document, or "error" (Error says why; a
// widget shows its error state with a retry), "signin" (a campus service the data needs is not
// signed in; Service names it) or "verify" (the tool asks for a verification or more input,
// which the assistant handles). Data gives each binding's fetch time and staleness. Title is
// the document's title in the viewer's language, in every state, so a card that failed still
// has its name. Error is the message for a person (a plugin's own check message, without the
// place in its file); Detail, when set, is the full error with that place, for a disclosure.
// Sizes are the sizes a widget declares (its document's sizes, ["md"] when none;
// genui.DeclaredSizes), in every state, so a card's menu offers only those; empty for a
// screen.
type DrawReply struct {
	State   string                 `json:"state"`
	Title   string                 `json:"title,omitempty"`
	Sizes   []string               `json:"sizes,omitempty"`
	Error   string                 `json:"error,omitempty"`
	Detail  string                 `json:"detail,omitempty"`
	Updated string                 `json:"updated,omitempty"` // when the oldest value drawn was read: its Beijing clock (with the date on another day), by package i18n's formatters
	Stale   bool                   `json:"stale,omitempty"`   // a value drawn is one the host kept after a failed refresh
	Service string                 `json:"service,omitempty"`
	Drawn   *genui.Drawn           `json:"drawn,omitempty"`
	Data    map[string]BindingInfo `json:"data,omitempty"`
}

// BindingInfo is when one binding's value was read and whether it is past its TTL (the host
// served its last good value after a failed refresh; Error says why).
type BindingInfo struct {
	FetchedAt time.Time `json:"fetchedAt,omitzero"`
	Stale     bool      `json:"stale,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// Routes adds POST /v1/ui/draw, GET /v1/ui/plugins/{id} (PluginUI) and the dashboard's event
// stream POST /v1/ui/dashboard/events (Dashboard) to srv, drawing with h. The routes are behind the API's guard
// (same origin, JSON content type, the token when there is one); data comes only through h's
// data sources and Host.Call as the user, and a binding may only read (a read tool that is not
// userOnly), as docs/GENUI.md requires.
func Routes(srv *api.Server, h *host.Host) { routes(srv, h, &Dashboard{Host: h}) }

func routes(srv *api.Server, h *host.Host, d *Dashboard) {
	routeUI(srv, h)
	d.route(srv)
	srv.HandleFunc("POST /v1/ui/draw", func(w http.ResponseWriter, r *http.Request) error {
		var req DrawRequest
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: "the body: " + err.Error()}
		}
		rep, err := Draw(r.Context(), h, req)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	})
}

func bad(format string, args ...any) error {
	return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: fmt.Sprintf(format, args...)}
}

// Draw loads req's document and data through h and draws it; the errors are the request's
// (*api.Error 400 or the host's not-found), while a failing data source is a reply with State
// "error".
func Draw(ctx context.Context, h *host.Host, req DrawRequest) (*DrawReply, error) {
	switch req.Size {
	case "", "sm", "md", "lg":
	default:
		return nil, bad("size %q: sm, md or lg", req.Size)
	}
	switch req.Locale {
	case "", "zh-Hans", "en":
	default:
		return nil, bad("locale %q: zh-Hans or en", req.Locale)
	}
	form := map[string]any{}
	for k, v := range req.Form {
		ev, err := expr.FromGo(plain(v))
		if err != nil {
			return nil, bad("form.%s: %v", k, err)
		}
		form[k] = ev
	}
	in := genui.DrawInput{Size: req.Size, Locale: req.Locale, Now: time.Now(), Data: map[string]any{}, Form: form}
	rep := &DrawReply{State: "ok", Data: map[string]BindingInfo{}}
	var doc []byte
	var p *plugin.Plugin
	named := 0
	for _, s := range []string{req.Widget, req.Screen} {
		if s != "" {
			named++
		}
	}
	if len(req.Document) > 0 {
		named++
	}
	if named != 1 {
		return nil, bad("give one of widget, screen (each with plugin) or document")
	}
	if req.Plugin != "" || req.Tool != "" {
		id := req.Plugin
		if req.Tool != "" {
			pid, _, ok := host.SplitToolName(req.Tool)
			if !ok {
				return nil, bad("tool %q: write it as plugin.tool", req.Tool)
			}
			if id != "" && id != pid {
				return nil, bad("tool %s is not a tool of plugin %s", req.Tool, id)
			}
			id = pid
		}
		var err error
		if p, err = h.Plugin(ctx, id); err != nil {
			return nil, err
		}
	}
	kind := "widget"
	switch {
	case req.Widget != "" || req.Screen != "":
		if p == nil {
			return nil, bad("a widget or screen needs plugin")
		}
		refs, name := p.Manifest.Widgets, req.Widget
		if req.Screen != "" {
			refs, name, kind = p.Manifest.Screens, req.Screen, "screen"
		}
		for _, ref := range refs {
			if ref.Name == name {
				doc = p.Files[ref.File]
			}
		}
		if doc == nil {
			return nil, &api.Error{Status: http.StatusNotFound, Code: "not_found", Message: fmt.Sprintf("plugin %s has no %s %q", p.Manifest.ID, kind, name)}
		}
	default:
		doc = req.Document
		if len(doc) > 256<<10 {
			return nil, bad("the document is over 256 KB")
		}
		if req.Tool == "" {
			kind = "screen" // a ui__render document: no data, buttons only
		}
	}
	var d struct {
		Kind  string `json:"kind"`
		Title string `json:"title"`
		I18n  map[string]struct {
			Title string `json:"title"`
		} `json:"i18n"`
		Data    map[string]json.RawMessage `json:"data"`
		Strings json.RawMessage            `json:"strings"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, bad("the document is not JSON: %v", err)
	}
	rep.Title = d.Title
	if en := d.I18n["en"].Title; req.Locale == "en" && en != "" {
		rep.Title = en
	}
	if kind == "widget" {
		rep.Sizes = genui.DeclaredSizes(doc)
	}
	if len(req.Document) > 0 {
		// An inline document comes from the browser: check it as the assistant's is checked.
		gctx := genui.Context{Kind: d.Kind}
		if req.Tool != "" {
			gctx.DataSources = []string{"tool"}
		} else {
			gctx.Tools = genui.ActionTools(decodeAny(doc))
		}
		for _, dg := range genui.Validate("document", doc, gctx) {
			if dg.Severity == diag.Error {
				return nil, bad("%s", dg.String())
			}
		}
	}
	if req.Tool != "" {
		_, tool, _ := host.SplitToolName(req.Tool)
		v, info, err := readTool(ctx, h, p, tool, req.Args, false)
		if err != nil {
			return failed(rep, err), nil
		}
		in.Data["tool"], rep.Data["tool"] = v, info
	}
	for name, raw := range d.Data {
		if p == nil {
			return nil, bad("data binding %s: an inline document has no plugin to read from", name)
		}
		var b struct {
			Source string         `json:"source"`
			Tool   string         `json:"tool"`
			Fn     string         `json:"fn"`
			Args   map[string]any `json:"args"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, bad("data binding %s: %v", name, err)
		}
		switch {
		case b.Source != "" && req.Tool != "":
			// A card bound to a tool declares its result as the data source "tool" (what
			// dashboard__upsertWidget validates it against); it has no other source.
			if b.Source != "tool" {
				return nil, bad("data binding %s: a card's document reads its tool only (source \"tool\")", name)
			}
			in.Data[name], rep.Data[name] = in.Data["tool"], rep.Data["tool"]
		case b.Source != "":
			dv, err := h.DataSource(ctx, p.Manifest.ID, b.Source, req.Refresh)
			if err != nil {
				return failed(rep, err), nil
			}
			in.Data[name] = dv.Value
			rep.Data[name] = BindingInfo{FetchedAt: dv.FetchedAt, Stale: dv.Stale, Error: dv.Error}
		case b.Tool != "":
			args, err := bindingArgs(ctx, doc, b.Args, in)
			if err != nil {
				return failed(rep, err), nil
			}
			v, info, err := readTool(ctx, h, p, b.Tool, args, req.Screen != "" && len(req.Document) == 0)
			if err != nil {
				return failed(rep, err), nil
			}
			in.Data[name], rep.Data[name] = v, info
		case b.Fn != "" && len(req.Document) == 0:
			args, err := bindingArgs(ctx, doc, b.Args, in)
			if err != nil {
				return failed(rep, err), nil
			}
			v, info, err := readFunction(ctx, h, p, b.Fn, args)
			if err != nil {
				return failed(rep, err), nil
			}
			in.Data[name], rep.Data[name] = v, info
		case b.Fn != "":
			// An inline document (a card the assistant made, a ui__render) is not the plugin's:
			// it may not spend the plugin's Cloud consent.
			return nil, bad("data binding %s: only a plugin's own widget or screen may bind a server function", name)
		default:
			return nil, bad("data binding %s: this host reads source, tool or fn bindings", name)
		}
		if s := statusOf(in.Data[name]); s == "verification_required" || s == "needs_input" {
			rep.State = "verify"
			return rep, nil
		}
	}
	rep.Updated, rep.Stale = updated(rep.Data, in.Now, req.Locale)
	drawn, err := genui.Draw(ctx, doc, in)
	if err != nil {
		return nil, bad("%v", err)
	}
	if p != nil && h.PrivatePlugin(p) && (len(req.Document) > 0 || !official(ctx, h, p.Manifest.ID)) {
		// The person's private data, drawn by a document no Official plugin wrote (a
		// Community plugin's, or a card the assistant made): a link its templates built
		// could carry that data to any host on a tap, so only links written out in the
		// document itself stay live.
		inertLinks(drawn.Root, func(u string) bool { return bytes.Contains(doc, []byte(u)) })
	}
	rep.Drawn = drawn
	return rep, nil
}

// official reports whether installed plugin id is Official.
func official(ctx context.Context, h *host.Host, id string) bool {
	in, err := h.Show(ctx, id)
	return err == nil && in.Official
}

// inertLinks applies genui.InertLinks to the text of every Markdown node of a
// drawn tree.
func inertLinks(n any, keep func(string) bool) {
	switch v := n.(type) {
	case map[string]any:
		if v["type"] == "Markdown" {
			if props, ok := v["props"].(map[string]any); ok {
				if t, ok := props["text"].(string); ok {
					props["text"] = genui.InertLinks(t, keep)
				}
			} else if t, ok := v["text"].(string); ok {
				v["text"] = genui.InertLinks(t, keep)
			}
		}
		for _, c := range v {
			inertLinks(c, keep)
		}
	case []any:
		for _, c := range v {
			inertLinks(c, keep)
		}
	}
}

// updated words when the oldest of the values drawn was read, with the formatters every face
// uses: the Beijing clock ("06:42", i18n.FormatClock) on now's day, else the date and clock
// ("12月1日 06:42" / "Dec 1, 06:42", i18n.FormatLocalDateTime). An absolute time, so the page
// can keep showing it until the host's next refresh without it going wrong. It also says
// whether any value is stale.
func updated(data map[string]BindingInfo, now time.Time, locale string) (string, bool) {
	var oldest time.Time
	stale := false
	for _, b := range data {
		if !b.FetchedAt.IsZero() && (oldest.IsZero() || b.FetchedAt.Before(oldest)) {
			oldest = b.FetchedAt
		}
		stale = stale || b.Stale
	}
	if oldest.IsZero() {
		return "", stale
	}
	l := i18n.Zh
	if locale == "en" {
		l = i18n.En
	}
	if i18n.FormatDay(oldest, now, l) == i18n.FormatDay(now, now, l) {
		return i18n.FormatClock(oldest), stale
	}
	return i18n.FormatLocalDateTime(oldest, l), stale
}

// readTool runs a binding's tool as the user: only a read tool that is not userOnly (a binding
// runs without a tap), except that an installed plugin's screen (screen true), which the person
// opened, may read with a userOnly read tool, as genui's validator allows (card-share's link for
// its QR code).
func readTool(ctx context.Context, h *host.Host, p *plugin.Plugin, tool string, args map[string]any, screen bool) (any, BindingInfo, error) {
	t := p.Tool(tool)
	if t == nil {
		return nil, BindingInfo{}, bad("plugin %s has no tool %q", p.Manifest.ID, tool)
	}
	if t.Effect != plugin.EffectRead || (t.UserOnly && !screen) {
		return nil, BindingInfo{}, bad("tool %s.%s: a binding reads with a read tool that is not userOnly (a plugin's screen may use a userOnly read tool)", p.Manifest.ID, tool)
	}
	input, err := expr.FromGo(plain(args))
	if err != nil {
		return nil, BindingInfo{}, bad("args: %v", err)
	}
	if input == nil {
		input = expr.NewObject(0)
	}
	res, err := h.Call(ctx, host.CallRequest{Actor: host.ActorUser, Plugin: p.Manifest.ID, Tool: tool, Input: input})
	if err != nil {
		return nil, BindingInfo{}, err
	}
	if res.Confirmation != nil {
		return nil, BindingInfo{}, errors.New("the tool waits for a confirmation; open the plugin to answer it")
	}
	return res.Value, BindingInfo{FetchedAt: time.Now()}, nil
}

// readFunction runs a `{ fn }` binding: server function fn of p on the Cloud provider, through
// Host.Call as the user with tool "fn:NAME" (host.FunctionPrefix), as a dataSources entry with
// fn runs (seed 003 "服务端函数": widgets may bind `{ fn }`). fn must be one the plugin declares
// (plugin.Manifest.CloudFunctions), so a document cannot name another plugin's function or a
// path; the host's Cloud handle then asks for the person's consent (consent_required) and
// fails offline at once, and those errors reach the card as its error state.
func readFunction(ctx context.Context, h *host.Host, p *plugin.Plugin, fn string, args map[string]any) (any, BindingInfo, error) {
	if !slices.Contains(p.Manifest.CloudFunctions(), fn) {
		return nil, BindingInfo{}, bad("plugin %s declares no server function %q (cloud.functions or server.functions)", p.Manifest.ID, fn)
	}
	input, err := expr.FromGo(plain(args))
	if err != nil {
		return nil, BindingInfo{}, bad("args: %v", err)
	}
	if input == nil {
		input = expr.NewObject(0)
	}
	res, err := h.Call(ctx, host.CallRequest{Actor: host.ActorUser, Plugin: p.Manifest.ID, Tool: host.FunctionPrefix + fn, Input: input})
	if err != nil {
		return nil, BindingInfo{}, err
	}
	if res.Confirmation != nil {
		return nil, BindingInfo{}, errors.New("the function waits for a confirmation; open the plugin to answer it")
	}
	return res.Value, BindingInfo{FetchedAt: time.Now()}, nil
}

// bindingArgs evaluates a tool binding's args (templates over host.*, t.*, form.*) by drawing
// them as an action's args, which the same rules evaluate.
func bindingArgs(ctx context.Context, doc []byte, args map[string]any, in genui.DrawInput) (map[string]any, error) {
	if len(args) == 0 {
		return nil, nil
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	probe := map[string]any{"ui": 1, "strings": d["strings"], "root": map[string]any{
		"type": "Button", "text": "args", "action": map[string]any{"tool": "x", "args": args}}}
	b, err := json.Marshal(probe)
	if err != nil {
		return nil, err
	}
	out, err := genui.Draw(ctx, b, genui.DrawInput{Size: in.Size, Locale: in.Locale, Now: in.Now, Form: in.Form})
	if err != nil {
		return nil, err
	}
	if len(out.Problems) > 0 {
		return nil, errors.New("binding args: " + out.Problems[0])
	}
	root, _ := out.Root.(map[string]any)
	action, _ := root["action"].(map[string]any)
	got, _ := action["args"].(map[string]any)
	if got == nil {
		return nil, errors.New("binding args could not be evaluated")
	}
	return got, nil
}

// failed fills rep for a data error: "signin" for a campus service without a session, else
// "error" with the message.
func failed(rep *DrawReply, err error) *DrawReply {
	var ns *campus.NotSignedInError
	if errors.As(err, &ns) {
		rep.State, rep.Service, rep.Error = "signin", ns.Service, ns.Error()
		return rep
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		rep.State, rep.Error = "error", ae.Message
		return rep
	}
	// A run that failed: the plugin's message for the person, the place in its file for the
	// details.
	var ie *interp.Error
	if errors.As(err, &ie) && ie.Msg != "" {
		rep.State, rep.Error, rep.Detail = "error", ie.Msg, ie.Error()
		return rep
	}
	msg := strings.TrimPrefix(err.Error(), "host: ")
	rep.State, rep.Error = "error", msg
	return rep
}

func statusOf(v any) string {
	if o, ok := v.(*expr.Object); ok {
		if s, ok := o.Get("status"); ok {
			if s, ok := s.(string); ok {
				return s
			}
		}
	}
	return ""
}

// plain turns decoded JSON (maps, lists, float64) into what expr.FromGo takes.
func plain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plain(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// UIEntry is one widget or screen of a plugin in GET /v1/ui/plugins/{id}: its name, title in
// Chinese and English, and (widgets) the sizes it supports.
type UIEntry struct {
	Name    string   `json:"name"`
	Title   string   `json:"title"`
	TitleEn string   `json:"titleEn,omitempty"`
	Sizes   []string `json:"sizes,omitempty"`
}

// PluginUI is the reply of GET /v1/ui/plugins/{id}: what the plugin adds to the app (widgets,
// screens, settings rows, data sources) and its tools with effect and title, for the plugin page
// and the dashboard's "add a widget" list.
type PluginUI struct {
	ID          string           `json:"id"`
	NameEn      string           `json:"nameEn,omitempty"` // the plugin's English name (i18n.en.name), "" when none
	Widgets     []UIEntry        `json:"widgets"`
	Screens     []UIEntry        `json:"screens"`
	Settings    []map[string]any `json:"settings"`
	DataSources []map[string]any `json:"dataSources"`
	Tools       []map[string]any `json:"tools"`
}

// PluginUIOf describes p for the app (PluginUI).
func PluginUIOf(p *plugin.Plugin) *PluginUI {
	out := &PluginUI{ID: p.Manifest.ID, Widgets: []UIEntry{}, Screens: []UIEntry{}, Settings: []map[string]any{}, DataSources: []map[string]any{}, Tools: []map[string]any{}}
	entry := func(ref *plugin.FileRef) UIEntry {
		var d struct {
			Title string   `json:"title"`
			Sizes []string `json:"sizes"`
			I18n  struct {
				En struct {
					Title string `json:"title"`
				} `json:"en"`
			} `json:"i18n"`
		}
		_ = json.Unmarshal(p.Files[ref.File], &d)
		return UIEntry{Name: ref.Name, Title: d.Title, TitleEn: d.I18n.En.Title, Sizes: d.Sizes}
	}
	if en := p.Manifest.I18n; en != nil && en.En != nil {
		out.NameEn = en.En.Name
	}
	for _, ref := range p.Manifest.Widgets {
		e := entry(ref)
		if len(e.Sizes) == 0 {
			e.Sizes = []string{"md"}
		}
		out.Widgets = append(out.Widgets, e)
	}
	for _, ref := range p.Manifest.Screens {
		out.Screens = append(out.Screens, entry(ref))
	}
	for _, s := range p.Manifest.Settings {
		out.Settings = append(out.Settings, map[string]any{"screen": s.Screen, "title": s.Title, "subtitle": s.Subtitle, "icon": s.Icon})
	}
	for _, d := range p.Manifest.DataSources {
		out.DataSources = append(out.DataSources, map[string]any{"name": d.Name, "tool": d.Tool, "ttlSeconds": int(d.TTL.Seconds()), "title": d.Title})
	}
	for _, t := range p.Tools {
		out.Tools = append(out.Tools, map[string]any{"name": t.Name, "title": t.Title, "titleEn": host.ToolTitleEn(p, t.Name), "effect": t.Effect.String(), "userOnly": t.UserOnly, "untrusted": t.Untrusted})
	}
	return out
}

func routeUI(srv *api.Server, h *host.Host) {
	srv.HandleFunc("GET /v1/ui/plugins/{id}", func(w http.ResponseWriter, r *http.Request) error {
		p, err := h.Plugin(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		return json.NewEncoder(w).Encode(PluginUIOf(p))
	})
}

// decodeAny decodes JSON text into maps and lists; text that is not JSON is nil (Validate
// reports it).
func decodeAny(doc []byte) any {
	var v any
	_ = json.Unmarshal(doc, &v)
	return v
}
