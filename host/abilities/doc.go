// Package abilities implements the host abilities (seed 004 "Host
// abilities"; docs/HOST-API.md "Host abilities"): one interp.Abilities, Set, that serves every group
// and operation of plugin.Abilities with its fixed effect. Set.Call checks,
// before anything runs, that the operation is in the catalogue, that the
// plugin declares its group in `abilities` (when the Set knows the plugins)
// and that the operation's effect is not stronger than the calling tool's;
// every refusal or failure is an *interp.Error of kind "ability" whose
// message starts with "ability GROUP.OP:".
//
// One file per group:
//
//	todos.go      todos.list (read); add, update, setDone, remove (write)
//	timetable.go  timetable.get (read); upsert, remove (write)
//	scheduler.go  scheduler.list (read); create, update, remove (write),
//	              and Scheduler.RunDue for the `harness serve` loop
//	otp.go        otp.code (read): RFC 6238 with github.com/pquerna/otp
//	crypto.go     crypto.sha256 (read)
//	open.go       browser.open, campusPage.open (read): an open_url result
//	client.go     files.pick, sms.awaitCode (read): a needs_input result
//	verify.go     verify.treehole (read), verify.treeholeSendCode (write)
//	cloud.go      cloud.call (read): a server function through host/cloud
//
// State lives in the host's SQLite database (package host/store,
// migrations 100–199), so a CLI command and a running `harness serve` see
// the same to-dos, timetable, schedules, authenticator secret and pending
// Treehole check. The result shapes are documented in docs/HOST-API.md
// ("Host abilities").
package abilities
