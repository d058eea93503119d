package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
	"github.com/pkuinfo/harness/plugins"
)

// OfficialRepo is the repository whose links are Official (seed 004
// "Install links").
const OfficialRepo = "https://github.com/pkuinfo/pku-harness-plugins"

// OfficialSource is the source recorded for a bundled official plugin, and
// the prefix Review accepts for one ("official:canteen").
const OfficialSource = "official:"

// OfficialLink returns the install link of a bundled official document, the
// link updates check (seed 004: "The app bundles these documents and
// updates them from their GitHub links").
func OfficialLink(name string) string {
	return OfficialRepo + "/tree/main/plugins/" + name
}

// Review is what the review sheet shows before an install or a widening
// update (seed 004 "Install links"): Official or Community, what the plugin
// can reach (campus services, websites, app features) and what it can do
// (every tool with its summary and effect). Hash is the content hash;
// Install with this hash installs exactly these files.
type Review struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	NameEn      string       `json:"nameEn,omitempty"`
	Description string       `json:"description"`
	DescEn      string       `json:"descriptionEn,omitempty"`
	Version     string       `json:"version"`
	Author      string       `json:"author"`
	Source      string       `json:"source"`
	Official    bool         `json:"official"`
	Hash        string       `json:"hash"`
	Campus      []string     `json:"campus"`
	Network     []string     `json:"network"`
	Abilities   []string     `json:"abilities"`
	Tools       []ReviewTool `json:"tools"`
	// Cloud lists the PKU harness Cloud services the plugin uses, with what
	// leaves the device (cloud.disclosure, seed 003), nil when it uses none.
	Cloud        []string `json:"cloud,omitempty"`
	DisclosureZh []string `json:"disclosure,omitempty"`
	DisclosureEn []string `json:"disclosureEn,omitempty"`
	// Warnings are the validator's warnings (errors stop the review).
	Warnings []diag.Diagnostic `json:"warnings,omitempty"`
	// Installed is the installed version of the same id, "" when none.
	Installed string `json:"installed,omitempty"`
	// Kind is KindBuiltin for a built-in plugin (Go in the app), "" for a
	// document.
	Kind string `json:"kind,omitempty"`
	// Instructions is the plugin's PLUGIN.md body, what the assistant reads
	// about it; the sheet shows a Community plugin's, since it is its author's
	// text the assistant reads as data.
	Instructions string `json:"instructions,omitempty"`
	// Refused is why the host will not install this plugin as a Community one
	// (ThirdPartyRule, with its FILE:LINE:COL), "" when it may: the marketplace's
	// scan shows the sheet of a plugin the host would refuse, with this line.
	Refused string `json:"refused,omitempty"`
}

// ReviewTool is one tool line of the review sheet.
type ReviewTool struct {
	Name      string        `json:"name"`
	Title     string        `json:"title"`
	TitleEn   string        `json:"titleEn,omitempty"`
	Summary   string        `json:"summary,omitempty"`
	SummaryEn string        `json:"summaryEn,omitempty"`
	Effect    plugin.Effect `json:"effect"`
	UserOnly  bool          `json:"userOnly,omitempty"`
	Untrusted bool          `json:"untrusted,omitempty"`
}

// reviewed is a loaded plugin kept between Review and Install.
type reviewed struct {
	p        *plugin.Plugin
	source   string
	official bool
	at       time.Time
}

// maxReviews bounds the reviewed plugins kept in memory.
const maxReviews = 32

// Review fetches and validates the plugin at src and returns its review
// sheet. src is an install link of any form of seed 004 "Install links"
// (fetched through the host's Fetcher), a local folder, or "official:NAME"
// for a bundled document. A plugin that does not validate is *Invalid.
func (h *Host) Review(ctx context.Context, src string) (*Review, error) {
	r, err := h.fetch(ctx, src)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if len(h.reviews) >= maxReviews {
		var oldest string
		for k, v := range h.reviews {
			if oldest == "" || v.at.Before(h.reviews[oldest].at) {
				oldest = k
			}
		}
		delete(h.reviews, oldest)
	}
	h.reviews[r.p.Hash] = r
	h.mu.Unlock()
	rv := reviewOf(r)
	if in, err := h.Show(ctx, rv.ID); err == nil {
		rv.Installed = in.Version
	}
	return rv, nil
}

// fetch loads src (see Review) and validates it.
// LoadTimeout bounds reading one plugin source, all its files together: a
// server that answers every file slowly (each within the fetcher's own
// per-file limit) cannot hold a review, an install or an update for longer.
const LoadTimeout = time.Minute

func (h *Host) fetch(ctx context.Context, src string) (*reviewed, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, h.loadLimit)
	defer cancel()
	r, err := h.load(ctx, src)
	if ctx.Err() != nil && parent.Err() == nil {
		return nil, &Unreadable{Source: src, Err: fmt.Errorf("reading the plugin took longer than %s: the server is too slow", h.loadLimit)}
	}
	return r, err
}

func (h *Host) load(ctx context.Context, src string) (*reviewed, error) {
	var (
		p        *plugin.Plugin
		diags    []diag.Diagnostic
		err      error
		official bool
		source   = src
	)
	switch {
	case strings.TrimSpace(src) == "":
		// Not the current folder: an empty argument is a mistake, not a request.
		return nil, &Unreadable{Source: `""`, Err: errors.New("no source: give an install link, a folder or official:NAME")}
	case strings.HasPrefix(src, BuiltinSource):
		return h.loadBuiltin(src)
	case strings.HasPrefix(src, OfficialSource):
		name := strings.TrimPrefix(src, OfficialSource)
		p, diags, err = loadBundled(ctx, name)
		official, source = true, OfficialLink(name)
	case strings.Contains(src, "://"):
		link, lerr := plugin.ResolveLink(src)
		if lerr != nil {
			return nil, &Unreadable{Source: src, Err: lerr}
		}
		official = link.Official
		p, diags, err = plugin.Load(ctx, h.fetcher, src)
	default:
		abs, aerr := filepath.Abs(src)
		if aerr != nil {
			return nil, fmt.Errorf("host: %s: %w", src, aerr)
		}
		source = abs
		p, diags, err = plugin.LoadDirContext(ctx, abs)
	}
	if err != nil {
		return nil, &Unreadable{Source: src, Err: err}
	}
	if diag.HasErrors(diags) {
		return nil, &Invalid{Source: source, Diagnostics: errorsOnly(diags)}
	}
	if !official {
		if d := thirdPartyDiag(p.Manifest); d != nil {
			return nil, &Invalid{Source: source, Diagnostics: []diag.Diagnostic{*d}}
		}
	}
	return &reviewed{p: p, source: source, official: official, at: h.now()}, nil
}

// loadBundled loads an embedded official document.
func loadBundled(ctx context.Context, name string) (*plugin.Plugin, []diag.Diagnostic, error) {
	fsys, err := plugins.Dir(name)
	if err != nil {
		return nil, nil, err
	}
	files := map[string][]byte{}
	err = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path, "tests/") {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		files[path] = b
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return plugin.LoadFiles(ctx, files)
}

// ReviewOf returns the review sheet of a plugin that loaded and validated,
// as Review would show it for source (the marketplace's scan shows the
// sheet of every plugin of a submitted repository before anyone installs
// one). official says whether the source is Official.
func ReviewOf(p *plugin.Plugin, source string, official bool) *Review {
	return reviewOf(&reviewed{p: p, source: source, official: official})
}

func reviewOf(r *reviewed) *Review {
	m := r.p.Manifest
	rv := &Review{
		ID: m.ID, Name: m.Name, Description: m.Description, Version: m.Version, Author: m.Author,
		Source: r.source, Official: r.official, Hash: r.p.Hash,
		Campus: nonNil(m.Campus), Network: nonNil(m.Network), Abilities: nonNil(m.Abilities),
		Tools: []ReviewTool{},
	}
	if m.Cloud != nil {
		rv.Cloud, rv.DisclosureZh, rv.DisclosureEn = nonNil(m.Cloud.Uses), m.Cloud.DisclosureZh, m.Cloud.DisclosureEn
	}
	if strings.HasPrefix(r.source, BuiltinSource) {
		rv.Kind = KindBuiltin
	}
	rv.Instructions = strings.TrimSpace(r.p.Instructions)
	if !r.official {
		if d := thirdPartyDiag(m); d != nil {
			rv.Refused = d.String()
		}
	}
	var en *plugin.Locale
	if m.I18n != nil {
		en = m.I18n.En
	}
	if en != nil {
		rv.NameEn, rv.DescEn = en.Name, en.Description
	}
	for _, t := range r.p.Tools {
		rt := ReviewTool{Name: t.Name, Title: t.Title, Summary: t.Summary, Effect: t.Effect, UserOnly: t.UserOnly, Untrusted: t.Untrusted}
		if en != nil {
			for _, tt := range en.Tools {
				if tt.Name == t.Name {
					rt.TitleEn, rt.SummaryEn = tt.Title, tt.Summary
				}
			}
		}
		rv.Tools = append(rv.Tools, rt)
	}
	return rv
}

// Languages of the review sheet.
const (
	LangZh = "zh-Hans"
	LangEn = "en"
)

var campusZh = map[string]string{
	"card": "校园卡", "its": "网络服务（ITS）", "treehole": "树洞", "blackboard": "教学网",
	"elective": "选课网", "cwfw": "财务", "cwpay": "财务缴费", "bdkj": "场地预约",
	"library": "图书馆", "library-space": "图书馆空间预约",
}

var campusEn = map[string]string{
	"card": "Campus card", "its": "Network services (ITS)", "treehole": "Treehole", "blackboard": "Blackboard",
	"elective": "Course selection", "cwfw": "Finance", "cwpay": "Finance payments", "bdkj": "Venue booking",
	"library": "Library", "library-space": "Library seat booking",
}

var effectZh = map[plugin.Effect]string{
	plugin.EffectRead: "读取", plugin.EffectWrite: "修改", plugin.EffectMoney: "花钱", plugin.EffectPublic: "公开",
}

// Sheet renders the review sheet as text in lang (LangZh or LangEn; any
// other value is English). English names, descriptions, titles and summaries
// come from i18n.en; a missing English name or title falls back to the
// Chinese one, and a missing English summary is left out (seed 004 "Tools").
func (rv *Review) Sheet(lang string) string {
	zh := lang == LangZh
	var b strings.Builder
	name, desc := rv.Name, rv.Description
	if !zh {
		if rv.NameEn != "" {
			name = rv.NameEn
		}
		if rv.DescEn != "" {
			desc = rv.DescEn
		}
	}
	kind := "Community: not reviewed by PKU harness"
	if rv.Official {
		kind = "Official"
	}
	if rv.Kind == KindBuiltin {
		kind = "Official, built into the app: it updates with the app"
	}
	if zh {
		kind = "社区插件：未经 PKU harness 审核"
		if rv.Official {
			kind = "官方插件"
		}
		if rv.Kind == KindBuiltin {
			kind = "官方插件，内置于应用，随应用更新"
		}
		fmt.Fprintf(&b, "%s（%s %s，作者 %s）\n%s\n%s\n", name, rv.ID, rv.Version, rv.Author, kind, desc)
	} else {
		fmt.Fprintf(&b, "%s (%s %s, by %s)\n%s\n%s\n", name, rv.ID, rv.Version, rv.Author, kind, desc)
	}
	if rv.Installed != "" {
		if zh {
			fmt.Fprintf(&b, "已安装版本：%s\n", rv.Installed)
		} else {
			fmt.Fprintf(&b, "Installed version: %s\n", rv.Installed)
		}
	}
	section := func(zhTitle, enTitle string, lines []string) {
		if zh {
			fmt.Fprintf(&b, "\n%s\n", zhTitle)
		} else {
			fmt.Fprintf(&b, "\n%s\n", enTitle)
		}
		if len(lines) == 0 {
			if zh {
				b.WriteString("  无\n")
			} else {
				b.WriteString("  none\n")
			}
		}
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
	}
	var campus []string
	for _, s := range rv.Campus {
		label := campusEn[s]
		if zh {
			label = campusZh[s]
		}
		if zh {
			campus = append(campus, fmt.Sprintf("%s\uff08%s\uff09", label, s))
		} else {
			campus = append(campus, fmt.Sprintf("%s (%s)", label, s))
		}
	}
	section("校园服务（用你的登录状态访问，插件看不到密码、Cookie 或令牌）：",
		"Campus services (called with your signed-in session; the plugin never sees your password, cookies or tokens):", campus)
	section("网站：", "Websites:", rv.Network)
	var abil []string
	for _, g := range rv.Abilities {
		a := plugin.AbilityGroup(g)
		if a == nil {
			abil = append(abil, g)
			continue
		}
		var ops []string
		for _, op := range a.Ops {
			if zh {
				ops = append(ops, fmt.Sprintf("%s\uff08%s\uff09", op.Op, effectZh[op.Effect]))
			} else {
				ops = append(ops, fmt.Sprintf("%s (%s)", op.Op, op.Effect))
			}
		}
		sep := ", "
		if zh {
			sep = "、"
		}
		abil = append(abil, g+map[bool]string{true: "\uff1a", false: ": "}[zh]+strings.Join(ops, sep))
	}
	section("应用功能：", "App features:", abil)
	if rv.Cloud != nil {
		lines := []string{strings.Join(rv.Cloud, ", ")}
		disc := rv.DisclosureEn
		if zh || len(disc) == 0 {
			disc = rv.DisclosureZh
		}
		lines = append(lines, disc...)
		section("PKU harness Cloud\uff08\u6570\u636e\u4f1a\u79bb\u5f00\u672c\u673a\uff09\uff1a", "PKU harness Cloud (data leaves this device):", lines)
	}
	var tools []string
	for _, t := range rv.Tools {
		title, summary, eff := t.Title, t.Summary, effectZh[t.Effect]
		if !zh {
			title, summary, eff = t.TitleEn, t.SummaryEn, t.Effect.String()
			if title == "" {
				title = t.Title
			}
		}
		line := fmt.Sprintf("%s [%s] %s", t.Name, eff, title)
		if summary != "" && zh {
			line += "\uff1a" + summary
		} else if summary != "" {
			line += ": " + summary
		}
		var flags []string
		if t.UserOnly {
			flags = append(flags, map[bool]string{true: "仅限本人点击", false: "only by your own tap"}[zh])
		}
		if t.Untrusted {
			flags = append(flags, map[bool]string{true: "返回第三方内容", false: "returns third-party text"}[zh])
		}
		if len(flags) > 0 && zh {
			line += "\uff08" + strings.Join(flags, "\uff0c") + "\uff09"
		} else if len(flags) > 0 {
			line += " (" + strings.Join(flags, ", ") + ")"
		}
		tools = append(tools, line)
	}
	section("工具：", "Tools:", tools)
	if !rv.Official {
		if rv.Instructions != "" {
			section("插件说明（作者写的文字，AI 会把它当作第三方数据读到）：", "The plugin's notes (its author's text; the AI reads them as third-party data):",
				strings.Split(rv.Instructions, "\n"))
		}
		b.WriteString("\n" + CommunityNote(zh) + "\n")
		if rv.Refused != "" {
			if zh {
				b.WriteString("\n不能安装：" + rv.Refused + "\n")
			} else {
				b.WriteString("\nCannot be installed: " + rv.Refused + "\n")
			}
		}
	}
	if zh {
		fmt.Fprintf(&b, "\n内容哈希：%s\n", rv.Hash)
	} else {
		fmt.Fprintf(&b, "\nContent hash: %s\n", rv.Hash)
	}
	return b.String()
}

// CommunityNote is what the review sheet says holds for a Community plugin, in
// Chinese (zh) or English: its starting modes, how its words reach the
// assistant, and what the host guarantees (Decide's rule before a call that
// can reach a third party).
func CommunityNote(zh bool) string {
	if zh {
		return "社区插件：修改、花钱和公开类工具初始设为「询问」。它的说明、工具描述和结果都是作者写的文字，会标记为第三方数据交给 AI，而不是指令；" +
			"AI 读过第三方内容或你的私人数据（成绩、余额、记忆等）之后，任何可能把数据发给第三方的调用（包括这个插件的任何工具）都会先问你。" +
			"主机无法保证 AI 完全不受这些文字影响，但保证：没有你的同意，私人数据不会发给第三方；手机令牌验证码从不交给 AI。"
	}
	return "Community plugin: its write, money and public tools start at ask. Its notes, tool descriptions and results are its author's text and reach the AI marked as third-party data, not as instructions. " +
		"Once the AI has read third-party text or your private data (grades, balances, memories and the like), any call that could send data to a third party (any tool of this plugin included) asks you first. " +
		"The host cannot make a model ignore text; what it guarantees is that nothing private goes to a third party without your yes, and that authenticator codes never reach the AI."
}

// thirdPartyDiag is ThirdPartyRule's refusal as a diagnostic at the manifest
// field at fault, nil when m may be a Community plugin's.
func thirdPartyDiag(m *plugin.Manifest) *diag.Diagnostic {
	path, why := ThirdPartyRule(m)
	if why == "" {
		return nil
	}
	at := m.Pos.At(path)
	return &diag.Diagnostic{Severity: diag.Error, File: plugin.ManifestFile, Pos: at, Msg: why}
}
