// Package plugins holds the official plugin documents (seed 004 §Official documents) and
// embeds them into the binary with //go:embed, so the host can install them without a network
// and `harness plugin test plugins/*` can replay their recorded tests:
//
//   - classrooms: public requests in parallel with each, aliases in constants, a widget
//   - campus-events: Treehole calendars through verify.treehole
//   - grades: a second factor by SMS or the IAAA authenticator (verify.treeholeSendCode)
//   - canteen: a shared: file, a KV cache with a stale fallback, tables with merged cells
//   - shuttle: no network; timetables as data; a widget refreshing every minute
//   - notices: a wildcard host, WeChat articles, per-page KV cache, untrusted tools, a command
//   - wallet: the campus card through the card session; amounts in yuan from fen; a money top-up
//   - netfee: the ITS network account (its own sign-in), HTML labels with full-width spaces
//   - treehole: posts and comments through verify.treehole, untrusted
//
// Each document is an ordinary plugin folder (PLUGIN.md, tools/, shared.yaml, widgets/, tests/,
// README.md); the Go files here only embed and test them.
package plugins

import (
	"embed"
	"io/fs"
)

//go:embed classrooms campus-events grades canteen shuttle notices wallet netfee treehole
var files embed.FS

// Names lists the official documents, in the order of seed 004 §Official documents; each is a
// folder of FS.
var Names = []string{"classrooms", "campus-events", "grades", "canteen", "shuttle", "notices", "wallet", "netfee", "treehole"}

// FS returns the embedded documents: one folder per name in Names, laid out as in this
// directory of the repository (tests and READMEs included; the app loads only the files a
// PLUGIN.md names).
func FS() fs.FS { return files }

// Dir returns the embedded folder of one document, or an error wrapping fs.ErrNotExist for a
// name not in Names.
func Dir(name string) (fs.FS, error) {
	for _, n := range Names {
		if n == name {
			return fs.Sub(files, name)
		}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
