package builtin

import (
	"context"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// echoIn is the input of the benchmark's echo tools.
type echoIn struct {
	Text string `json:"text" harness:"max=100"`
}

// echoOut is the built-in echo's result.
type echoOut struct {
	Text string `json:"text"`
}

// kvOut is the built-in counter's result.
type kvOut struct {
	N float64 `json:"n"`
}

var benchBuiltin = &Plugin{
	ID: "bench-builtin", Name: "基准", Description: "基准测试用的内置插件。", Version: "1.0.0",
	I18n: I18n{En: EnText{Name: "Benchmark", Description: "A built-in for benchmarks."}},
	Tools: []*Tool{
		{Name: "echo", Title: "回声", Effect: plugin.EffectRead, Description: "Returns its input.",
			Run: Func(func(_ *Context, in echoIn) (echoOut, error) { return echoOut(in), nil })},
		{Name: "read", Title: "读", Effect: plugin.EffectRead, Description: "Reads a KV entry.",
			Run: Func(func(c *Context, _ Empty) (kvOut, error) {
				var out kvOut
				_, err := c.KV.Get("n", &out.N)
				return out, err
			})},
	},
}

var benchDocument = map[string]string{
	"PLUGIN.md": `---
spec: 1
id: bench-doc
name: 基准
description: 基准测试用的插件文档。
version: 1.0.0
author: someone
tools:
  echo: tools/echo.yaml
  read: tools/read.yaml
i18n:
  en: { name: Benchmark, description: A document for benchmarks., tools: { echo: { title: Echo }, read: { title: Read } } }
---
`,
	"tools/echo.yaml": `title: 回声
description: Returns its input.
effect: read
input:
  text: { type: string, max: 100 }
return: "{ text: input.text }"
`,
	"tools/read.yaml": `title: 读
description: Reads a KV entry.
effect: read
steps:
  - let: n
    kv: get
    key: "'n'"
return: "{ n: n }"
`,
}

// BenchmarkBuiltinVsDocument runs the same two tools, a built-in's and a
// document's, through Host.Call as the user and as the agent: echo (input
// check, the call's rules, the audit row) and read (one KV read). The
// built-in must cost no more than the document (docs/PERFORMANCE.md).
func BenchmarkBuiltinVsDocument(b *testing.B) {
	t := &testing.T{}
	e := newEnvWith(b, MustCompile(benchBuiltin))
	installDoc(t, e, benchDocument)
	ctx := context.Background()
	for _, id := range []string{"bench-builtin", "bench-doc"} {
		if err := e.db.KV().Set(ctx, id, "n", kvEntry(7)); err != nil {
			b.Fatal(err)
		}
	}
	in := expr.NewObject(1)
	in.Set("text", "高数")
	for _, tool := range []string{"echo", "read"} {
		for _, kind := range []struct{ name, id string }{{"builtin", "bench-builtin"}, {"document", "bench-doc"}} {
			for _, actor := range []host.Actor{host.ActorUser, host.ActorAgent} {
				b.Run(tool+"/"+kind.name+"/"+string(actor), func(b *testing.B) {
					req := host.CallRequest{Actor: actor, Plugin: kind.id, Tool: tool, Turn: "t"}
					if tool == "echo" {
						req.Input = in
					}
					for b.Loop() {
						if _, err := e.h.Call(ctx, req); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkBuiltinVsDocumentInterleaved alternates a built-in's and a
// document's call of the same tool in one loop, timing each, so that load
// on a shared machine weighs on both alike; it reports each kind's ns per
// call and their ratio (builtin/document, at most 1 is the goal), in wall
// time and in process CPU time (which load from other processes does not
// inflate).
func BenchmarkBuiltinVsDocumentInterleaved(b *testing.B) {
	t := &testing.T{}
	e := newEnvWith(b, MustCompile(benchBuiltin))
	installDoc(t, e, benchDocument)
	ctx := context.Background()
	for _, id := range []string{"bench-builtin", "bench-doc"} {
		if err := e.db.KV().Set(ctx, id, "n", kvEntry(7)); err != nil {
			b.Fatal(err)
		}
	}
	in := expr.NewObject(1)
	in.Set("text", "高数")
	for _, tool := range []string{"echo", "read"} {
		b.Run(tool, func(b *testing.B) {
			var tb, td time.Duration
			var cb, cd int64 // process CPU ns
			reqB := host.CallRequest{Actor: host.ActorAgent, Plugin: "bench-builtin", Tool: tool, Turn: "t"}
			reqD := host.CallRequest{Actor: host.ActorAgent, Plugin: "bench-doc", Tool: tool, Turn: "t"}
			if tool == "echo" {
				reqB.Input, reqD.Input = in, in
			}
			n := 0
			for b.Loop() {
				first, second, t1, t2, c1, c2 := reqB, reqD, &tb, &td, &cb, &cd
				if n%2 == 1 { // alternate which goes first
					first, second, t1, t2, c1, c2 = reqD, reqB, &td, &tb, &cd, &cb
				}
				s, sc := time.Now(), processCPU()
				if _, err := e.h.Call(ctx, first); err != nil {
					b.Fatal(err)
				}
				m, mc := time.Now(), processCPU()
				if _, err := e.h.Call(ctx, second); err != nil {
					b.Fatal(err)
				}
				*t1 += m.Sub(s)
				*t2 += time.Since(m)
				*c1 += mc - sc
				*c2 += processCPU() - mc
				n++
			}
			b.ReportMetric(float64(tb.Nanoseconds())/float64(n), "builtin-ns/call")
			b.ReportMetric(float64(td.Nanoseconds())/float64(n), "document-ns/call")
			b.ReportMetric(float64(tb)/float64(td), "builtin/document")
			b.ReportMetric(float64(cb)/float64(n), "builtin-cpu-ns/call")
			b.ReportMetric(float64(cd)/float64(n), "document-cpu-ns/call")
			if cd > 0 {
				b.ReportMetric(float64(cb)/float64(cd), "builtin/document-cpu")
			}
		})
	}
}
