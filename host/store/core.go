package store

// The host core's tables (versions 1–99).
func init() {
	Register(Migration{Version: 1, Name: "plugins, versions and files", SQL: `
CREATE TABLE plugins (
	id           TEXT    PRIMARY KEY,
	source       TEXT    NOT NULL,          -- install link, folder, or "official:NAME"
	official     INTEGER NOT NULL,          -- 1 = Official, 0 = Community
	enabled      INTEGER NOT NULL DEFAULT 1,
	auto_update  INTEGER NOT NULL DEFAULT 1,
	current      INTEGER NOT NULL,          -- plugin_versions.seq in use
	previous     INTEGER,                   -- seq rollback restores, NULL when none
	held         INTEGER,                   -- seq of an update waiting for the user, NULL when none
	checked_at   INTEGER NOT NULL DEFAULT 0, -- Unix ms of the last update check
	installed_at INTEGER NOT NULL,          -- Unix ms
	note         TEXT    NOT NULL DEFAULT '' -- e.g. "updated to 1.3.0"
);
CREATE TABLE plugin_versions (
	plugin       TEXT    NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,          -- 1, 2, … per plugin
	version      TEXT    NOT NULL,          -- the manifest's version
	hash         TEXT    NOT NULL,          -- plugin.ContentHash of the files
	declarations TEXT    NOT NULL,          -- JSON: campus, network, abilities, tools
	fetched_at   INTEGER NOT NULL,          -- Unix ms
	PRIMARY KEY (plugin, seq)
);
CREATE TABLE plugin_files (
	plugin  TEXT    NOT NULL,
	seq     INTEGER NOT NULL,
	path    TEXT    NOT NULL,
	content BLOB    NOT NULL,
	PRIMARY KEY (plugin, seq, path),
	FOREIGN KEY (plugin, seq) REFERENCES plugin_versions(plugin, seq) ON DELETE CASCADE
);`})
	Register(Migration{Version: 2, Name: "permission modes", SQL: `
CREATE TABLE modes (
	plugin TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
	effect TEXT NOT NULL, -- read, write, money, public
	mode   TEXT NOT NULL, -- auto, ask, deny
	PRIMARY KEY (plugin, effect)
);`})
	Register(Migration{Version: 3, Name: "data-source cache", SQL: `
CREATE TABLE datasource_cache (
	plugin     TEXT    NOT NULL,
	source     TEXT    NOT NULL,
	args       TEXT    NOT NULL, -- JSON of the tool input
	value      TEXT    NOT NULL, -- JSON
	fetched_at INTEGER NOT NULL, -- Unix ms
	expires_at INTEGER NOT NULL, -- Unix ms
	PRIMARY KEY (plugin, source, args)
);`})
	Register(Migration{Version: 4, Name: "audit log", SQL: `
CREATE TABLE audit (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	at          INTEGER NOT NULL, -- Unix ms when the call started
	actor       TEXT    NOT NULL, -- user, agent, scheduler
	plugin      TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	effect      TEXT    NOT NULL,
	outcome     TEXT    NOT NULL, -- ok, error, refused, confirm
	error       TEXT    NOT NULL DEFAULT '',
	duration_us INTEGER NOT NULL
);
CREATE INDEX audit_at ON audit(at);`})
	Register(Migration{Version: 5, Name: "host settings", SQL: `
CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);`})
}
