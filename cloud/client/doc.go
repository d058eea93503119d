// Package client is the device side of PKU harness Cloud protocol v1 (seed 003, “# PKU harness
// Cloud”, “# 插件指南” and the API reference from “# 通道(所有者)” on): what the host runs on
// behalf of each plugin, and what a viewer runs after opening a share link.
//
// A Client talks to one provider. Its device identity (Ed25519 signing key, X25519 box key and a
// device-local secret for end-to-end store keys) is registered once with a proof of work and
// kept through an IdentityStore. Plugin scopes a Client to one plugin and a set of services:
// it mints 10-minute tokens from signed challenges and refreshes them before they expire or when
// the server answers 401. Through a Plugin:
//
//   - Store is the key-value store, optionally end-to-end encrypted (the server keeps only
//     envelopes), with ifVersion optimistic concurrency and TTLs;
//   - OpenChannel opens a relay channel: it makes the share secret, sends only joinHash, the
//     channel public key and sealed meta, and keeps an owner WebSocket that reconnects with
//     exponential backoff and jitter. Frames are sealed per peer.
//
// Join is the viewer side: from a SecretLink it reads the sealed meta, joins with an ephemeral
// X25519 key and exchanges frames sealed with the per-peer key.
//
// A SecretLink never prints its URL: String, GoString, Format, MarshalJSON, MarshalText and
// LogValue all give “[secret link]”; only Reveal returns it, for the host's QR code and share
// sheet.
//
// Every call takes a context; HTTP requests and streams never rely on http.Client.Timeout.
// Errors from the server are *protocol.Error values (use errors.As or IsCode) wrapped with the
// method and path of the request that failed.
package client
