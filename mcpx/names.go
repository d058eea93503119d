package mcpx

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// ModelNameMax is the longest tool name the common model-provider rule
// ^[A-Za-z0-9_-]{1,64}$ allows (issue 5).
const ModelNameMax = 64

// modelNameRe is the model-provider rule for tool names.
var modelNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidModelName reports whether name satisfies ^[A-Za-z0-9_-]{1,64}$.
func ValidModelName(name string) bool { return modelNameRe.MatchString(name) }

// ModelName returns the name a model sees for a plugin's tool: "<id>__<tool>"
// (seed 004 "The instructions"), made to satisfy ^[A-Za-z0-9_-]{1,64}$ by a
// stable rule:
//
//  1. every character outside [A-Za-z0-9_-] becomes "_";
//  2. a name of at most 64 characters is kept as it is;
//  3. a longer name is cut to its first 55 characters, followed by "_" and
//     the first 8 hex digits of the SHA-256 of the full name from step 1
//     (55 + 1 + 8 = 64).
//
// Plugin ids (≤ 41) and tool names (≤ 40, SPEC-DECISIONS §7) are ASCII, so
// step 1 only matters for remote tools; the hash in step 3 keeps two long
// names with the same first 55 characters apart. Callers still check the
// whole list for duplicates (Server does, and drops the later one).
func ModelName(pluginID, tool string) string {
	full := sanitize(pluginID+"__"+tool, "-")
	if len(full) <= ModelNameMax {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	return full[:55] + "_" + hex.EncodeToString(sum[:])[:8]
}

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
// of SPEC-DECISIONS §7). ok is false when nothing usable is left (an empty
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
