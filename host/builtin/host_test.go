package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
)

func TestInstalledLikeDocuments(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in, err := e.h.Show(ctx, "focus")
	if err != nil {
		t.Fatal(err)
	}
	if in.Kind != host.KindBuiltin || !in.Official || in.Source != "builtin:focus" || in.Version != Focus.Version || in.Problem != "" {
		t.Errorf("focus installed as %+v", in)
	}
	list, err := e.h.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, p := range list {
		kinds[p.ID] = p.Kind
	}
	for _, d := range Definitions() {
		if kinds[d.ID] != host.KindBuiltin {
			t.Errorf("%s listed with kind %q", d.ID, kinds[d.ID])
		}
	}
	if kinds["canteen"] != "" {
		t.Errorf("a document listed with kind %q", kinds["canteen"])
	}
	// A second start installs nothing and changes nothing.
	out, err := e.h.InstallOfficial(ctx)
	if err != nil || len(out) != 0 {
		t.Errorf("second InstallOfficial: %v %v", out, err)
	}
	// The review sheet is the documents' one.
	rv, err := e.h.Review(ctx, "builtin:focus")
	if err != nil {
		t.Fatal(err)
	}
	sheet := rv.Sheet(host.LangEn)
	for _, want := range []string{"Focus (focus 0.1.0, by pkuinfo)", "Official", "start [write] Start focusing", "today [read] Focus today"} {
		if !strings.Contains(sheet, want) {
			t.Errorf("review sheet lacks %q:\n%s", want, sheet)
		}
	}
	if _, err := e.h.Review(ctx, "builtin:nope"); err == nil {
		t.Error("a review of an unknown built-in succeeded")
	}
	// Removed stays removed, like an official document.
	if err := e.h.Remove(ctx, "focus"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.h.Show(ctx, "focus"); err == nil {
		t.Error("a removed built-in came back")
	}
}

func TestAgentToolsAndSchema(t *testing.T) {
	e := newEnv(t)
	tools, err := e.h.AgentTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var start *host.AgentTool
	for i := range tools {
		if tools[i].Name == "focus__start" {
			start = &tools[i]
		}
	}
	if start == nil {
		t.Fatal("focus__start is not offered to the agent")
	}
	b, _ := json.Marshal(start.InputSchema)
	want := `{"additionalProperties":false,"properties":{"label":{"description":"what the user focuses on, e.g. \"高数作业\"","maxLength":40,"type":"string"}},"required":[],"type":"object"}`
	if string(b) != want {
		t.Errorf("schema\n got %s\nwant %s", b, want)
	}
	if start.Effect.String() != "write" || start.Mode != host.ModeAsk || !strings.Contains(start.Instructions, "focus__start") {
		t.Errorf("focus__start = %+v", start)
	}
}

func TestDataSourceCached(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	v1, err := e.h.DataSource(ctx, "focus", "today", false)
	if err != nil {
		t.Fatal(err)
	}
	e.ok(t, host.ActorUser, "focus", "start", `{"label":"x"}`)
	e.clk.set(bj(9, 0).Add(30 * time.Second))
	v2, err := e.h.DataSource(ctx, "focus", "today", false)
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, v2.Value) != jsonOf(t, v1.Value) || !v2.FetchedAt.Equal(v1.FetchedAt) {
		t.Errorf("within the ttl the cached value should come back: %s then %s", jsonOf(t, v1.Value), jsonOf(t, v2.Value))
	}
	e.clk.set(bj(9, 5))
	v3, err := e.h.DataSource(ctx, "focus", "today", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(jsonOf(t, v3.Value), `"minutes":5`) {
		t.Errorf("after the ttl: %s", jsonOf(t, v3.Value))
	}
}
