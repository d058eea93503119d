package cli

import (
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
)

func init() {
	// The app's own built-in plugins (seed 003 "内置插件"), installed with
	// the official documents by openHost.
	RegisterHostSetup(func(*store.DB) ([]host.Option, error) {
		return []host.Option{builtin.Option(builtin.All()...)}, nil
	})
}
