package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/expr"
)

// TestToolTitlesInEnglish: a tool's English title (a built-in's I18n.En,
// a document's i18n.en.tools) reaches every place the web app shows a tool:
// the plugin page's list (GET /v1/ui/plugins/{id}), the assistant's tool
// table (the chat's tool rows) and a confirmation (its card), next to the
// Chinese title; a tool without an English title has none (the app then
// shows the Chinese one), and an unknown plugin or tool gives "".
func TestToolTitlesInEnglish(t *testing.T) {
	h, ts := dashboardHost(t)
	ctx := context.Background()
	uiTools := func(id string) map[string]map[string]any {
		resp, err := http.Get(ts.URL + "/v1/ui/plugins/" + id)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ui struct{ Tools []map[string]any }
		if err := json.NewDecoder(resp.Body).Decode(&ui); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, tl := range ui.Tools {
			out[tl["name"].(string)] = tl
		}
		return out
	}
	resp, err := http.Get(ts.URL + "/v1/ui/plugins/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	var ui struct{ NameEn string }
	json.NewDecoder(resp.Body).Decode(&ui)
	resp.Body.Close()
	if ui.NameEn != "Dashboard" {
		t.Errorf("dashboard's English name %q", ui.NameEn)
	}
	for _, c := range []struct{ plugin, tool, zh, en string }{
		{"dashboard", "upsertWidget", "添加或修改小组件", "Add or change a widget"},
		{"plugins", "install", "打开审核页", "Open the review sheet"},
		{"shuttle", "next", "", "Next shuttle"}, // a document: i18n.en.tools.next.title
	} {
		tl := uiTools(c.plugin)[c.tool]
		if tl == nil {
			t.Fatalf("GET /v1/ui/plugins/%s lacks %s", c.plugin, c.tool)
		}
		if tl["titleEn"] != c.en || (c.zh != "" && tl["title"] != c.zh) {
			t.Errorf("%s.%s: title %q, titleEn %q; want %q, %q", c.plugin, c.tool, tl["title"], tl["titleEn"], c.zh, c.en)
		}
	}
	tools, err := h.AgentTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, at := range tools {
		if at.Name == "dashboard__upsertWidget" {
			found = true
			if at.Title != "添加或修改小组件" || at.TitleEn != "Add or change a widget" {
				t.Errorf("agent tool: %q / %q", at.Title, at.TitleEn)
			}
		}
	}
	if !found {
		t.Fatal("dashboard__upsertWidget is not among the agent's tools")
	}
	in, _ := expr.FromJSON([]byte(`{"widget":"shuttle.next","size":"md"}`))
	res, err := h.Call(ctx, host.CallRequest{Actor: host.ActorAgent, Plugin: "dashboard", Tool: "upsertWidget", Input: in})
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmation == nil {
		t.Fatal("the assistant's write was not asked about")
	}
	b, _ := json.Marshal(res.Confirmation)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	if c["title"] != "添加或修改小组件" || c["titleEn"] != "Add or change a widget" {
		t.Errorf("confirmation: %s", b)
	}
	if got := host.ToolTitleEn(nil, "x"); got != "" {
		t.Errorf("ToolTitleEn(nil) = %q", got)
	}
	p, err := h.Plugin(ctx, "dashboard")
	if err != nil {
		t.Fatal(err)
	}
	if got := host.ToolTitleEn(p, "noSuchTool"); got != "" {
		t.Errorf("ToolTitleEn(dashboard, noSuchTool) = %q", got)
	}
}
