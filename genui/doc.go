// Package genui defines the generative-UI document format of plugin widgets and screens
// (seed 004 §Layout: "widgets/overview.json # dashboard widget: generative-UI spec + bindings";
// docs/GENUI.md is the reference) and the catalogue of host components those documents may use.
//
// A document is versioned JSON:
//
//	{ "ui": 1, "kind": "widget" | "screen", "title", "description", "sizes", "refresh",
//	  "strings", "data": { NAME: { "source" } | { "tool", "args", "ttl" } }, "root": NODE }
//
// A node is an object whose "type" names a catalogue component; its other keys are the
// component's props. String props are templates in the plugin expression language
// (docs/DECISIONS.md §3) over data.*, the list item, t.* (the strings table in the viewer's
// language) and host.size, host.locale and host.now; "when" hides a node when falsy.
//
// The catalogue is defined once, in Go (Catalog). The JSON Schema (Schema), the component table
// of docs/GENUI.md (MarkdownTable) and the text an assistant reads (DescribeCatalog) are all
// generated from it, so they cannot drift apart. Validate checks a document against the
// catalogue and against the data sources and tools of the plugin that ships it, reporting every
// problem with its JSON path and FILE:LINE:COL.
package genui
