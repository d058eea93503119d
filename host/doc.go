// Package host is the app side of PKU harness without the chat and the
// screens (docs/HOST-API.md): it keeps the installed plugins in one SQLite database
// (package host/store), shows what a plugin may reach before it is
// installed, updates it by the seed's rules, decides who may run which tool,
// and runs tools with the host's KV, campus client and abilities.
//
//   - Install (seed 004 "Install links"): Review fetches and validates a
//     link, a folder or a bundled document and returns the review sheet
//     (Review.Sheet in zh-Hans or en); Install installs exactly the content
//     that was reviewed, by content hash. InstallOfficial installs the
//     bundled official documents (package plugins) on first start.
//   - Updates (seed 004 "Updates"): Update, AutoUpdate (at most once a day,
//     per-plugin switch), AcceptUpdate for a held widening update, Rollback.
//   - Permissions (docs/HOST-API.md "Tools and permissions"; seed 003 "工具与 schema"): a Mode per plugin per
//     effect; actors user, agent and scheduler; Decide is the whole rule.
//     Call returns a Confirmation when the agent must ask; userOnly tools are
//     refused to the agent and the scheduler; an untrusted result — every
//     result of a Community or remote plugin (seed 004 "Install links"), and
//     of an Official tool declaring untrusted — taints the agent's turn,
//     after which durable writes need confirmation; a turn that holds
//     untrusted or private data (TurnState) asks before any call that can
//     reach a third party (Reach), and a scheduled run is refused it. A
//     document the assistant drew (NoteDrawn) is decided under the turn
//     that drew it (docs/HOST-API.md "Tools and permissions").
//   - Data sources (seed 004 "Optional fields"): DataSource caches a plugin's
//     dataSources per plugin, source and arguments for their ttl and reports
//     the value, its fetch time and whether it is stale.
//   - The audit log records every call: who, what, effect, outcome,
//     duration.
//
// Remote plugins (kind "remote", docs/HOST-API.md "Remote plugins") come from a Remotes that package
// mcpx gives New with WithRemotes: List, Show, AgentTools, Call, Confirm,
// Modes, SetMode, SetEnabled and Remove treat them as Community plugins
// whose tools are all untrusted.
//
// Built-in plugins (kind "builtin", seed 003 "内置插件") are Go compiled
// into the app and registered with WithBuiltins: each is a *plugin.Plugin
// describing it as a document would (no steps) plus a Go function per
// tool. InstallOfficial installs them as Official plugins (source
// "builtin:ID"); List, Show, Review, Modes, DataSource, AgentTools, Call and
// Confirm treat them as documents, and Call runs the Go function after the
// same input check instead of the interpreter. Package host/builtin is the
// API to write them.
//
// Host abilities (interp.Abilities) and the campus client
// (interp.CampusClient) are given to New as options; they live in
// host/abilities and host/campus. The JSON API over all of this is package
// host/api.
package host
