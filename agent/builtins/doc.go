// Package builtins holds the assistant's own built-in plugins (docs/HOST-API.md
// "Conversations (the assistant)", docs/BUILTIN-PLUGINS.md), on the built-in kind of package
// host/builtin:
//
//   - plugins: the authoring tools of seed 003 "让 AI 帮你写插件"
//     (reference, validate, tryTool, source, install, installRemote) and
//     use, which loads a plugin's onDemand tools; all onDemand but use.
//   - memory: remember, recall, forget; its context() gives the model the
//     memories that bear on the message.
//   - dashboard: upsertWidget, removeWidget, list: the dashboard's state,
//     which the web app draws.
//   - ui: render, a genui document shown in the chat.
//
// All returns them compiled; the CLI registers them with every Host.
package builtins
