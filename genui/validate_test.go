package genui

import (
	"os"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/diag"
)

var testCtx = Context{
	Kind:        "widget",
	DataSources: []string{"overview"},
	Tools: map[string]Tool{
		"free": {Effect: "read", Input: []string{"building", "day"}},
		"book": {Effect: "write", Input: []string{"room", "period"}, Required: []string{"room"}},
		"lock": {Effect: "read", UserOnly: true},
	},
}

func diagStrings(ds []diag.Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

func TestValidateValidWidget(t *testing.T) {
	src, err := os.ReadFile("testdata/valid_widget.json")
	if err != nil {
		t.Fatal(err)
	}
	if ds := Validate("widgets/overview.json", src, testCtx); len(ds) != 0 {
		t.Fatalf("want no diagnostics, got:\n%s", strings.Join(diagStrings(ds), "\n"))
	}
}

// head is a valid document prefix; cases append their root (and may override keys).
const head = `{"ui":1,"kind":"widget","title":"T","description":"d","i18n":{"en":{"title":"T"}},"data":{"overview":{"source":"overview"}},`

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		ctx  *Context
		src  string
		want []string
	}{
		{"not json", nil, `{"ui":1,`, []string{
			"w.json:1:9: invalid JSON: unexpected end of JSON",
		}},
		{"bad token", nil, "{\n  \"ui\": 1,\n  \"kind\": wid\n}", []string{
			"w.json:3:11: invalid JSON: 'w' looking for beginning of value",
		}},
		{"duplicate key", nil, `{"ui":1,"ui":1}`, []string{
			`w.json:1:9: invalid JSON: duplicate key "ui"`,
		}},
		{"trailing data", nil, `{} {}`, []string{
			"w.json:1:4: invalid JSON: unexpected data after the document",
		}},
		{"trailing comma", nil, "{}, ", []string{
			"w.json:1:3: invalid JSON: unexpected data after the document",
		}},
		{"not an object", nil, `[1]`, []string{
			"w.json:1:1: $: a document is a JSON object, not a list",
		}},
		{"missing everything", nil, `{}`, []string{
			`w.json:1:1: $: missing "ui": 1 (the format version)`,
			`w.json:1:1: $: missing "kind": "widget" or "screen"`,
			`w.json:1:1: $: missing "title"`,
			`w.json:1:1: $: missing "description"`,
			`w.json:1:1: warning: $: missing i18n.en: English users see the Chinese title`,
			`w.json:1:1: $: missing "root": the top node`,
		}},
		{"version and kind", nil, `{"ui":2,"kind":"card","title":"T","description":"d","i18n":{"en":{"title":"T"}},"root":{"type":"Divider"}}`, []string{
			`w.json:1:7: $.ui: unsupported format version 2; this host reads "ui": 1`,
			`w.json:1:16: $.kind: kind must be "widget" or "screen", not "card"`,
		}},
		{"kind differs from manifest", nil, `{"ui":1,"kind":"screen","title":"T","i18n":{"en":{"title":"T"}},"root":{"type":"Divider"}}`, []string{
			`w.json:1:16: $.kind: the manifest lists this file under widgets but its kind is "screen"`,
		}},
		{"unknown component and prop", nil, head + `"root":{"type":"Column","children":[{"type":"Txt","text":"a"},{"type":"Text","txt":"a"}]}}`, []string{
			`w.json:1:169: $.root.children[0].type: unknown component "Txt"; components are Button, Chip, Column, DateTimeField, Divider, EmptyState, Field, Grid, Icon, List, ListGroup, ListRow, Markdown, QRCode, Ring, Row, Segmented, Skeleton, Sparkline, Stat, Switch, Text`,
			`w.json:1:187: $.root.children[1]: Text needs "text" (the text)`,
			`w.json:1:202: $.root.children[1].txt: Text has no prop "txt"; its props are maxLines, style, text, tone`,
		}},
		{"literal types", nil, head + `"root":{"type":"Row","wrap":"yes","gap":"xl","children":[{"type":"Ring","value":"half"},{"type":"Icon","name":"rocket"},{"type":"Sparkline","values":[1,"2",null]}]}}`, []string{
			`w.json:1:153: $.root.wrap: expected a boolean or a ${expr} template, not "yes"`,
			`w.json:1:165: $.root.gap: "xl" is not one of none, sm, md, lg`,
			`w.json:1:205: $.root.children[0].value: expected a number or a ${expr} template, not "half"`,
			`w.json:1:235: $.root.children[1].name: "rocket" is not one of card, wifi, book, bell, clock, location, sparkles, key, person, qr, warning, check, calendar, bus, food, wallet, library, room, school, ticket, medal, chart, search, globe, lock, info, news, people, star, refresh`,
			`w.json:1:277: $.root.children[2].values[1]: values must be numbers or null, not "2"`,
		}},
		{"typed prop with text around template", nil, head + `"root":{"type":"Ring","value":"${data.overview.n} rooms"}}`, []string{
			`w.json:1:155: $.root.value: a number prop takes one ${expr} (which keeps its type), not text around it`,
		}},
		{"bindings", nil, head + `"root":{"type":"Text","text":"${data.nope.x} ${t.k} ${host.width} ${form.a}"}}`, []string{
			`w.json:1:157: $.root.text: data.nope is not declared in "data"; it declares overview`,
			`w.json:1:172: $.root.text: t.k needs a "strings" table`,
			`w.json:1:179: $.root.text: host.width does not exist; host has size, locale, now`,
			`w.json:1:193: $.root.text: form.* exists on screens only`,
		}},
		{"expression syntax", nil, head + `"root":{"type":"Text","text":"${data.overview.a +}"}}`, []string{
			`w.json:1:174: $.root.text: unexpected '}'`,
		}},
		{"expression names", nil, head + `"root":{"type":"Text","text":"${foo.bar} and ${index}"}}`, []string{
			`w.json:1:157: $.root.text: unknown name 'foo'`,
			`w.json:1:172: $.root.text: unknown name 'index'`,
		}},
		{"expression forbidden construct", nil, head + `"root":{"type":"Text","text":"${x = 1}"}}`, []string{
			`w.json:1:159: $.root.text: assignment ('=') is not allowed: expressions cannot change values; bind a new name with let instead`,
		}},
		{"expression unknown function", nil, head + `"root":{"type":"Text","text":"${nosuchfn(1)}"}}`, []string{
			`w.json:1:157: $.root.text: unknown function 'nosuchfn'`,
		}},
		{"member of another value is not a binding", nil, head + `"root":{"type":"Text","text":"${data.overview.data.x + 'data.y'}"}}`, nil},
		{"template positions with escapes", nil, head + `"root":{"type":"Text","text":"\u4e2d\"${data.zz}"}}`, []string{
			`w.json:1:165: $.root.text: data.zz is not declared in "data"; it declares overview`,
		}},
		{"unclosed template", nil, head + `"root":{"type":"Text","text":"a ${data.overview"}}`, []string{
			`w.json:1:157: $.root.text: unclosed ${: add the closing }`,
		}},
		{"literal dollar brace", nil, head + `"root":{"type":"Text","text":"costs $${x}"}}`, nil},
		{"list scope", nil, head + `"root":{"type":"Column","children":[{"type":"List","items":"${data.overview.rows}","item":"data","template":{"type":"Text","text":"x"}},{"type":"List","items":[1,2],"template":{"type":"Text","text":"${item}"}}]}}`, []string{
			`w.json:1:215: $.root.children[0].item: item name "data" hides a name every template reads; choose another`,
		}},
		{"nested list scope", nil, head + `"root":{"type":"Column","children":[{"type":"List","items":"${data.overview.rows}","item":"r","template":{"type":"List","items":"${r.cells}","item":"c","template":{"type":"Text","text":"${r.name}: ${c} ${index}"}}},{"type":"Text","text":"${c}"}]}}`, []string{
			`w.json:1:365: $.root.children[1].text: unknown name 'c'`,
		}},
		{"data bindings", nil, `{"ui":1,"kind":"widget","title":"T","description":"d","i18n":{"en":{"title":"T"}},"data":{"a":{"source":"nope"},"b":{"tool":"book","args":{"room":"101"}},"c":{"tool":"free","args":{"floor":1},"ttl":"5 minutes"},"d":{"fn":"x"},"e":{"tool":"lock"},"f":{"tool":"free","args":{"day":"${data.a}"}},"g-h":{}},"root":{"type":"Divider"}}`, []string{
			`w.json:1:105: $.data.a.source: unknown data source "nope"; the manifest declares overview`,
			`w.json:1:125: $.data.b.tool: a data binding runs by itself, so it may only use read tools; "book" is write`,
			`w.json:1:182: $.data.c.args.floor: tool "free" has no input field "floor"; its fields are building, day`,
			`w.json:1:199: $.data.c.ttl: "5 minutes" is not a duration; write 30s, 10m, 2h, 1d or a number of seconds`,
			`w.json:1:222: $.data.d.fn: unknown server function "x"; the plugin declares none`,
			`w.json:1:239: $.data.e.tool: "lock" is userOnly: only a tap may run it, not a data binding (a screen may bind a userOnly read tool)`,
			`w.json:1:283: $.data.f.args.day: the args of a data binding cannot read data.* (it is not loaded yet); use host.*, t.* or form.*`,
			`w.json:1:294: $.data["g-h"]: data name "g-h" must be an identifier (letters, digits, _)`,
			`w.json:1:300: $.data["g-h"]: a data binding needs source, tool or fn`,
		}},
		{"fn bindings", &Context{Kind: "widget", Tools: testCtx.Tools, Functions: []string{"stats", "today"}}, `{"ui":1,"kind":"widget","title":"T","description":"d","i18n":{"en":{"title":"T"}},"data":{"a":{"fn":"stats","args":{"n":"${host.now}"},"ttl":"1m"},"b":{"fn":"nope"},"c":{"fn":"../other/stats"},"d":{"fn":"other.stats"},"e":{"fn":"stats","tool":"free"},"f":{"fn":7},"g":{"fn":"today","args":{"x":"${data.a}"},"ttl":"soon"},"h":{"tool":"fn:stats"}},"root":{"type":"Text","text":"${data.a.count}"}}`, []string{
			`w.json:1:158: $.data.b.fn: unknown server function "nope"; the plugin declares stats, today`,
			`w.json:1:176: $.data.c.fn: unknown server function "../other/stats"; the plugin declares stats, today`,
			`w.json:1:204: $.data.d.fn: unknown server function "other.stats"; the plugin declares stats, today`,
			`w.json:1:223: $.data.e: give one of source, tool or fn`,
			`w.json:1:262: $.data.f.fn: fn must be the name of one of the plugin's server functions`,
			`w.json:1:298: $.data.g.args.x: the args of a data binding cannot read data.* (it is not loaded yet); use host.*, t.* or form.*`,
			`w.json:1:314: $.data.g.ttl: "soon" is not a duration; write 30s, 10m, 2h, 1d or a number of seconds`,
			`w.json:1:334: $.data.h.tool: unknown tool "fn:stats"; the plugin has book, free, lock`,
		}},
		{"fn binding without cloud", &Context{Kind: "widget", Tools: testCtx.Tools}, `{"ui":1,"kind":"widget","title":"T","description":"d","i18n":{"en":{"title":"T"}},"data":{"s":{"fn":"stats"}},"root":{"type":"Divider"}}`, []string{
			`w.json:1:101: $.data.s.fn: unknown server function "stats"; the plugin declares none`,
		}},
		{"actions", nil, head + `"root":{"type":"Column","children":[{"type":"Button","text":"b","action":{"tool":"book","args":{"period":3}}},{"type":"Button","text":"c","action":{"tool":"zap","then":"reload","go":1}}]}}`, []string{
			`w.json:1:206: warning: $.root.children[0].action: tool "book" is write but the action has no "confirm" question`,
			`w.json:1:220: $.root.children[0].action.args: missing required input field "room" of tool "book"`,
			`w.json:1:280: $.root.children[1].action.tool: unknown tool "zap"; the plugin has book, free, lock`,
			`w.json:1:293: $.root.children[1].action.then: then must be one of refresh, none, not "reload"`,
			`w.json:1:302: $.root.children[1].action.go: unknown key "go" in an action; an action has tool, args, confirm and then`,
		}},
		{"widget sizes and refresh", nil, `{"ui":1,"kind":"widget","title":"T","description":"d","i18n":{"en":{"title":"T"}},"sizes":["sm","xl","sm"],"refresh":"10s","root":{"type":"Divider"}}`, []string{
			`w.json:1:97: $.sizes[1]: unknown size "xl"; sizes are sm, md, lg`,
			`w.json:1:102: $.sizes[2]: size "sm" is listed twice`,
			`w.json:1:118: $.refresh: refresh is at least 1m (60 s), not "10s"`,
		}},
		{"strings table", nil, `{"ui":1,"kind":"widget","title":"T","description":"d","i18n":{"en":{"title":"T"}},"strings":{"zh-Hans":{"a":"甲","b":"乙"},"en":{"a":"A","c":"C"},"fr":{}},"root":{"type":"Text","text":"${t.a}${t.c}"}}`, []string{
			`w.json:1:113: warning: $.strings.zh-Hans.b: no English text for "b" in strings.en`,
			`w.json:1:136: $.strings.en.c: "c" is not in strings.zh-Hans`,
			`w.json:1:145: $.strings.fr: unknown language "fr"; strings has zh-Hans and en`,
			`w.json:1:192: $.root.text: t.c is not a key of strings.zh-Hans`,
		}},
		{"screen with fields", &Context{Kind: "screen", Tools: testCtx.Tools}, `{"ui":1,"kind":"screen","title":"订","i18n":{"en":{"title":"Book"}},"sizes":["sm"],"root":{"type":"Column","children":[{"type":"Field","name":"room","label":"教室"},{"type":"Button","text":"订","action":{"tool":"book","args":{"room":"${form.room}","period":"${form.p}"},"confirm":"确定?"}}]}}`, []string{
			`w.json:1:76: $.sizes: sizes applies to widgets only`,
			`w.json:1:257: $.root.children[1].action.args.period: form.p has no Field named p`,
		}},
		// A screen (opened by the person, its bindings run as them) may bind a userOnly read tool;
		// never a userOnly write tool.
		{"screen binds a userOnly read tool", &Context{Kind: "screen", Tools: map[string]Tool{"lock": {Effect: "read", UserOnly: true}, "wipe": {Effect: "write", UserOnly: true}}}, `{"ui":1,"kind":"screen","title":"订","i18n":{"en":{"title":"Book"}},"data":{"l":{"tool":"lock"},"w":{"tool":"wipe"}},"root":{"type":"QRCode","value":"${data.l.link}"}}`, []string{
			`w.json:1:108: $.data.w.tool: a data binding runs by itself, so it may only use read tools; "wipe" is write`,
			`w.json:1:108: $.data.w.tool: "wipe" is userOnly: only a tap may run it, not a data binding (a screen may bind a userOnly read tool)`,
		}},
		// QRCode's share is a boolean: the app then offers to copy or share the code's text.
		{"qrcode share", &Context{Kind: "screen", Tools: map[string]Tool{"lock": {Effect: "read"}}}, `{"ui":1,"kind":"screen","title":"订","i18n":{"en":{"title":"Book"}},"data":{"l":{"tool":"lock"}},"root":{"type":"Column","children":[{"type":"QRCode","value":"${data.l.link}","share":true},{"type":"QRCode","value":"x","share":"${data.l.sharing}"},{"type":"QRCode","value":"x","share":"yes"}]}}`, []string{
			`w.json:1:284: $.root.children[2].share: expected a boolean or a ${expr} template, not "yes"`,
		}},
		{"field in a widget", nil, head + `"root":{"type":"Field","name":"x","label":"X"}}`, []string{
			`w.json:1:140: $.root.type: Field is for screens; a widget has no inputs`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx
			if tc.ctx != nil {
				ctx = *tc.ctx
			}
			got := diagStrings(Validate("w.json", []byte(tc.src), ctx))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestValidateLimits(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	got := diagStrings(Validate("w.json", []byte(deep), testCtx))
	want := "w.json:1:65: invalid JSON: nesting deeper than 64 levels"
	if len(got) != 1 || got[0] != want {
		t.Errorf("deep: got %q, want %q", got, want)
	}
	big := make([]byte, MaxDocumentBytes+1)
	got = diagStrings(Validate("w.json", big, testCtx))
	if len(got) != 1 || got[0] != "w.json:1:1: the document is 262145 bytes, the limit is 262144" {
		t.Errorf("big: got %q", got)
	}
	bad := []byte("{\"ui\":1,\n\"title\":\"\xff\"}")
	got = diagStrings(Validate("w.json", bad, testCtx))
	if len(got) != 1 || got[0] != "w.json:2:10: invalid JSON: the file is not UTF-8" {
		t.Errorf("utf8: got %q", got)
	}
}

func TestValidateCapsDiagnostics(t *testing.T) {
	var b strings.Builder
	b.WriteString(head + `"root":{"type":"Column","children":[`)
	for i := 0; i < 150; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"type":"Nope"}`)
	}
	b.WriteString("]}}")
	ds := Validate("w.json", []byte(b.String()), testCtx)
	if len(ds) != MaxDiagnostics {
		t.Fatalf("got %d diagnostics, want %d", len(ds), MaxDiagnostics)
	}
	if last := ds[len(ds)-1].Msg; last != "51 more problems not shown" {
		t.Errorf("last message %q", last)
	}
}

// TestInputComponents: every input declares form.NAME on a screen and is refused on a widget.
func TestInputComponents(t *testing.T) {
	for name := range InputComponents {
		node := map[string]string{
			"Field":         `{"type":"Field","name":"x","label":"X"}`,
			"Switch":        `{"type":"Switch","name":"x","label":"X"}`,
			"Segmented":     `{"type":"Segmented","name":"x","label":"X","options":["a","b"]}`,
			"DateTimeField": `{"type":"DateTimeField","name":"x","label":"X","mode":"date"}`,
		}[name]
		if node == "" {
			t.Fatalf("no case for %s", name)
		}
		screen := `{"ui":1,"kind":"screen","title":"t","i18n":{"en":{"title":"t"}},"root":{"type":"Column","children":[` + node + `,{"type":"Text","text":"${form.x}"}]}}`
		for _, d := range Validate("s.json", []byte(screen), Context{Kind: "screen"}) {
			if d.Severity == diag.Error {
				t.Errorf("%s on a screen: %s", name, d)
			}
		}
		widget := `{"ui":1,"kind":"widget","title":"t","description":"d","i18n":{"en":{"title":"t","description":"d"}},"root":` + node + `}`
		bad := false
		for _, d := range Validate("w.json", []byte(widget), Context{Kind: "widget"}) {
			bad = bad || (d.Severity == diag.Error && strings.Contains(d.String(), "is for screens"))
		}
		if !bad {
			t.Errorf("%s on a widget was accepted", name)
		}
	}
}

func TestDeclaredSizes(t *testing.T) {
	for _, c := range []struct {
		doc      string
		want     string
		defaults string
	}{
		{`{"sizes":["sm","lg"]}`, "sm,lg", "sm"},
		{`{"sizes":["lg","md"]}`, "lg,md", "md"},
		{`{"sizes":["lg"]}`, "lg", "lg"},
		{`{}`, "md", "md"},
		{`{"sizes":[]}`, "md", "md"},
		{`{"sizes":["sm","xl"]}`, "md", "md"},
		{`{"sizes":"sm"}`, "md", "md"},
		{`not json`, "md", "md"},
		{`{"sizes":["sm","sm"]}`, "sm", "sm"},
	} {
		got := DeclaredSizes([]byte(c.doc))
		if strings.Join(got, ",") != c.want || DefaultSize(got) != c.defaults {
			t.Errorf("%s: %v, default %s; want %s, %s", c.doc, got, DefaultSize(got), c.want, c.defaults)
		}
	}
}
