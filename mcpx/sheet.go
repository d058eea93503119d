package mcpx

import (
	"fmt"
	"io"
	"strings"

	"github.com/pkuinfo/harness/host"
)

// WriteSheet writes the review sheet of a remote plugin, shown before
// add-remote installs it (issue 5; seed 003 "App 会连接服务器,列出你的工具,
// 并在插件页面上显示每个工具的效果"): the plugin id, the server, whether a
// token is kept, that it is a Community plugin reaching only its server,
// each tool with its effect and starting mode, and the instructions the
// model will read. Plain text, one item a line.
func WriteSheet(w io.Writer, srv *RemoteServer, hasToken bool) error {
	title := srv.Title
	if title == "" {
		title = srv.Name
	}
	token := "no token"
	if hasToken {
		token = "bearer token kept by the host, never shown to the model"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Remote plugin %s — %s %s (Community)\n", srv.PluginID, title, srv.Version)
	fmt.Fprintf(&b, "Server:   %s (%s)\n", srv.URL, token)
	fmt.Fprintf(&b, "Reaches:  that server only; it never gets your campus session or password\n")
	fmt.Fprintf(&b, "Tools:\n")
	modes := RemoteModes()
	for _, t := range srv.Tools {
		mode := modes[t.Effect]
		how := "runs without asking"
		if mode == host.ModeAsk {
			how = "asks you first"
		}
		fmt.Fprintf(&b, "  %-32s %-6s %-19s %s\n", ModelName(srv.PluginID, t.Name), t.Effect, how, t.Title)
	}
	fmt.Fprintf(&b, "Instructions for the assistant:\n")
	for _, line := range strings.Split(RemoteInstructions(srv.PluginID, srv.Instructions), "\n") {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
