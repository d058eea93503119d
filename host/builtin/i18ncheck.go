package builtin

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/lang/diag"
)

// CheckI18n is the i18n coverage check of seed 003 "多语言" (the
// counterpart of plugins/i18n.test.ts) for one built-in: every user-facing
// string has its English (name, description, each tool title, widget,
// screen, settings row, command and data source), i18n.en names nothing
// that does not exist, the string table has the same keys and value types
// in both languages, each genui document validates without warnings (its
// i18n.en and strings.en complete), and every English string follows the
// English copy rules (i18n.CheckEnglish); Chinese text has no exclamation
// marks. It returns one line per problem, nil when there is none.
func CheckI18n(p *Plugin) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, p.ID+": "+fmt.Sprintf(format, args...)) }
	en := p.I18n.En
	english := func(where, s string) {
		if s == "" {
			add("%s: missing", where)
			return
		}
		for _, problem := range i18n.CheckEnglish(s) {
			add("%s %q: %s", where, s, problem)
		}
	}
	chinese := func(where, s string) {
		if strings.ContainsAny(s, "!！") {
			add("%s %q: an exclamation mark (Chinese copy is plain too)", where, s)
		}
	}
	english("i18n.en.name", en.Name)
	english("i18n.en.description", en.Description)
	chinese("name", p.Name)
	chinese("description", p.Description)
	names := map[string][]string{}
	for _, t := range p.Tools {
		names["tools"] = append(names["tools"], t.Name)
		chinese("tools."+t.Name+".title", t.Title)
		english("i18n.en.tools."+t.Name+".title", en.Tools[t.Name].Title)
	}
	for _, w := range p.Widgets {
		names["widgets"] = append(names["widgets"], w.Name)
		english("i18n.en.widgets."+w.Name+".title", en.Widgets[w.Name].Title)
		english("i18n.en.widgets."+w.Name+".description", en.Widgets[w.Name].Description)
	}
	for _, s := range p.Screens {
		names["screens"] = append(names["screens"], s.Name)
		english("i18n.en.screens."+s.Name+".title", en.Screens[s.Name].Title)
	}
	for _, s := range p.Settings {
		names["settings"] = append(names["settings"], s.Screen)
		chinese("settings."+s.Screen+".title", s.Title)
		english("i18n.en.settings."+s.Screen+".title", en.Settings[s.Screen].Title)
		if s.Subtitle != "" {
			english("i18n.en.settings."+s.Screen+".subtitle", en.Settings[s.Screen].Subtitle)
		}
	}
	for _, c := range p.Commands {
		names["commands"] = append(names["commands"], c.Name)
		ct := en.Commands[c.Name]
		chinese("commands."+c.Name+".description", c.Description)
		english("i18n.en.commands."+c.Name+".description", ct.Description)
		if c.ArgHint != "" {
			english("i18n.en.commands."+c.Name+".argHint", ct.ArgHint)
		}
		if c.Prompt != "" && ct.Prompt == "" {
			add("i18n.en.commands.%s.prompt: missing", c.Name)
		}
		for _, a := range ct.Aliases {
			english("i18n.en.commands."+c.Name+".aliases", a)
		}
	}
	for _, d := range p.DataSources {
		names["dataSources"] = append(names["dataSources"], d.Name)
		chinese("dataSources."+d.Name+".title", d.Title)
		english("i18n.en.dataSources."+d.Name+".title", en.DataSources[d.Name].Title)
	}
	extra := func(what string, keys []string) {
		for _, k := range keys {
			if !slices.Contains(names[what], k) {
				add("i18n.en.%s.%s: no such %s", what, k, strings.TrimSuffix(what, "s"))
			}
		}
	}
	extra("tools", sortedKeys(en.Tools))
	extra("widgets", sortedKeys(en.Widgets))
	extra("screens", sortedKeys(en.Screens))
	extra("settings", sortedKeys(en.Settings))
	extra("commands", sortedKeys(en.Commands))
	extra("dataSources", sortedKeys(en.DataSources))
	for _, problem := range p.I18n.Strings.Check() {
		add("%s", problem)
	}
	for _, k := range sortedKeys(p.I18n.Strings[i18n.En]) {
		for _, s := range sampleTexts(p.I18n.Strings[i18n.En][k]) {
			english("strings."+k, s)
		}
	}
	for _, k := range sortedKeys(p.I18n.Strings[i18n.Zh]) {
		for _, s := range sampleTexts(p.I18n.Strings[i18n.Zh][k]) {
			chinese("strings."+k, s)
		}
	}
	for kind, list := range map[string][]UI{"widget": p.Widgets, "screen": p.Screens} {
		for _, u := range list {
			out = append(out, checkDocument(p.ID, kind, u, en)...)
		}
	}
	slices.Sort(out)
	return out
}

// checkDocument checks one genui document's English: no validator
// warnings, the copy rules on i18n.en and strings.en, and the same title
// as EnText gives.
func checkDocument(id, kind string, u UI, en EnText) []string {
	var out []string
	file := kind + "s/" + u.Name + ".json"
	for _, d := range genui.Validate(file, u.Document, genui.Context{Kind: kind}) {
		if d.Severity == diag.Warning && !strings.Contains(d.Msg, "confirm") {
			out = append(out, fmt.Sprintf("%s: %s", id, d))
		}
	}
	var doc struct {
		Title string `json:"title"`
		I18n  struct {
			En struct{ Title, Description string }
		} `json:"i18n"`
		Strings map[string]map[string]string `json:"strings"`
	}
	if err := json.Unmarshal(u.Document, &doc); err != nil {
		return append(out, fmt.Sprintf("%s: %s: %v", id, file, err))
	}
	check := func(where, s string) {
		for _, problem := range i18n.CheckEnglish(s) {
			out = append(out, fmt.Sprintf("%s: %s %s %q: %s", id, file, where, s, problem))
		}
	}
	check("i18n.en.title", doc.I18n.En.Title)
	check("i18n.en.description", doc.I18n.En.Description)
	for _, k := range sortedKeys(doc.Strings["en"]) {
		check("strings.en."+k, doc.Strings["en"][k])
	}
	want := en.Widgets[u.Name].Title
	if kind == "screen" {
		want = en.Screens[u.Name].Title
	}
	if doc.I18n.En.Title != want {
		out = append(out, fmt.Sprintf("%s: %s: i18n.en.title %q is not the plugin's English title %q", id, file, doc.I18n.En.Title, want))
	}
	return out
}

// sampleTexts returns a string value as it is, or a text function called
// with sample arguments (0, 1 and 3 for numbers, "x" for strings, a fixed
// time), so that its output can be checked.
func sampleTexts(v any) []string {
	if s, ok := v.(string); ok {
		return []string{s}
	}
	fv := reflect.ValueOf(v)
	if fv.Kind() != reflect.Func {
		return nil
	}
	var out []string
	for _, n := range []int{0, 1, 3} {
		in := make([]reflect.Value, fv.Type().NumIn())
		for i := range in {
			switch t := fv.Type().In(i); {
			case t == reflect.TypeFor[time.Time]():
				in[i] = reflect.ValueOf(time.Date(2026, 10, 21, 9, 0, 0, 0, i18n.Beijing))
			case t.Kind() == reflect.String:
				in[i] = reflect.ValueOf("x").Convert(t)
			case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
				in[i] = reflect.ValueOf(n).Convert(t)
			default:
				in[i] = reflect.Zero(t)
			}
		}
		if r := fv.Call(in); len(r) == 1 && r[0].Kind() == reflect.String {
			out = append(out, r[0].String())
		}
	}
	return out
}
