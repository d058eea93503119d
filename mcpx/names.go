package mcpx

import (
	"regexp"
	"strings"

	"github.com/pkuinfo/harness/host"
)

// ModelNameMax is the longest tool name the common model-provider rule
// ^[A-Za-z0-9_-]{1,64}$ allows: host.ModelNameMax.
const ModelNameMax = host.ModelNameMax

// modelNameRe is the model-provider rule for tool names.
var modelNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidModelName reports whether name satisfies ^[A-Za-z0-9_-]{1,64}$.
func ValidModelName(name string) bool { return modelNameRe.MatchString(name) }

// ModelName returns the name a model sees for a plugin's tool: "<id>__<tool>"
// made to satisfy ^[A-Za-z0-9_-]{1,64}$; it is host.ModelName, the one
// rule the MCP server and the assistant share.
func ModelName(pluginID, tool string) string { return host.ModelName(pluginID, tool) }

// sanitize replaces every byte outside [A-Za-z0-9_] and the extra
// characters in keep with "_". A multi-byte character becomes one "_".
func sanitize(s, keep string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r < 128 && strings.ContainsRune(keep, r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// RemoteNameMax is where a remote tool's name is cut (seed 003: "超过 40
// 个字符的部分会被截掉").
const RemoteNameMax = 40

// RemoteToolName is a remote tool's name inside its plugin (seed 003
// §快速上手:远程插件 "2. 编写真正的工具"): characters outside
// [A-Za-z0-9_] become "_", and the result is cut at 40 characters. The tool
// id is "mcp-<name>.<tool>" and the model name ModelName("mcp-<name>", tool).
// An empty name gives "_".
func RemoteToolName(name string) string {
	s := sanitize(name, "")
	if len(s) > RemoteNameMax {
		s = s[:RemoteNameMax]
	}
	if s == "" {
		s = "_"
	}
	return s
}

// RemotePluginID is the plugin id of a remote server named serverName:
// "mcp-" and the name lower-cased, with characters outside [a-z0-9-] as
// "-", cut so that the id has at most 41 characters (the registry id rule
// of docs/DECISIONS.md §7). ok is false when nothing usable is left (an empty
// or all-punctuation name).
func RemotePluginID(serverName string) (id string, ok bool) {
	var b strings.Builder
	for _, r := range strings.ToLower(serverName) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 41-len("mcp-") {
		s = strings.TrimRight(s[:41-len("mcp-")], "-")
	}
	if s == "" {
		return "", false
	}
	return "mcp-" + s, true
}
