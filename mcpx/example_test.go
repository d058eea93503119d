package mcpx_test

import (
	"fmt"

	"github.com/pkuinfo/harness/mcpx"
)

// ExampleModelName shows the model names of a plugin tool, a remote tool,
// and a name over 64 characters.
func ExampleModelName() {
	fmt.Println(mcpx.ModelName("shuttle", "next"))
	id, _ := mcpx.RemotePluginID("demo-canteen")
	fmt.Println(mcpx.ModelName(id, mcpx.RemoteToolName("reserveSeat")))
	fmt.Println(mcpx.ModelName("a-plugin-id-that-is-long-enough-to-matter", "aToolNameThatIsAlsoQuiteLongForTestingIt"))
	// Output:
	// shuttle__next
	// mcp-demo-canteen__reserveSeat
	// a-plugin-id-that-is-long-enough-to-matter__aToolNameTha_282a0dd6
}
