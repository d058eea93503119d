// Package plugin reads declarative plugins: the PLUGIN.md manifest, its tools (inline or in tool
// files), the shared constants and functions, and the widget and screen files it names. It is the
// "decode → validate" half of the plugin language; package interp runs what this package loads.
//
// Stages:
//
//   - The YAML layer (yaml.go) parses each file into go.yaml.in/yaml/v3 nodes after checking its
//     size, and refuses anchors, aliases, tags, merge keys and duplicate keys. Every decoded field
//     keeps its position.
//   - The decoder (decode.go) turns nodes into Manifest, Tool and Step values, parsing every
//     expression and template with the plugin's expr.Env.
//   - The validator (validate.go) checks every rule of the seed and docs/DECISIONS.md §7, including
//     names in scope (§4), and reports all problems at once as Diagnostics
//     ("FILE:LINE:COL: step: message").
//   - The loader (load.go, fetch.go) reads a plugin from a folder or from any install link of the
//     seed's table through a Fetcher, reading only the files the frontmatter names.
//
// Expression positions are mapped back to the YAML file, whatever the scalar style (plain, quoted,
// literal or folded block), and offset by the frontmatter's place in PLUGIN.md.
package plugin
