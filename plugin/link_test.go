package plugin

import (
	"net/url"
	"testing"
)

func TestResolveLink(t *testing.T) {
	raw := "https://raw.githubusercontent.com/"
	tests := []struct {
		name, link     string
		manifest, base string
		official       bool
	}{
		{"github folder", "https://github.com/alice/plugins/tree/main/rooms",
			raw + "alice/plugins/main/rooms/PLUGIN.md", raw + "alice/plugins/main/rooms/", false},
		{"github folder, trailing slash", "https://github.com/alice/plugins/tree/v1.2/a/b/",
			raw + "alice/plugins/v1.2/a/b/PLUGIN.md", raw + "alice/plugins/v1.2/a/b/", false},
		{"github ref root", "https://github.com/alice/rooms/tree/main",
			raw + "alice/rooms/main/PLUGIN.md", raw + "alice/rooms/main/", false},
		{"github repository root", "https://github.com/alice/rooms",
			raw + "alice/rooms/HEAD/PLUGIN.md", raw + "alice/rooms/HEAD/", false},
		{"github repository root .git", "https://www.github.com/alice/rooms.git/",
			raw + "alice/rooms/HEAD/PLUGIN.md", raw + "alice/rooms/HEAD/", false},
		{"github file", "https://github.com/alice/plugins/blob/main/rooms/PLUGIN.md",
			raw + "alice/plugins/main/rooms/PLUGIN.md", raw + "alice/plugins/main/rooms/", false},
		{"official folder", "https://github.com/pkuinfo/pku-harness-plugins/tree/main/plugins/classrooms",
			raw + "pkuinfo/pku-harness-plugins/main/plugins/classrooms/PLUGIN.md", raw + "pkuinfo/pku-harness-plugins/main/plugins/classrooms/", true},
		{"raw github file", raw + "pkuinfo/pku-harness-plugins/main/plugins/shuttle/PLUGIN.md",
			raw + "pkuinfo/pku-harness-plugins/main/plugins/shuttle/PLUGIN.md", raw + "pkuinfo/pku-harness-plugins/main/plugins/shuttle/", true},
		{"official repository, a fork's commit (GitHub serves it under the parent's name)",
			"https://github.com/pkuinfo/pku-harness-plugins/tree/0123456789abcdef0123456789abcdef01234567/plugins/classrooms",
			raw + "pkuinfo/pku-harness-plugins/0123456789abcdef0123456789abcdef01234567/plugins/classrooms/PLUGIN.md",
			raw + "pkuinfo/pku-harness-plugins/0123456789abcdef0123456789abcdef01234567/plugins/classrooms/", false},
		{"official repository, a pull request's file", "https://github.com/pkuinfo/pku-harness-plugins/blob/refs/pull/7/head/plugins/x/PLUGIN.md",
			raw + "pkuinfo/pku-harness-plugins/refs/pull/7/head/plugins/x/PLUGIN.md", raw + "pkuinfo/pku-harness-plugins/refs/pull/7/head/plugins/x/", false},
		{"official repository, raw, another branch", raw + "pkuinfo/pku-harness-plugins/dev/plugins/shuttle/PLUGIN.md",
			raw + "pkuinfo/pku-harness-plugins/dev/plugins/shuttle/PLUGIN.md", raw + "pkuinfo/pku-harness-plugins/dev/plugins/shuttle/", false},
		{"official repository, raw, refs/heads/main", raw + "pkuinfo/pku-harness-plugins/refs/heads/main/plugins/shuttle/PLUGIN.md",
			raw + "pkuinfo/pku-harness-plugins/refs/heads/main/plugins/shuttle/PLUGIN.md", raw + "pkuinfo/pku-harness-plugins/refs/heads/main/plugins/shuttle/", true},
		{"official repository, outside plugins/", "https://github.com/pkuinfo/pku-harness-plugins/tree/main/templates/x",
			raw + "pkuinfo/pku-harness-plugins/main/templates/x/PLUGIN.md", raw + "pkuinfo/pku-harness-plugins/main/templates/x/", false},
		{"official repository root", "https://github.com/pkuinfo/pku-harness-plugins",
			raw + "pkuinfo/pku-harness-plugins/HEAD/PLUGIN.md", raw + "pkuinfo/pku-harness-plugins/HEAD/", false},
		{"official file link", "https://github.com/PKUinfo/pku-harness-plugins/blob/main/plugins/grades/PLUGIN.md",
			raw + "PKUinfo/pku-harness-plugins/main/plugins/grades/PLUGIN.md", raw + "PKUinfo/pku-harness-plugins/main/plugins/grades/", true},
		{"gist raw", "https://gist.githubusercontent.com/bob/abc123/raw/PLUGIN.md",
			"https://gist.githubusercontent.com/bob/abc123/raw/PLUGIN.md", "https://gist.githubusercontent.com/bob/abc123/raw/", false},
		{"own server with query and fragment", "https://plugins.example.org/rooms/PLUGIN.md?v=3#top",
			"https://plugins.example.org/rooms/PLUGIN.md?v=3", "https://plugins.example.org/rooms/", false},
		{"deep link", "pkuharness://plugin?src=" + url.QueryEscape("https://github.com/alice/plugins/tree/main/rooms"),
			raw + "alice/plugins/main/rooms/PLUGIN.md", raw + "alice/plugins/main/rooms/", false},
		{"deep link to a file URL", "pkuharness://plugin?src=" + url.QueryEscape("https://example.org/p/PLUGIN.md"),
			"https://example.org/p/PLUGIN.md", "https://example.org/p/", false},
		{"spaces around", "  https://github.com/alice/rooms  ",
			raw + "alice/rooms/HEAD/PLUGIN.md", raw + "alice/rooms/HEAD/", false},
		{"http to loopback (a local folder during development)", "http://127.0.0.1:8099/demo/PLUGIN.md",
			"http://127.0.0.1:8099/demo/PLUGIN.md", "http://127.0.0.1:8099/demo/", false},
		{"http to localhost", "HTTP://LocalHost:8000/PLUGIN.md",
			"http://LocalHost:8000/PLUGIN.md", "http://LocalHost:8000/", false},
		{"http to ::1", "http://[::1]:8000/a/PLUGIN.md",
			"http://[::1]:8000/a/PLUGIN.md", "http://[::1]:8000/a/", false},
		{"escaped path segment", "https://github.com/alice/plugins/tree/main/空闲 教室",
			raw + "alice/plugins/main/%E7%A9%BA%E9%97%B2%20%E6%95%99%E5%AE%A4/PLUGIN.md", raw + "alice/plugins/main/%E7%A9%BA%E9%97%B2%20%E6%95%99%E5%AE%A4/", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ResolveLink(tc.link)
			if err != nil {
				t.Fatal(err)
			}
			if l.Manifest != tc.manifest || l.Base != tc.base || l.Official != tc.official {
				t.Errorf("ResolveLink(%q) =\n  %+v\nwant\n  {Manifest:%s Base:%s Official:%v}", tc.link, l, tc.manifest, tc.base, tc.official)
			}
		})
	}
}

func TestResolveLinkErrors(t *testing.T) {
	tests := []struct{ link, want string }{
		{"http://github.com/alice/rooms", `link "http://github.com/alice/rooms": only https links are allowed (http only to localhost, 127.0.0.0/8 or [::1])`},
		{"http://10.0.0.1/p/PLUGIN.md", `link "http://10.0.0.1/p/PLUGIN.md": only https links are allowed (http only to localhost, 127.0.0.0/8 or [::1])`},
		{"http://localhost.example.org/PLUGIN.md", `link "http://localhost.example.org/PLUGIN.md": only https links are allowed (http only to localhost, 127.0.0.0/8 or [::1])`},
		{"http://127.0.0.1.nip.io/PLUGIN.md", `link "http://127.0.0.1.nip.io/PLUGIN.md": only https links are allowed (http only to localhost, 127.0.0.0/8 or [::1])`},
		{"pkuharness://plugin?src=" + url.QueryEscape("http://127.0.0.1:8000/p/PLUGIN.md"), `link "http://127.0.0.1:8000/p/PLUGIN.md": only https links are allowed (http only to localhost, 127.0.0.0/8 or [::1])`},
		{"http://127.0.0.1:8000/p/", `link "http://127.0.0.1:8000/p/": an https link must end in /PLUGIN.md (or be a GitHub folder, repository or file link)`},
		{"http://user:pw@localhost/PLUGIN.md", `link "http://user:pw@localhost/PLUGIN.md": credentials in links are not allowed`},
		{"github.com/alice/rooms", `link "github.com/alice/rooms": not a URL (use https://… or pkuharness://plugin?src=…)`},
		{"ftp://example.org/PLUGIN.md", `link "ftp://example.org/PLUGIN.md": unsupported scheme ftp (use https)`},
		{"https://github.com/alice", `link "https://github.com/alice": a GitHub link needs an owner and a repository`},
		{"https://github.com/alice/rooms/issues/3", `link "https://github.com/alice/rooms/issues/3": unsupported GitHub link (use …/OWNER/REPO, …/tree/REF/PATH or …/blob/REF/PATH/PLUGIN.md)`},
		{"https://github.com/alice/rooms/blob/main/README.md", `link "https://github.com/alice/rooms/blob/main/README.md": a GitHub file link must point at PLUGIN.md`},
		{"https://github.com/alice/rooms/tree/main/../x", `link "https://github.com/alice/rooms/tree/main/../x": the path may not contain ..`},
		{"https://example.org/rooms/", `link "https://example.org/rooms/": an https link must end in /PLUGIN.md (or be a GitHub folder, repository or file link)`},
		{"https://user:pw@example.org/PLUGIN.md", `link "https://user:pw@example.org/PLUGIN.md": credentials in links are not allowed`},
		{"pkuharness://plugin", `link "pkuharness://plugin": pkuharness://plugin needs src=<url-encoded link>`},
		{"pkuharness://plugin?src=" + url.QueryEscape("pkuharness://plugin?src=x"), `link "pkuharness://plugin?src=x": a pkuharness:// link cannot wrap another`},
		{"pkuharness://settings?src=x", `link "pkuharness://settings?src=x": expected pkuharness://plugin?src=…`},
	}
	for _, tc := range tests {
		t.Run(tc.link, func(t *testing.T) {
			l, err := ResolveLink(tc.link)
			if err == nil {
				t.Fatalf("ResolveLink(%q) = %+v, want an error", tc.link, l)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n  %s\nwant\n  %s", err, tc.want)
			}
		})
	}
}

func TestCheckRelPath(t *testing.T) {
	tests := []struct{ in, clean, err string }{
		{"tools/free.yaml", "tools/free.yaml", ""},
		{"./tools//free.yaml", "tools/free.yaml", ""},
		{"a/./b.yaml", "a/b.yaml", ""},
		{"", "", "empty path"},
		{"../x.yaml", "", `path "../x.yaml": paths may not contain ".."`},
		{"a/../b.yaml", "", `path "a/../b.yaml": paths may not contain ".."`},
		{"/abs.yaml", "", `path "/abs.yaml": paths are relative to the plugin folder`},
		{`a\b.yaml`, "", `path "a\\b.yaml": use / between folders`},
		{"C:x.yaml", "", `path "C:x.yaml": paths are relative to the plugin folder, not URLs`},
		{"x.yaml?raw=1", "", `path "x.yaml?raw=1": paths may not contain ? or #`},
		{"./", "", `path "./" names the plugin folder, not a file`},
		{"x.yaml#top", "", `path "x.yaml#top": paths may not contain ? or #`},
		{"%2e%2e/t.yaml", "", `path "%2e%2e/t.yaml": paths may not contain %; write the file name as it is, not URL-encoded`},
		{"tools/a%20b.yaml", "", `path "tools/a%20b.yaml": paths may not contain %; write the file name as it is, not URL-encoded`},
		{"a\x00.yaml", "", `path "a\x00.yaml": paths may not contain control characters`},
		{"a\n.yaml", "", `path "a\n.yaml": paths may not contain control characters`},
		{"a\u0085.yaml", "", `path "a\u0085.yaml": paths may not contain control characters`},
	}
	for _, tc := range tests {
		got, err := checkRelPath(tc.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.clean || gotErr != tc.err {
			t.Errorf("checkRelPath(%q) = %q, %q; want %q, %q", tc.in, got, gotErr, tc.clean, tc.err)
		}
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.8.9.10": true,
		"::1": true, "::ffff:127.0.0.1": true, "0.0.0.0": false, "::": false,
		"10.0.0.1": false, "192.168.1.1": false, "169.254.169.254": false, "example.org": false,
		"localhost.example.org": false, "127.0.0.1.nip.io": false, "127.1": false,
		"fe80::1%lo": false, "::1%lo": false, "": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
