package host

import "github.com/pkuinfo/harness/host/store"

// The roll-forward slot: the version a Rollback replaced, which Rollforward restores.
func init() {
	store.Register(store.Migration{Version: 30, Name: "plugin version a rollback left (rollforward)", SQL: `
ALTER TABLE plugins ADD COLUMN forward INTEGER; -- seq Rollforward restores, NULL when none`})
}
