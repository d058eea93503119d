package mcpx

import (
	"fmt"
	"io"
	"strings"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/msg"
)

// WriteSheet writes the review sheet of a remote plugin, shown before
// add-remote installs it (docs/HOST-API.md "Remote plugins"; seed 003 "App 会连接服务器,列出你的工具,
// 并在插件页面上显示每个工具的效果"): the plugin id, the server, whether a
// token is kept, that it is a Community plugin reaching only its server,
// each tool with its effect and starting mode, and the instructions the
// model will read. Plain text, one item a line.
func WriteSheet(w io.Writer, srv *RemoteServer, hasToken bool) error {
	return WriteSheetIn(w, srv, hasToken, msg.En)
}

// WriteSheetIn is WriteSheet in lang (msg.ZhHans or msg.En): the review sheet of a remote
// plugin in the language of the run, as the host's own sheet is.
func WriteSheetIn(w io.Writer, srv *RemoteServer, hasToken bool, lang msg.Lang) error {
	title := srv.Title
	if title == "" {
		title = srv.Name
	}
	token := lang.T(msg.RemoteNoToken)
	if hasToken {
		token = lang.T(msg.RemoteToken)
	}
	var b strings.Builder
	fmt.Fprintln(&b, lang.T(msg.RemoteHead, srv.PluginID, title, srv.Version))
	fmt.Fprintln(&b, lang.T(msg.RemoteServer, srv.URL, token))
	fmt.Fprintln(&b, lang.T(msg.RemoteReaches))
	fmt.Fprintln(&b, lang.T(msg.RemoteTools))
	modes := RemoteModes()
	for _, t := range srv.Tools {
		mode := modes[t.Effect]
		how := lang.T(msg.RemoteRunsFree)
		if mode == host.ModeAsk {
			how = lang.T(msg.RemoteAsksFirst)
		}
		fmt.Fprintf(&b, "  %-32s %-6s %-19s %s\n", ModelName(srv.PluginID, t.Name), t.Effect, how, t.Title)
	}
	fmt.Fprintln(&b, lang.T(msg.RemoteInstrs))
	for _, line := range strings.Split(RemoteInstructions(srv.PluginID, srv.Instructions), "\n") {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
