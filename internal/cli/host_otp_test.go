package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/plugin"
)

// `harness serve` runs a due schedule through the host as the scheduler
// actor and the tool's to-do appears in the shared database.
func TestServeRunsSchedules(t *testing.T) {
	old := schedulerTick
	schedulerTick = 50 * time.Millisecond
	defer func() { schedulerTick = old }()

	site, data := t.TempDir(), t.TempDir()
	files := map[string]string{
		"later/PLUGIN.md": "---\nspec: 1\nid: later\nname: 稍后提醒\ndescription: 过一会儿加一条待办。\nversion: 1.0.0\nauthor: tester\n" +
			"abilities: [scheduler, todos]\ntools:\n  soon: tools/soon.yaml\n  note: tools/note.yaml\n---\nUse later__soon.\n",
		"later/tools/soon.yaml": "title: 稍后\ndescription: Schedules note shortly.\neffect: write\n" +
			"steps:\n  - let: s\n    ability: scheduler.create\n    args: \"{ tool: 'note', input: { text: '喝水' }, at: now + 300 }\"\nreturn: s.id\n",
		"later/tools/note.yaml": "title: 记待办\ndescription: Adds a to-do.\neffect: write\ninput:\n  text: { type: string }\n" +
			"steps:\n  - let: t\n    ability: todos.add\n    args: \"{ title: input.text }\"\nreturn: t.id\n",
	}
	for p, b := range files {
		os.MkdirAll(filepath.Join(site, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(site, p), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	h, db, err := openHost(ctx, &hostFlags{data: data})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(site, "later")
	rv, err := h.Review(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, dir, rv.Hash); err != nil {
		t.Fatal(err)
	}
	if err := h.SetMode(ctx, "later", plugin.EffectWrite, host.ModeAuto); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RunTool(ctx, host.ActorUser, "later", "soon", nil); err != nil {
		t.Fatal(err)
	}
	db.Close()

	sctx, stop := context.WithCancel(ctx)
	var out, errb bytes.Buffer
	ready := make(chan string, 1)
	code := make(chan int, 1)
	go func() {
		code <- Serve(sctx, &Env{Args: []string{"--data", data, "--addr", "127.0.0.1:0", "--no-update"},
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, ready)
	}()
	select {
	case <-ready:
	case c := <-code:
		t.Fatalf("serve exited %d: %s", c, errb.String())
	}
	_, db2, err := openHost(ctx, &hostFlags{data: data})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	deadline := time.Now().Add(10 * time.Second)
	var items []*abilities.Todo
	for time.Now().Before(deadline) {
		items, _, err = abilities.Todos(ctx, db2, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if c := <-code; c != ExitOK {
		t.Errorf("serve exited %d: %s", c, errb.String())
	}
	if len(items) != 1 || items[0].Title != "喝水" || items[0].Plugin != "later" {
		t.Fatalf("todos after serve: %+v", items)
	}
}
