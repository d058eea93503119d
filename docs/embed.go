// Package docs embeds the project documents the binary serves itself:
// PluginLanguage is docs/PLUGIN-LANGUAGE.md, which the assistant's
// plugins__reference tool returns (generated from the document,
// so it cannot drift).
package docs

import _ "embed"

// PluginLanguage is the text of PLUGIN-LANGUAGE.md, the plugin language of
// spec version 1 (seed 004).
//
//go:embed PLUGIN-LANGUAGE.md
var PluginLanguage string
