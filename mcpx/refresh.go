package mcpx

import (
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/plugin"
)

// Refresh decides whether a remote plugin's refreshed tool list cur may replace old, the list
// the person reviewed, under the plugin's modes. The rule: a refresh that would let a tool run
// without asking is not applied. held names, in cur's order, each tool of cur that would be
// asked about less than it was on old:
//
//   - a tool whose name old does not have (new, or renamed) and whose effect's mode runs it
//     without asking;
//   - a tool whose claimed effect changed to one with a freer mode (auto < ask < deny), e.g. a
//     write tool that now says readOnlyHint.
//
// apply is true when held is empty. Removing tools, making an effect stricter, and changing
// titles, descriptions, input schemas or the server's own tool names do not hold a refresh:
// none lets a call run that asked before, since the host decides by effect and mode alone. A
// mode that is neither ask nor deny counts as auto, as host.Decide runs it. Refresh is pure: it
// reads its arguments and changes nothing.
func Refresh(modes map[plugin.Effect]host.Mode, old, cur []RemoteTool) (apply bool, held []string) {
	was := map[string]plugin.Effect{}
	for _, t := range old {
		was[t.Name] = t.Effect
	}
	for _, t := range cur {
		e, ok := was[t.Name]
		if (!ok && strictness(modes[t.Effect]) == 0) || (ok && strictness(modes[t.Effect]) < strictness(modes[e])) {
			held = append(held, t.Name)
		}
	}
	return len(held) == 0, held
}

// strictness orders modes as host.Decide treats them: deny refuses, ask asks, anything else
// runs.
func strictness(m host.Mode) int {
	switch m {
	case host.ModeDeny:
		return 2
	case host.ModeAsk:
		return 1
	}
	return 0
}
