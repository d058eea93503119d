package host

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
	"github.com/pkuinfo/harness/plugin"
)

// BenchmarkToolCall compares a read tool run through the host (lookup,
// permission check, audit row) with the bare interpreter on the same
// plugin; the difference is the host's overhead (goal ≤ 1 ms, docs/PERFORMANCE.md "Host").
func BenchmarkToolCall(b *testing.B) {
	t := &testing.T{}
	e := newEnvDir(t, b.TempDir(), demo("1.0.0"))
	defer e.db.Close()
	defer e.site.srv.Close()
	ctx := context.Background()
	rv, err := e.h.Review(ctx, link)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.h.Install(ctx, link, rv.Hash); err != nil {
		b.Fatal(err)
	}
	e.h.SetMode(ctx, "demo", plugin.EffectRead, ModeAuto)
	p, err := e.h.Plugin(ctx, "demo")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("interp", func(b *testing.B) {
		o := interp.Options{KV: kvstore.NewMemory()}
		for b.Loop() {
			if _, err := interp.Run(ctx, p, "hello", nil, o); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, actor := range []Actor{ActorUser, ActorAgent} {
		b.Run("host/"+string(actor), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.h.Call(ctx, CallRequest{Actor: actor, Plugin: "demo", Tool: "hello", Turn: "t"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
