package abilities

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/plugin"
)

// BenchmarkCall measures one ability call through Set.Call, with the
// declaration and effect checks, for a pure op, a database write and a
// database read (a fresh SQLite database in a temporary directory).
func BenchmarkCall(b *testing.B) {
	for _, bc := range []struct{ name, op, args string }{
		{"crypto.sha256", "crypto.sha256", `{"text":"hello"}`},
		{"todos.setDone", "todos.setDone", `{"id":1}`},
		{"todos.list", "todos.list", `{"limit":10}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, _ := newBenchSet(b)
			add := interp.AbilityCall{Plugin: "p", Tool: "t", Group: "todos", Op: "add", Args: mustJSON(b, `{"title":"bench"}`), ToolEffect: plugin.EffectWrite}
			if _, err := s.Call(context.Background(), add); err != nil {
				b.Fatal(err)
			}
			op, _ := plugin.LookupAbility(bc.op)
			args := mustJSON(b, bc.args)
			c := interp.AbilityCall{Plugin: "p", Tool: "t", Group: op.Group, Op: op.Op, Args: args, ToolEffect: plugin.EffectWrite}
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Call(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
