// Package campus is the host's campus client (issue 4 "Campus client"; seed
// 004 "What the plugin declares": campus). It implements interp.CampusClient:
// a plugin's `campus: SERVICE` request carries only a path, and the client
// resolves it against the service's base URL and signs it with the session
// the host holds for that service, so the plugin never sees a password, a
// cookie or a token.
//
// There is one adapter (Service) per campus service of the seed's list
// (plugin.CampusServices): card, its, treehole, blackboard, elective, cwfw,
// cwpay, bdkj, library and library-space. Each knows its base URL and how
// it signs a request (headers, cookies, fixed parameters), after
// ../shared/protocols/pku-services.md §1.1, §5.1 and §8.1.
//
// Sessions are stored per service (Sessions: in memory, or SQLite in the
// host's database, migration 200). `harness campus login SERVICE --cookie …
// | --token …` stores one; the IAAA sign-in flow comes later. A request for
// a service without a session fails with NotSignedInError, whose text is
// "not signed in to SERVICE: run harness campus login SERVICE". Cookies a
// service sets in its replies are merged into the stored session, as a
// cookie jar would keep them.
package campus
