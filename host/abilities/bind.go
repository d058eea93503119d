package abilities

import (
	"context"

	"github.com/pkuinfo/harness/host"
)

// BindHost implements host.HostBinder: the Set reads declarations from h
// (Plugins) and the scheduler runs tools with h.RunTool as
// host.ActorScheduler, so the permission rules apply to scheduled runs.
func (s *Set) BindHost(h *host.Host) {
	s.plugins = h
	s.sched.runner = RunnerFunc(func(ctx context.Context, pluginID, tool string, input any) (any, error) {
		return h.RunTool(ctx, host.ActorScheduler, pluginID, tool, input)
	})
}

var _ host.HostBinder = (*Set)(nil)
