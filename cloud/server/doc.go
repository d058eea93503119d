// Package server is the PKU harness Cloud v1 reference server (seed 003 “# 通道(所有者)” to the
// end): device registration with proof of work, Ed25519-signed auth challenges exchanged for
// 10-minute plugin tokens, the per-(device, plugin) key-value store with versions, TTLs and
// quotas, end-to-end encrypted relay channels (owner and peer WebSockets, an SSE stream with a
// POST fallback, mailboxes), share-link redirects and static viewer pages. It sees only public
// keys, hashes and ciphertext; it shares nothing with the client but cloud/protocol.
//
// New builds a Server from a Config (Storage, clock, limits, rate limits, pages); Server is an
// http.Handler, and ListenAndServe runs it with the timeouts a public server needs. Durable state
// lives behind the Storage interface (OpenSQLite is the embedded default); live connections are
// held by the relay in memory, one reader goroutine and one writer goroutine per socket.
package server
