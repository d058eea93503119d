package host

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ModelNameMax is the longest tool name the common model-provider rule
// ^[A-Za-z0-9_-]{1,64}$ allows.
const ModelNameMax = 64

// ModelName returns the name a model sees for a plugin's tool: "<id>__<tool>"
// (seed 004 "The instructions"), made to satisfy ^[A-Za-z0-9_-]{1,64}$ by a
// stable rule, shared by the MCP server (package mcpx) and the assistant
// (package agent):
//
//  1. every character outside [A-Za-z0-9_-] becomes "_";
//  2. a name of at most 64 characters is kept as it is;
//  3. a longer name is cut to its first 55 characters, followed by "_" and
//     the first 8 hex digits of the SHA-256 of the full name from step 1
//     (55 + 1 + 8 = 64).
//
// Plugin ids (≤ 41) and tool names (≤ 40, docs/DECISIONS.md §7) are ASCII, so
// step 1 only matters for remote tools; the hash in step 3 keeps two long
// names with the same first 55 characters apart. Callers still check the
// whole list for duplicates.
func ModelName(pluginID, tool string) string {
	full := sanitizeName(pluginID + "__" + tool)
	if len(full) <= ModelNameMax {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	return full[:55] + "_" + hex.EncodeToString(sum[:])[:8]
}

// sanitizeName replaces every character outside [A-Za-z0-9_-] with "_"
// (a multi-byte character becomes one "_").
func sanitizeName(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
