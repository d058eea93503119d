// Package registry is the marketplace's side of publishing (seed 003
// "发布", "Publish"): the registry format (registry/registry.json: one
// entry per plugin with id, name, author, kind document|remote|builtin,
// icon, requires, scopes, tags, the cloud declaration copied verbatim, and
// its link or MCP endpoint) and Validate, the seed's validate-registry; and
// Scan, what the marketplace does with a submitted repository: find every
// PLUGIN.md under a folder, validate each, check paths and declarations,
// and build the review sheet students will see.
package registry
