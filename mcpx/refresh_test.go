package mcpx

import (
	"reflect"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/plugin"
)

// TestRefresh plays the server that wants, after its review, a tool to run without asking, and
// the refreshes that must still go through.
func TestRefresh(t *testing.T) {
	read, write := plugin.EffectRead, plugin.EffectWrite
	tool := func(name string, e plugin.Effect) RemoteTool {
		return RemoteTool{Name: name, Remote: name, Title: name, Description: "Does " + name + ".", Effect: e,
			InputSchema: map[string]any{"type": "object"}}
	}
	reviewed := []RemoteTool{tool("menu", read), tool("pay", write)}
	def := RemoteModes() // read auto, write ask
	writeAuto := RemoteModes()
	writeAuto[write] = host.ModeAuto
	readDeny := RemoteModes()
	readDeny[read] = host.ModeDeny
	allAsk := map[plugin.Effect]host.Mode{read: host.ModeAsk, write: host.ModeAsk}
	with := func(ts []RemoteTool, f func(*RemoteTool)) []RemoteTool {
		out := append([]RemoteTool(nil), ts...)
		f(&out[1]) // pay
		return out
	}

	tests := []struct {
		name  string
		modes map[plugin.Effect]host.Mode
		old   []RemoteTool
		cur   []RemoteTool
		held  []string
	}{
		{"unchanged", def, reviewed, reviewed, nil},
		{"write now claims readOnlyHint", def, reviewed, with(reviewed, func(t *RemoteTool) { t.Effect = read }), []string{"pay"}},
		{"adds a read tool", def, reviewed, append(reviewed, tool("wipe", read)), []string{"wipe"}},
		{"adds a write tool, which asks", def, reviewed, append(reviewed, tool("refund", write)), nil},
		{"renames the write tool and claims read", def, reviewed, []RemoteTool{tool("menu", read), tool("pay2", read)}, []string{"pay2"}},
		{"renames by case and claims read", def, reviewed, []RemoteTool{tool("menu", read), tool("Pay", read)}, []string{"Pay"}},
		{"renames the write tool, still write", def, reviewed, []RemoteTool{tool("menu", read), tool("pay2", write)}, nil},
		{"lists the old name twice, the second read", def, reviewed, append(reviewed, tool("pay", read)), []string{"pay"}},
		{"swaps the two effects", def, reviewed, []RemoteTool{tool("menu", write), tool("pay", read)}, []string{"pay"}},
		{"removes a tool", def, reviewed, reviewed[:1], nil},
		{"removes every tool", def, reviewed, nil, nil},
		{"read becomes write (stricter)", def, reviewed, []RemoteTool{tool("menu", write), tool("pay", write)}, nil},
		{"changes the input schema", def, reviewed, with(reviewed, func(t *RemoteTool) {
			t.InputSchema = map[string]any{"type": "object", "properties": map[string]any{"to": map[string]any{"type": "string"}}}
		}), nil},
		{"changes the title and description", def, reviewed, with(reviewed, func(t *RemoteTool) {
			t.Title, t.Description = "Show the menu", "Shows the menu."
		}), nil},
		{"points the name at another server tool", def, reviewed, with(reviewed, func(t *RemoteTool) { t.Remote = "pay_all" }), nil},
		{"nothing reviewed, a read tool", def, nil, []RemoteTool{tool("menu", read)}, []string{"menu"}},

		// The person's modes, not the default ones, say what runs without asking.
		{"write at auto: a new write tool", writeAuto, reviewed, append(reviewed, tool("refund", write)), []string{"refund"}},
		{"write at auto: write to read, both auto", writeAuto, reviewed, with(reviewed, func(t *RemoteTool) { t.Effect = read }), nil},
		{"read at deny: write to read", readDeny, reviewed, with(reviewed, func(t *RemoteTool) { t.Effect = read }), nil},
		{"read at deny: a new read tool", readDeny, reviewed, append(reviewed, tool("wipe", read)), nil},
		{"read at deny: read to write, which asks", readDeny, reviewed, []RemoteTool{tool("menu", write), tool("pay", write)}, []string{"menu"}},
		{"all ask: write to read", allAsk, reviewed, with(reviewed, func(t *RemoteTool) { t.Effect = read }), nil},
		{"all ask: a new read tool", allAsk, reviewed, append(reviewed, tool("wipe", read)), nil},

		// An effect with no mode runs without asking in host.Decide: it is held.
		{"a new tool of an effect without a mode", allAsk, reviewed, append(reviewed, tool("send", plugin.EffectPublic)), []string{"send"}},
		{"no modes at all: write to read", nil, reviewed, with(reviewed, func(t *RemoteTool) { t.Effect = read }), nil},
		{"no modes at all: a new tool", nil, reviewed, append(reviewed, tool("wipe", write)), []string{"wipe"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			apply, held := Refresh(tc.modes, tc.old, tc.cur)
			if !reflect.DeepEqual(held, tc.held) || apply != (len(tc.held) == 0) {
				t.Errorf("Refresh = %v, %q; want %v, %q", apply, held, len(tc.held) == 0, tc.held)
			}
		})
	}
}
