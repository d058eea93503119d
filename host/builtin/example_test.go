package builtin_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// GreetInput is the example tool's input: the schema comes from the tags.
type GreetInput struct {
	Name  string `json:"name" jsonschema:"who to greet" harness:"min=1,max=20,trim"`
	Times int    `json:"times,omitempty" harness:"min=1,max=3,default=1"`
}

// Greeting is the example tool's result.
type Greeting struct {
	Text string `json:"text"`
	At   int64  `json:"at"`
}

// A built-in of another package, compiled, registered with a host and
// called through Host.Call like any tool.
func ExampleCompile() {
	greet := &builtin.Plugin{
		ID: "greet", Name: "问候", Description: "向人问好的示例插件。", Version: "1.0.0",
		I18n: builtin.I18n{En: builtin.EnText{Name: "Greetings", Description: "An example that says hello.",
			Tools: map[string]builtin.ToolText{"hello": {Title: "Say hello"}}}},
		Tools: []*builtin.Tool{{
			Name: "hello", Title: "问好", Effect: plugin.EffectRead, Description: "Greets someone by name.",
			Run: builtin.Func(func(c *builtin.Context, in GreetInput) (Greeting, error) {
				text := ""
				for range in.Times {
					text += "你好," + in.Name + "。"
				}
				return Greeting{Text: text, At: c.Now.UnixMilli()}, nil
			}),
		}},
	}
	c, err := builtin.Compile(greet)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	db, _ := store.Open(context.Background(), dir)
	defer db.Close()
	now := func() time.Time { return time.UnixMilli(1_800_000_000_000) }
	h, err := host.New(db, host.WithClock(now), builtin.Option(c))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := h.InstallOfficial(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	in, _ := expr.FromJSON([]byte(`{"name":" 小明 ","times":2}`))
	res, err := h.Call(context.Background(), host.CallRequest{Actor: host.ActorAgent, Plugin: "greet", Tool: "hello", Input: in})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := expr.ToJSON(res.Value, "")
	fmt.Println(string(out))
	_, err = h.Call(context.Background(), host.CallRequest{Actor: host.ActorUser, Plugin: "greet", Tool: "hello"})
	fmt.Println(err)
	// Output:
	// {"text":"你好,小明。你好,小明。","at":1800000000000}
	// greet.hello: input.name: is required
}
