package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
)

// Example installs a plugin from a folder after its review and runs its
// write tool as the agent, which must ask first (a Community plugin's write
// tools start at ask), then as the user's confirmation allows.
func Example() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "host-example")
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "memo")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "PLUGIN.md"), []byte(`---
spec: 1
id: memo
name: 备忘
description: 记一条备忘。
version: 1.0.0
author: example
tools:
  save:
    title: 记一笔
    description: Saves a note.
    effect: write
    input: { text: { type: string } }
    steps:
      - kv: set
        key: note
        value: input.text
    return: "{ saved: input.text }"
---
Use memo__save.
`), 0o644)

	db, err := store.Open(ctx, filepath.Join(tmp, "data"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	h, _ := host.New(db)

	rv, _ := h.Review(ctx, src)
	fmt.Println(rv.ID, rv.Version, "official:", rv.Official)
	if _, err := h.Install(ctx, src, rv.Hash); err != nil {
		fmt.Println(err)
		return
	}

	input, _ := expr.FromJSON([]byte(`{"text":"交作业"}`))
	res, _ := h.Call(ctx, host.CallRequest{Actor: host.ActorAgent, Plugin: "memo", Tool: "save", Input: input})
	fmt.Println("asks:", res.Confirmation.Reason)

	res, _ = h.Confirm(ctx, res.Confirmation.ID, true)
	out, _ := expr.ToJSON(res.Value, "")
	fmt.Println("after yes:", string(out))
	// Output:
	// memo 1.0.0 official: false
	// asks: write tools of this plugin are set to ask
	// after yes: {"saved":"交作业"}
}
