// Package campus is the host's campus client and sign-in (docs/HOST-API.md
// "Campus sign-in"; seed 004 "What the plugin declares": campus; seed 003
// "从 pkucli 移植"). It implements interp.CampusClient: a plugin's `campus:
// SERVICE` request carries only a path, and the client resolves it against
// the service's base URL and signs it with the session the host holds for
// that service, so the plugin never sees a password, a cookie or a token.
//
// There is one signing adapter (Service) and one sign-in adapter (Hop) per
// campus service of the seed's list (plugin.CampusServices): card, its,
// treehole, blackboard, elective, cwfw, cwpay, bdkj, library and
// library-space, after docs/CAMPUS-PROTOCOLS.md §1.1, §2, §5, §8
// and §9. Where the facts are thin the adapter says what it assumes.
//
// Sign-in: IAAA (password with RSA PKCS#1 v1.5 and the authenticator's
// code, QR with polling, authenticator binding in two halves around its
// SMS) gives a one-time token per service, and the service's Hop exchanges
// it for a session, each sign-in in its own cookie jar, following no
// redirects. ITS signs in with its own account. Signer drives both and
// stores the sessions; it also renews an expired session once, with the
// password the person let the host remember (Accounts), for the client.
//
// Sessions are stored per service (Sessions: in memory, or SQLite in the
// host's database, migrations 200 and 210) with their tokens and cookies
// sealed by host/vault; accounts and a pending binding are sealed too
// (migration 212). A request for a service without a usable session fails
// with NotSignedInError, "not signed in to SERVICE: …: run harness campus
// login SERVICE". Cookies a service sets in its replies are merged into the
// stored session, as a cookie jar would keep them; a request to one of the
// service's own sign-in steps is therefore refused (only the host signs in).
//
// The stand-ins in package campustest follow the same facts, so every flow
// is tested without the real services.
package campus
