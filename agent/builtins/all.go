package builtins

import (
	"sync"

	"github.com/pkuinfo/harness/host/builtin"
)

// Definitions returns the assistant's built-ins in the order the system
// prompt lists them.
func Definitions() []*builtin.Plugin {
	return []*builtin.Plugin{Plugins, Memory, Dashboard, UI}
}

// All returns the assistant's built-ins, compiled once per process. It
// panics when one does not compile, which the package's tests rule out.
func All() []*builtin.Compiled { return compiled() }

var compiled = sync.OnceValue(func() []*builtin.Compiled {
	defs := Definitions()
	out := make([]*builtin.Compiled, len(defs))
	for i, p := range defs {
		out[i] = builtin.MustCompile(p)
	}
	return out
})
