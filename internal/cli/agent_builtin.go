package cli

import (
	"github.com/pkuinfo/harness/agent/builtins"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
)

func init() {
	// The assistant's own built-ins (plugins, memory, dashboard, ui; issue
	// 13), installed with the app's other built-ins by openHost.
	RegisterHostSetup(func(*store.DB) ([]host.Option, error) {
		return []host.Option{builtin.Option(builtins.All()...)}, nil
	})
}
