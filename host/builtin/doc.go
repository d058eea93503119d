// Package builtin is the built-in plugin kind (seed 003 "内置插件"): Go
// plugins compiled into the app, the counterpart of the seed's definePlugin.
// A Plugin value carries the manifest (id, name, version, icon, i18n.en),
// typed tools (Func derives each input's JSON Schema from a Go struct once),
// data sources, genui widgets and screens, settings rows, slash commands,
// instructions, a context function, a Cloud declaration and legacy
// renames. Compile turns it into a *host.Builtin, which host.WithBuiltins
// registers: the host installs it as an Official plugin, lists, reviews,
// permission-checks, audits and serves it (MCP, /v1/tools) exactly as a
// PLUGIN.md document, through Host.Call.
//
// The app's own built-ins live here too: focus (the seed's worked
// example), todos, timetable, schedule and authenticator, each the tool
// face of the host ability of the same name, sharing its store. All
// returns them. docs/BUILTIN-PLUGINS.md walks through writing one.
package builtin
