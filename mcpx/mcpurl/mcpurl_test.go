package mcpurl

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// The three refusals, by the input (or, for a user name, the URL shown without it).
func notHTTP(in string) string {
	return fmt.Sprintf("remote plugin %q: the URL must be http:// or https:// with a host", in)
}

func notLocal(in string) string {
	return fmt.Sprintf("remote plugin %q: use https; plain http is only for local development (localhost, loopback or private addresses)", in)
}

func withUser(shown string) string {
	return fmt.Sprintf("remote plugin %q: the URL carries a user name or password, which would be kept and shown with it: give the token with --token instead", shown)
}

// TestCheck holds Check to its rules against the URLs an attacker would try: a plain-http server
// elsewhere dressed as a local one, credentials smuggled in the URL, schemes that are not HTTP.
func TestCheck(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // the URL Check returns, when it accepts
		wantErr  string
	}{
		{"https", "https://plugin.example.com/mcp", "https://plugin.example.com/mcp", ""},
		{"https port", "https://plugin.example.com:8443/mcp", "https://plugin.example.com:8443/mcp", ""},
		{"upper-case scheme", "HTTPS://plugin.example.com/mcp", "https://plugin.example.com/mcp", ""},
		{"https to an IDN host", "https://bücher.example/mcp", "https://b%C3%BCcher.example/mcp", ""},
		{"http loopback", "http://127.0.0.1:8787/mcp", "http://127.0.0.1:8787/mcp", ""},
		{"http localhost", "http://localhost:8787/mcp", "http://localhost:8787/mcp", ""},
		{"http under .localhost", "http://demo.localhost/mcp", "http://demo.localhost/mcp", ""},
		{"http IPv6 loopback", "http://[::1]:8787/mcp", "http://[::1]:8787/mcp", ""},
		{"http IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/mcp", "http://[::ffff:127.0.0.1]/mcp", ""},
		{"http private 192.168", "http://192.168.1.20:8787/mcp", "http://192.168.1.20:8787/mcp", ""},
		{"http private 10", "http://10.0.2.2:8787/mcp", "http://10.0.2.2:8787/mcp", ""},
		{"http private 172.16", "http://172.16.0.1/mcp", "http://172.16.0.1/mcp", ""},
		{"http private fd00::/8", "http://[fd00::1]/mcp", "http://[fd00::1]/mcp", ""},
		{"fragment after a loopback host", "http://127.0.0.1#@plugin.example.com/mcp", "http://127.0.0.1#@plugin.example.com/mcp", ""},
		{"fragment dressed as a user name", "http://127.0.0.1/mcp#@plugin.example.com", "http://127.0.0.1/mcp#@plugin.example.com", ""},

		// Plain http to someone else's server.
		{"http public name", "http://plugin.example.com/mcp", "", notLocal("http://plugin.example.com/mcp")},
		{"http public IP", "http://8.8.8.8/mcp", "", notLocal("http://8.8.8.8/mcp")},
		{"localhost as a label of another domain", "http://localhost.evil.com/mcp", "", notLocal("http://localhost.evil.com/mcp")},
		{"loopback as a label of a wildcard DNS name", "http://127.0.0.1.nip.io/mcp", "", notLocal("http://127.0.0.1.nip.io/mcp")},
		{"localhost with a trailing dot", "http://localhost./mcp", "", notLocal("http://localhost./mcp")},
		{"upper-case LOCALHOST", "http://LOCALHOST/mcp", "", notLocal("http://LOCALHOST/mcp")},
		{"full-width localhost", "http://ｌｏｃａｌｈｏｓｔ/mcp", "", notLocal("http://ｌｏｃａｌｈｏｓｔ/mcp")},
		{"Cyrillic o in localhost", "http://lоcalhost/mcp", "", notLocal("http://lоcalhost/mcp")},
		{"punycode look-alike", "http://xn--lcalhost-n3a/mcp", "", notLocal("http://xn--lcalhost-n3a/mcp")},
		{"hex IPv4", "http://0x7f.0.0.1/mcp", "", notLocal("http://0x7f.0.0.1/mcp")},
		{"octal IPv4", "http://0177.0.0.1/mcp", "", notLocal("http://0177.0.0.1/mcp")},
		{"decimal IPv4", "http://2130706433/mcp", "", notLocal("http://2130706433/mcp")},
		{"short IPv4", "http://127.1/mcp", "", notLocal("http://127.1/mcp")},
		{"IPv4-mapped public", "http://[::ffff:8.8.8.8]/mcp", "", notLocal("http://[::ffff:8.8.8.8]/mcp")},
		{"link-local metadata", "http://169.254.169.254/latest", "", notLocal("http://169.254.169.254/latest")},
		{"zoned link-local", "http://[fe80::1%25eth0]/mcp", "", notLocal("http://[fe80::1%25eth0]/mcp")},
		{"unspecified IPv4", "http://0.0.0.0/mcp", "", notLocal("http://0.0.0.0/mcp")},
		{"unspecified IPv6", "http://[::]/mcp", "", notLocal("http://[::]/mcp")},
		{"shared address space", "http://100.64.0.1/mcp", "", notLocal("http://100.64.0.1/mcp")},
		{"just past 172.16/12", "http://172.32.0.1/mcp", "", notLocal("http://172.32.0.1/mcp")},
		{"public host before a fragment", "http://plugin.example.com#@127.0.0.1/mcp", "", notLocal("http://plugin.example.com#@127.0.0.1/mcp")},

		// Not an http(s) URL with a host.
		{"ftp", "ftp://x/mcp", "", notHTTP("ftp://x/mcp")},
		{"file", "file:///etc/passwd", "", notHTTP("file:///etc/passwd")},
		{"file with a host", "file://localhost/etc/passwd", "", notHTTP("file://localhost/etc/passwd")},
		{"upper-case FILE", "FILE:///etc/passwd", "", notHTTP("FILE:///etc/passwd")},
		{"javascript", "javascript:alert(1)", "", notHTTP("javascript:alert(1)")},
		{"data", "data:text/plain,hi", "", notHTTP("data:text/plain,hi")},
		{"websocket", "ws://127.0.0.1/mcp", "", notHTTP("ws://127.0.0.1/mcp")},
		{"no scheme", "//plugin.example.com/mcp", "", notHTTP("//plugin.example.com/mcp")},
		{"opaque https", "https:plugin.example.com/mcp", "", notHTTP("https:plugin.example.com/mcp")},
		{"no host", "https:///mcp", "", notHTTP("https:///mcp")},
		{"scheme only", "https://", "", notHTTP("https://")},
		{"empty", "", "", notHTTP("")},
		{"not a URL", "::", "", notHTTP("::")},
		{"leading space", " https://plugin.example.com/mcp", "", notHTTP(" https://plugin.example.com/mcp")},
		{"trailing newline", "https://plugin.example.com/mcp\n", "", notHTTP("https://plugin.example.com/mcp\n")},
		{"NUL in the host", "http://localhost%00.evil.com/mcp", "", notHTTP("http://localhost%00.evil.com/mcp")},
		{"backslash before @", `http://evil.com\@127.0.0.1/mcp`, "", notHTTP(`http://evil.com\@127.0.0.1/mcp`)},
		{"unclosed IPv6 bracket", "http://[::1/mcp", "", notHTTP("http://[::1/mcp")},
		{"port not a number", "http://localhost:abc/mcp", "", notHTTP("http://localhost:abc/mcp")},

		// A user name or password, shown without it.
		{"user and password", "https://alice:s3cret@plugin.example.com/mcp", "", withUser("https://plugin.example.com/mcp")},
		{"user on loopback", "http://tok@127.0.0.1:8787/mcp", "", withUser("http://127.0.0.1:8787/mcp")},
		{"password only", "https://:s3cret@plugin.example.com/mcp", "", withUser("https://plugin.example.com/mcp")},
		{"empty user info", "https://@plugin.example.com/mcp", "", withUser("https://plugin.example.com/mcp")},
		{"escaped user info", "https://al%40ice:s3cret%3A@plugin.example.com/mcp", "", withUser("https://plugin.example.com/mcp")},
		{"loopback as the user name", "http://127.0.0.1:s3cret@evil.example.com/mcp", "", withUser("http://evil.example.com/mcp")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := Check(tc.in)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Fatalf("Check(%q) = %q, want %q", tc.in, got, tc.wantErr)
			}
			if strings.Contains(got, "s3cret") {
				t.Errorf("Check(%q): the error shows the password: %s", tc.in, got)
			}
			if err == nil && u.String() != tc.want {
				t.Errorf("Check(%q) = %s, want %s", tc.in, u, tc.want)
			}
		})
	}
}

// FuzzCheck: whatever Check accepts is http(s) with a host and no user info, and plain http
// only to localhost, a name under .localhost, or a loopback or private IP literal; a refusal
// never shows the password.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"https://plugin.example.com/mcp", "http://127.0.0.1:8787/mcp", "http://localhost.evil.com/mcp",
		"https://alice:s3cret@plugin.example.com/mcp", "http://[::ffff:127.0.0.1]/mcp", "file:///etc/passwd", "http://127.0.0.1#@evil.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Check(raw)
		if err != nil {
			if u != nil {
				t.Fatalf("Check(%q) returned %s with the error %v", raw, u, err)
			}
			return
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			t.Fatalf("Check(%q) accepted %s", raw, u)
		}
		if u.Scheme == "http" {
			h := u.Hostname()
			ip := net.ParseIP(h)
			if h != "localhost" && !strings.HasSuffix(h, ".localhost") && (ip == nil || !(ip.IsLoopback() || ip.IsPrivate())) {
				t.Fatalf("Check(%q) accepted plain http to %q", raw, h)
			}
		}
	})
}
