package cli

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/agent/mock"
	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
)

// TestDefaultPortsDistinct: the servers the README starts side by side (the host, the Cloud
// server, the demo remote plugin, the mock model) listen on distinct default addresses, and the README's port
// map names each one.
func TestDefaultPortsDistinct(t *testing.T) {
	fs := flag.NewFlagSet("cloud serve", flag.ContinueOnError)
	cloud := *cloudServeFlags(fs).addr
	addrs := map[string]string{"harness serve": DefaultServeAddr, "harness cloud serve": cloud, "demo-canteen": canteen.DefaultAddr, "harness model mock": mock.DefaultAddr}
	seen := map[string]string{}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range addrs {
		if other, dup := seen[a]; dup {
			t.Errorf("%s and %s both default to %s", name, other, a)
		}
		seen[a] = name
		port := a[strings.LastIndexByte(a, ':')+1:]
		if !strings.Contains(string(readme), "| "+port+" |") {
			t.Errorf("README's port map lacks %s (%s)", port, name)
		}
	}
}
