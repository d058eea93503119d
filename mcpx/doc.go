// Package mcpx connects PKU harness to the Model Context Protocol in both
// directions (docs/HOST-API.md: /mcp and "Remote plugins"), with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk/mcp):
//
//   - Server (server.go, http.go, stdio.go): the host's tools for any MCP
//     client, over stdio (`harness mcp`, behind the line filter Stdio) or
//     Streamable HTTP with sessions (`/mcp` on `harness serve`; a client
//     without a session is one turn by its token or address). It lists the tools the assistant may use under model
//     names "<id>__<tool>" (ModelName keeps them within the providers'
//     ^[A-Za-z0-9_-]{1,64}$), with plain JSON Schemas (PlainSchema), asks the
//     person through elicitation for tools in ask mode, and returns results
//     as structuredContent plus JSON text.
//   - Remote plugins (remote.go, registry.go): a remote plugin is an MCP
//     server over Streamable HTTP (seed 003 §快速上手:远程插件). Describe
//     connects and maps its tools by the seed's rules (RemoteToolName,
//     RemotePluginID, effect from readOnlyHint, RemoteInstructions);
//     CallRemote calls one and maps the result (RemoteValue). Registry keeps
//     installed remote plugins and their tokens in the host's database.
//     Refresh (refresh.go) is the rule for a refreshed tool list: one that
//     would let a tool run without asking is held, not applied. The URL
//     rule is the leaf package mcpurl.
//
// The server reaches the host through the Backend interface; HostBackend is
// the adapter over *host.Host. The Registry, given to the host as its
// host.Remotes (Registry.HostRemotes), makes remote plugins a kind of host
// plugin: listed, permission-checked and audited by the host, which itself
// knows nothing of MCP (docs/ARCHITECTURE.md).
package mcpx
