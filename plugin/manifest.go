package plugin

import (
	"fmt"

	"github.com/pkuinfo/harness/lang/diag"
	"go.yaml.in/yaml/v3"
)

// ManifestFile is the name of the manifest file at the root of every plugin folder.
const ManifestFile = "PLUGIN.md"

var manifestFields = []string{
	"spec", "id", "name", "description", "version", "author", "icon",
	"campus", "network", "abilities", "tools", "shared", "widgets", "screens",
	"dataSources", "settings", "commands", "defaultModes", "i18n", "remote", "cloud", "server", "requires",
}

// rawManifest is what decodeManifest found besides the Manifest: the nodes of inline tools and of
// an inline shared map, to be decoded once the Env exists.
type rawManifest struct {
	inlineTools  map[string]*yaml.Node
	inlineShared *yaml.Node
	server       *yaml.Node
}

// decodeManifest decodes the frontmatter's root map. Semantic rules (patterns, lengths,
// references) are Validate's; this reports wrong shapes and unknown fields.
func decodeManifest(f *fileDec, root *yaml.Node) (*Manifest, *rawManifest) {
	m := &Manifest{Pos: Positions{}}
	raw := &rawManifest{inlineTools: map[string]*yaml.Node{}}
	// The frontmatter was read, whatever its shape: Validate checks the required fields even when
	// the root is not a map (`null`, `{}`), so such a manifest never passes with no id.
	m.Pos[""] = f.pos(root)
	fs, ok := f.fields(root, "the manifest", "", manifestFields...)
	if !ok {
		return m, raw
	}
	rec := func(path string, n *yaml.Node) {
		if n != nil {
			m.Pos[path] = f.pos(n)
		}
	}
	for _, k := range fs.order {
		rec(k, fs.get(k))
	}
	if n := fs.get("spec"); n != nil {
		m.Spec, _ = f.integer(n, "spec", "")
	}
	strField := func(key string, dst *string) {
		if n := fs.get(key); n != nil {
			*dst, _ = f.str(n, key, "")
		}
	}
	strField("id", &m.ID)
	strField("name", &m.Name)
	strField("description", &m.Description)
	strField("version", &m.Version)
	strField("author", &m.Author)
	strField("icon", &m.Icon)
	listField := func(key string, dst *[]string) {
		if n := fs.get(key); n != nil {
			list, pos, _ := f.strList(n, key, "")
			*dst = list
			for i, p := range pos {
				m.Pos[fmt.Sprintf("%s[%d]", key, i)] = p
			}
		}
	}
	listField("campus", &m.Campus)
	listField("network", &m.Network)
	listField("abilities", &m.Abilities)

	if n := fs.get("requires"); n != nil {
		f.warnf(fs.key("requires"), "", "requires is derived from campus, network, cloud and server; remove it")
	}

	if n := fs.get("tools"); n != nil {
		ps, _ := f.mapping(n, "tools", "")
		for _, p := range ps {
			rec("tools."+p.key, p.k)
			ref := &ToolRef{Name: p.key, Pos: f.pos(p.k)}
			switch {
			case p.v.Kind == yaml.MappingNode:
				raw.inlineTools[p.key] = p.v
			case p.v.Kind == yaml.ScalarNode && p.v.Tag != "!!null":
				ref.File = p.v.Value
				rec("tools."+p.key+".file", p.v)
			default:
				f.errorf(p.v, "", "tools.%s must be a file path or an inline tool (a map), not %s", p.key, yamlKind(p.v))
				continue
			}
			m.Tools = append(m.Tools, ref)
		}
	}
	if n := fs.get("shared"); n != nil {
		switch {
		case n.Kind == yaml.MappingNode:
			raw.inlineShared = n
		case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
			m.Shared = n.Value
		default:
			f.errorf(n, "", "shared must be a file path or a map of constants and functions, not %s", yamlKind(n))
		}
	}
	fileMap := func(key string) []*FileRef {
		n := fs.get(key)
		if n == nil {
			return nil
		}
		ps, _ := f.mapping(n, key, "")
		var out []*FileRef
		for _, p := range ps {
			rec(key+"."+p.key, p.v)
			s, ok := f.str(p.v, key+"."+p.key, "")
			if !ok {
				continue
			}
			out = append(out, &FileRef{Name: p.key, File: s, Pos: f.pos(p.v)})
		}
		return out
	}
	m.Widgets = fileMap("widgets")
	m.Screens = fileMap("screens")

	if n := fs.get("dataSources"); n != nil {
		ps, _ := f.mapping(n, "dataSources", "")
		for _, p := range ps {
			what := "dataSources." + p.key
			rec(what, p.k)
			ds := &DataSource{Name: p.key, Pos: f.pos(p.k)}
			sub, ok := f.fields(p.v, what, "", "tool", "fn", "args", "ttl", "title")
			if !ok {
				continue
			}
			for _, k := range sub.order {
				rec(what+"."+k, sub.get(k))
			}
			if x := sub.get("tool"); x != nil {
				ds.Tool, _ = f.str(x, what+".tool", "")
			}
			if x := sub.get("fn"); x != nil {
				ds.Fn, _ = f.str(x, what+".fn", "")
			}
			if x := sub.get("args"); x != nil {
				ds.Args, _ = f.value(x, what+".args", "")
			}
			if x := sub.get("ttl"); x != nil {
				ds.TTL, _ = f.duration(x, what+".ttl", "")
			}
			if x := sub.get("title"); x != nil {
				ds.Title, _ = f.str(x, what+".title", "")
			}
			m.DataSources = append(m.DataSources, ds)
		}
	}
	if n := fs.get("settings"); n != nil {
		if n.Kind != yaml.SequenceNode {
			f.errorf(n, "", "settings must be a list of { screen, title, subtitle?, icon? }, not %s", yamlKind(n))
		} else {
			for i, c := range n.Content {
				what := fmt.Sprintf("settings[%d]", i)
				rec(what, c)
				sub, ok := f.fields(c, what, "", "screen", "title", "subtitle", "icon")
				if !ok {
					continue
				}
				for _, k := range sub.order {
					rec(what+"."+k, sub.get(k))
				}
				s := &Setting{Pos: f.pos(c)}
				for key, dst := range map[string]*string{"screen": &s.Screen, "title": &s.Title, "subtitle": &s.Subtitle, "icon": &s.Icon} {
					if x := sub.get(key); x != nil {
						*dst, _ = f.str(x, what+"."+key, "")
					}
				}
				m.Settings = append(m.Settings, s)
			}
		}
	}
	if n := fs.get("commands"); n != nil {
		ps, _ := f.mapping(n, "commands", "")
		for _, p := range ps {
			what := "commands." + p.key
			rec(what, p.k)
			sub, ok := f.fields(p.v, what, "", "description", "aliases", "argHint", "prompt", "screen", "tool", "args")
			if !ok {
				continue
			}
			for _, k := range sub.order {
				rec(what+"."+k, sub.get(k))
			}
			c := &Command{Name: p.key, Pos: f.pos(p.k)}
			for key, dst := range map[string]*string{"description": &c.Description, "argHint": &c.ArgHint, "prompt": &c.Prompt, "screen": &c.Screen, "tool": &c.Tool} {
				if x := sub.get(key); x != nil {
					*dst, _ = f.str(x, what+"."+key, "")
				}
			}
			if x := sub.get("aliases"); x != nil {
				c.Aliases, _, _ = f.strList(x, what+".aliases", "")
			}
			if x := sub.get("args"); x != nil {
				c.Args, _ = f.value(x, what+".args", "")
			}
			m.Commands = append(m.Commands, c)
		}
	}
	if n := fs.get("defaultModes"); n != nil {
		ps, _ := f.mapping(n, "defaultModes", "")
		for _, p := range ps {
			what := "defaultModes." + p.key
			rec(what, p.v)
			e, err := ParseEffect(p.key)
			if err != nil {
				f.errorf(p.k, "", "defaultModes: %v", err)
				continue
			}
			mode, ok := f.str(p.v, what, "")
			if !ok {
				continue
			}
			m.DefaultModes = append(m.DefaultModes, &DefaultMode{Effect: e, Mode: mode, Pos: f.pos(p.v)})
		}
	}
	if n := fs.get("i18n"); n != nil {
		m.I18n = decodeI18n(f, n, m.Pos)
	}
	if n := fs.get("remote"); n != nil {
		sub, ok := f.fields(n, "remote", "", "mcp", "auth")
		if ok {
			r := &Remote{Pos: f.pos(n)}
			for _, k := range sub.order {
				rec("remote."+k, sub.get(k))
			}
			if x := sub.get("mcp"); x != nil {
				r.MCP, _ = f.str(x, "remote.mcp", "")
			}
			if x := sub.get("auth"); x != nil {
				r.Auth, _ = f.str(x, "remote.auth", "")
			}
			m.Remote = r
		}
	}
	if n := fs.get("cloud"); n != nil {
		m.Cloud = decodeCloud(f, n, m.Pos)
	}
	if n := fs.get("server"); n != nil {
		raw.server = n
	}
	return m, raw
}

func decodeI18n(f *fileDec, n *yaml.Node, pos Positions) *I18n {
	sub, ok := f.fields(n, "i18n", "", "en")
	if !ok {
		return nil
	}
	out := &I18n{}
	en := sub.get("en")
	if en == nil {
		return out
	}
	fs, ok := f.fields(en, "i18n.en", "", "name", "description", "instructions", "tools", "widgets", "screens", "settings", "commands", "dataSources")
	if !ok {
		return out
	}
	loc := &Locale{}
	out.En = loc
	for _, k := range fs.order {
		pos["i18n.en."+k] = f.pos(fs.get(k))
	}
	for key, dst := range map[string]*string{"name": &loc.Name, "description": &loc.Description, "instructions": &loc.Instructions} {
		if x := fs.get(key); x != nil {
			*dst, _ = f.str(x, "i18n.en."+key, "")
		}
	}
	if x := fs.get("tools"); x != nil {
		ps, _ := f.mapping(x, "i18n.en.tools", "")
		for _, p := range ps {
			what := "i18n.en.tools." + p.key
			pos[what] = f.pos(p.k)
			t := &ToolText{Name: p.key, Pos: f.pos(p.k)}
			s, ok := f.fields(p.v, what, "", "title", "summary")
			if ok {
				for _, k := range s.order {
					pos[what+"."+k] = f.pos(s.get(k))
				}
				if y := s.get("title"); y != nil {
					t.Title, _ = f.str(y, what+".title", "")
				}
				if y := s.get("summary"); y != nil {
					t.Summary, _ = f.str(y, what+".summary", "")
				}
			}
			loc.Tools = append(loc.Tools, t)
		}
	}
	uiTexts := func(key string, allowed ...string) []*UIText {
		x := fs.get(key)
		if x == nil {
			return nil
		}
		ps, _ := f.mapping(x, "i18n.en."+key, "")
		var out []*UIText
		for _, p := range ps {
			what := "i18n.en." + key + "." + p.key
			pos[what] = f.pos(p.k)
			t := &UIText{Name: p.key, Pos: f.pos(p.k)}
			s, ok := f.fields(p.v, what, "", allowed...)
			if ok {
				for k, dst := range map[string]*string{"title": &t.Title, "description": &t.Description, "subtitle": &t.Subtitle} {
					if y := s.get(k); y != nil {
						pos[what+"."+k] = f.pos(y)
						*dst, _ = f.str(y, what+"."+k, "")
					}
				}
			}
			out = append(out, t)
		}
		return out
	}
	loc.Widgets = uiTexts("widgets", "title", "description")
	loc.Screens = uiTexts("screens", "title")
	loc.Settings = uiTexts("settings", "title", "subtitle")
	loc.DataSources = uiTexts("dataSources", "title")
	if x := fs.get("commands"); x != nil {
		ps, _ := f.mapping(x, "i18n.en.commands", "")
		for _, p := range ps {
			what := "i18n.en.commands." + p.key
			pos[what] = f.pos(p.k)
			c := &CommandText{Name: p.key, Pos: f.pos(p.k)}
			s, ok := f.fields(p.v, what, "", "description", "argHint", "aliases", "prompt")
			if ok {
				for k, dst := range map[string]*string{"description": &c.Description, "argHint": &c.ArgHint, "prompt": &c.Prompt} {
					if y := s.get(k); y != nil {
						*dst, _ = f.str(y, what+"."+k, "")
					}
				}
				if y := s.get("aliases"); y != nil {
					c.Aliases, _, _ = f.strList(y, what+".aliases", "")
				}
			}
			loc.Commands = append(loc.Commands, c)
		}
	}
	return out
}

func decodeCloud(f *fileDec, n *yaml.Node, pos Positions) *Cloud {
	fs, ok := f.fields(n, "cloud", "", "protocol", "uses", "e2e", "optional", "pages", "disclosure", "backend", "functions")
	if !ok {
		return nil
	}
	c := &Cloud{Pos: f.pos(n)}
	for _, k := range fs.order {
		pos["cloud."+k] = f.pos(fs.get(k))
	}
	if x := fs.get("protocol"); x != nil {
		c.Protocol, _ = f.integer(x, "cloud.protocol", "")
	}
	if x := fs.get("uses"); x != nil {
		c.Uses, _, _ = f.strList(x, "cloud.uses", "")
	}
	if x := fs.get("e2e"); x != nil {
		c.E2E, _ = f.boolean(x, "cloud.e2e", "")
	}
	if x := fs.get("optional"); x != nil {
		c.Optional, _ = f.boolean(x, "cloud.optional", "")
	}
	if x := fs.get("pages"); x != nil {
		c.Pages, _, _ = f.strList(x, "cloud.pages", "")
	}
	if x := fs.get("functions"); x != nil {
		var ps []diag.Pos
		c.Functions, ps, _ = f.strList(x, "cloud.functions", "")
		if c.Functions == nil {
			c.Functions = []string{}
		}
		for i, p := range ps {
			pos[fmt.Sprintf("cloud.functions[%d]", i)] = p
		}
	}
	if x := fs.get("disclosure"); x != nil {
		d, ok := f.fields(x, "cloud.disclosure", "", "zh", "en")
		if ok {
			if y := d.get("zh"); y != nil {
				pos["cloud.disclosure.zh"] = f.pos(y)
				c.DisclosureZh, _, _ = f.strList(y, "cloud.disclosure.zh", "")
			}
			if y := d.get("en"); y != nil {
				pos["cloud.disclosure.en"] = f.pos(y)
				c.DisclosureEn, _, _ = f.strList(y, "cloud.disclosure.en", "")
			}
		}
	}
	if x := fs.get("backend"); x != nil {
		b, ok := f.fields(x, "cloud.backend", "", "kind", "url")
		if ok {
			if y := b.get("kind"); y != nil {
				pos["cloud.backend.kind"] = f.pos(y)
				c.BackendKind, _ = f.str(y, "cloud.backend.kind", "")
			}
			if y := b.get("url"); y != nil {
				pos["cloud.backend.url"] = f.pos(y)
				c.BackendURL, _ = f.str(y, "cloud.backend.url", "")
			}
		}
	}
	return c
}
