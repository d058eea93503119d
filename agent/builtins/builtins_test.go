package builtins

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
)

// The reference is docs/PLUGIN-LANGUAGE.md exactly (embedded by package
// docs), so plugins__reference cannot drift.
func TestReferenceIsTheDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/PLUGIN-LANGUAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != referenceDoc {
		t.Fatal("the reference is not docs/PLUGIN-LANGUAGE.md")
	}
	ref, err := Reference("")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := Reference("standard library")
	if err != nil || !strings.HasPrefix(lib, "## Standard library\n") || strings.Contains(ref, "## Standard library\n") {
		t.Errorf("the standard library section: %v %.40q", err, lib)
	}
	if _, err := Reference("nope"); err == nil || !strings.Contains(err.Error(), "Standard library") {
		t.Errorf("unknown section: %v", err)
	}
	for _, want := range []string{"## Manifest", "## Steps and limits", "## Generative UI catalogue", "Button"} {
		if !strings.Contains(ref, want) {
			t.Errorf("reference lacks %q", want)
		}
	}
	if strings.Contains(ref, "## Author CLI") || len(ref) > 64<<10 {
		t.Errorf("reference has the author CLI or is %d bytes (over what a tool result carries)", len(ref))
	}
}

func newHost(t *testing.T) *host.Host {
	t.Helper()
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, beijing)
	h, err := host.New(db, host.WithClock(func() time.Time { return now }), builtin.Option(All()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

func call(t *testing.T, h *host.Host, pluginID, tool, input string) (string, error) {
	t.Helper()
	in, err := expr.FromJSON([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Call(context.Background(), host.CallRequest{Actor: host.ActorUser, Plugin: pluginID, Tool: tool, Input: in})
	if err != nil {
		return "", err
	}
	b, _ := expr.ToJSON(res.Value, "")
	return string(b), nil
}

// Drafts as an attacker would send them: each is refused with a clear
// issue, never a panic or a partial install.
func TestValidateDrafts(t *testing.T) {
	h := newHost(t)
	cases := []struct{ name, input, want string }{
		{"no PLUGIN.md", `{"files":{"tools/a.yaml":"title: x"}}`, `"ok":false`},
		{"empty", `{"files":{}}`, `files is empty`},
		{"escaping path", `{"files":{"PLUGIN.md":"---\nspec: 1\nid: x1\nname: x\ndescription: d\nversion: 1.0.0\nauthor: a\ntools:\n  a: ../../etc/passwd\n---\n"}}`, `"ok":false`},
		{"bad yaml", `{"files":{"PLUGIN.md":"---\n: : :\n---\n"}}`, `"ok":false`},
		{"good", `{"files":{"PLUGIN.md":"---\nspec: 1\nid: hello\nname: 你好\ndescription: 打个招呼。\nversion: 1.0.0\nauthor: a\ntools:\n  hi: tools/hi.yaml\n---\nSay hi.\n","tools/hi.yaml":"title: 打招呼\ndescription: Use to greet. Returns { hi }.\neffect: read\nreturn: '{ hi: 1 }'\n"}}`, `"ok":true,"id":"hello"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := call(t, h, "plugins", "validate", tc.input)
			if err != nil {
				out = err.Error()
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("got %s, want %q in it", out, tc.want)
			}
		})
	}
}

func TestTryToolRefusesWrites(t *testing.T) {
	h := newHost(t)
	draft := `{"PLUGIN.md":"---\nspec: 1\nid: w1\nname: 写\ndescription: 写入数据。\nversion: 1.0.0\nauthor: a\ntools:\n  put: tools/put.yaml\n---\n","tools/put.yaml":"title: 写入\ndescription: Use to write. Returns { ok }.\neffect: write\nreturn: '{ ok: true }'\n"}`
	_, err := call(t, h, "plugins", "tryTool", `{"files":`+draft+`,"tool":"put"}`)
	if err == nil || !strings.Contains(err.Error(), "put is a write tool; only read tools of a draft can be tried") {
		t.Fatalf("err = %v", err)
	}
	_, err = call(t, h, "plugins", "tryTool", `{"files":`+draft+`,"tool":"nope"}`)
	if err == nil || !strings.Contains(err.Error(), `the draft has no tool "nope" (it has put)`) {
		t.Fatalf("err = %v", err)
	}
}

func TestMemory(t *testing.T) {
	h := newHost(t)
	for _, text := range []string{"我住 45 楼", "I like 学五 canteen", "my bike is blue"} {
		if _, err := call(t, h, "memory", "remember", `{"text":"`+text+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	out, err := call(t, h, "memory", "recall", `{"query":"哪个楼"}`)
	if err != nil || !strings.HasPrefix(out, `{"memories":[{"id":"m1796090400000","text":"我住 45 楼"`) {
		t.Fatalf("recall: %s %v", out, err)
	}
	c := builtin.Of(h, "memory")
	text, err := builtin.RunContext(context.Background(), h, c, "bike")
	if err != nil || !strings.Contains(text, "my bike is blue") || !strings.Contains(text, "我住 45 楼") {
		t.Fatalf("context: %q %v", text, err)
	}
	if _, err := call(t, h, "memory", "forget", `{"id":"nope"}`); err == nil || !strings.Contains(err.Error(), "没有编号为 nope 的记忆") {
		t.Errorf("forget unknown: %v", err)
	}
}

func TestRenderRefusesBadDocuments(t *testing.T) {
	h := newHost(t)
	for _, doc := range []string{`{"ui":2,"kind":"screen","title":"x","root":{"type":"Text","text":"a"}}`,
		`{"ui":1,"kind":"screen","title":"x","root":{"type":"Script","src":"alert(1)"}}`} {
		if _, err := call(t, h, "ui", "render", `{"document":`+doc+`}`); err == nil || !strings.Contains(err.Error(), "the document has errors") {
			t.Errorf("%s: err = %v", doc, err)
		}
	}
}

func TestInstallRemoteChecksTheURL(t *testing.T) {
	h := newHost(t)
	for _, tc := range []struct{ url, want string }{
		{"http://evil.example.com/mcp", "http"},
		{"ftp://x/mcp", "ftp"},
		{"https://canteen.example.org/mcp", `"opened":true`},
		{"http://127.0.0.1:8787/mcp", `"opened":true`},
	} {
		out, err := call(t, h, "plugins", "installRemote", `{"url":"`+tc.url+`"}`)
		if err != nil {
			out = err.Error()
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: %s", tc.url, out)
		}
		list, _ := h.List(context.Background())
		for _, in := range list {
			if in.Kind == host.KindRemote {
				t.Fatalf("installRemote added %s", in.ID)
			}
		}
	}
}

// A card takes only a size its widget declares: an undeclared size is refused with the allowed
// ones named (nothing stored), an omitted size is md when declared, else the first declared.
func TestUpsertWidgetSizes(t *testing.T) {
	h := newHost(t)
	doc := func(sizes string) string {
		d := `{"ui":1,"kind":"widget","title":"时刻","description":"d","i18n":{"en":{"title":"Times"}},` + sizes + `"data":{"x":{"source":"tool"}},"root":{"type":"Text","text":"${data.x.routes[0].name}"}}`
		b, _ := json.Marshal(d)
		return string(b)
	}
	cases := []struct{ name, input, want string }{
		{"declared sm", `{"widget":"netfee.status","size":"sm"}`, `"size":"sm"`},
		{"undeclared lg", `{"widget":"netfee.status","size":"lg"}`, `widget netfee.status does not come in size lg; it declares sm, md`},
		{"default md", `{"widget":"treehole.latest"}`, `"size":"md"`},
		{"undeclared sm", `{"widget":"treehole.latest","size":"sm"}`, `it declares md, lg`},
		{"unknown size", `{"widget":"treehole.latest","size":"xl"}`, `size`},
		{"document first size", `{"document":` + doc(`"sizes":["lg","sm"],`) + `,"tool":"shuttle.timetable"}`, `"size":"lg"`},
		{"document undeclared", `{"document":` + doc(`"sizes":["lg","sm"],`) + `,"tool":"shuttle.timetable","size":"md"}`, `this document does not come in size md; it declares lg, sm`},
		{"document without sizes", `{"document":` + doc(``) + `,"tool":"shuttle.timetable","size":"sm"}`, `it declares md`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := call(t, h, "dashboard", "upsertWidget", tc.input)
			if err != nil {
				out = err.Error()
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("got %s, want %q in it", out, tc.want)
			}
		})
	}
	// Changing a card to an undeclared size leaves it as it was.
	out, err := call(t, h, "dashboard", "list", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var b Board
	if err := json.Unmarshal([]byte(out), &b); err != nil || len(b.Widgets) != 3 {
		t.Fatalf("board: %s %v", out, err)
	}
	id := b.Widgets[0].ID
	if _, err := call(t, h, "dashboard", "upsertWidget", `{"id":"`+id+`","widget":"netfee.status","size":"lg"}`); err == nil {
		t.Fatal("an undeclared size was stored")
	}
	if out2, _ := call(t, h, "dashboard", "list", `{}`); out2 != out {
		t.Fatalf("the board changed: %s", out2)
	}
}
