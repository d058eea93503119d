// Package mcpurl checks the endpoint of a remote plugin (an MCP server over Streamable HTTP)
// before anything connects to it or keeps it. It imports nothing but the standard library, so
// that a face which only checks a URL the model or a person typed (the assistant's
// plugins.installRemote, the settings routes) need not link the MCP SDK that package mcpx
// brings.
package mcpurl

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Check checks a remote plugin's endpoint (seed 003 "4. 部署": "生产环境必须使用 HTTPS,纯 HTTP
// 只用于本地开发") and returns it parsed:
//
//   - the scheme is https, or http, with a host;
//   - plain http only to this machine or the local network: the name localhost or one under
//     .localhost, or a loopback or private IP literal (a name that merely starts like one, such
//     as localhost.example.com or 127.0.0.1.nip.io, is someone else's server);
//   - no user name or password, which would be kept and listed with the URL; a token goes
//     apart.
//
// The error says which rule failed, and never shows the user name or password.
func Check(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("remote plugin %q: the URL must be http:// or https:// with a host", raw)
	}
	if u.User != nil {
		// It would be stored and listed with the URL (GET /v1/remote-plugins, list-remote).
		shown := *u
		shown.User = nil
		return nil, fmt.Errorf("remote plugin %q: the URL carries a user name or password, which would be kept and shown with it: give the token with --token instead", shown.String())
	}
	if u.Scheme == "http" {
		h := u.Hostname()
		ip := net.ParseIP(h)
		local := h == "localhost" || strings.HasSuffix(h, ".localhost") || (ip != nil && (ip.IsLoopback() || ip.IsPrivate()))
		if !local {
			return nil, fmt.Errorf("remote plugin %q: use https; plain http is only for local development (localhost, loopback or private addresses)", raw)
		}
	}
	return u, nil
}
