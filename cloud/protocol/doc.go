// Package protocol is PKU harness Cloud protocol v1 as Go: every wire schema of seed 003
// (“# 通道(所有者)” to the end: channels, devices and auth, functions, meta, pages, peers, push,
// store) as types that validate the seed's patterns and bounds, and the cryptography both ends
// share:
//
//   - envelopes: XChaCha20-Poly1305, 24-byte random nonce, base64url without padding, `v: 1`
//     (Seal, Open);
//   - HKDF-SHA-256 derivations with the seed's info strings: the join key (authKey) and the
//     encryption key (encKey) from a share secret k, and the per-peer key
//     HKDF(X25519 ‖ encKey, salt = chanPub ‖ peerPub, info = "pku-harness-cloud/v1/peer");
//   - JoinHash = base64url(sha256(authKey));
//   - the registration proof of work (SolvePow, VerifyPow);
//   - the auth challenge signed with the device's Ed25519 key (SignAuthChallenge,
//     VerifyAuthChallenge).
//
// The package depends on the standard library and golang.org/x/crypto only; the reference server
// (cloud/server) and the client (cloud/client) share nothing else. testdata/vectors.json holds
// fixed inputs and the exact bytes they must produce, so any other implementation (the JS viewer)
// can check itself.
package protocol
