package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const testLink = "https://cloud.example.org/s/AAAAAAAAAAAAAAAAAAAAAA#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

func TestSecretLinkNeverPrints(t *testing.T) {
	l, err := ParseSecretLink(testLink)
	if err != nil {
		t.Fatal(err)
	}
	type holder struct {
		Link SecretLink
		link SecretLink
		Ptr  *SecretLink
	}
	h := holder{Link: l, link: l, Ptr: &l}
	var logBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("share", "link", l, "h", h)
	var jsonLog bytes.Buffer
	slog.New(slog.NewJSONHandler(&jsonLog, nil)).Info("share", "link", l)
	js, _ := json.Marshal(h)
	jl, _ := json.Marshal(l)
	txt, _ := l.MarshalText()
	m, _ := json.Marshal(map[SecretLink]int{l: 1})
	outputs := map[string]string{
		"String":   l.String(),
		"%v":       fmt.Sprintf("%v", l),
		"%+v":      fmt.Sprintf("%+v", l),
		"%#v":      fmt.Sprintf("%#v", l),
		"%s":       fmt.Sprintf("%s", l),
		"%q":       fmt.Sprintf("%q", l),
		"%x":       fmt.Sprintf("%x", l),
		"%X":       fmt.Sprintf("%X", l),
		"%d":       fmt.Sprintf("%d", l),
		"%v ptr":   fmt.Sprintf("%v", &l),
		"struct":   fmt.Sprintf("%v %+v %#v", h, h, h),
		"error":    fmt.Errorf("sharing %v: %w", l, errors.New("x")).Error(),
		"Sprint":   fmt.Sprint(l, h),
		"Sprintln": fmt.Sprintln(l),
		"json":     string(js),
		"json1":    string(jl),
		"text":     string(txt),
		"mapkey":   string(m),
		"slog":     logBuf.String(),
		"slogjs":   jsonLog.String(),
	}
	for name, out := range outputs {
		for _, secret := range []string{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "#k=", "AAAAAAAAAAAAAAAAAAAAAA", "\x00\x01\x02\x03", "00010203", "0x0"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s printed %q: %s", name, secret, out)
			}
		}
		if !strings.Contains(out, "[secret link]") {
			t.Errorf("%s = %q, want it to say [secret link]", name, out)
		}
	}
	if got := l.Reveal(); got != testLink {
		t.Errorf("Reveal() = %q, want %q", got, testLink)
	}
	if l.ChannelID() != "AAAAAAAAAAAAAAAAAAAAAA" || l.Origin() != "https://cloud.example.org" {
		t.Errorf("ChannelID, Origin = %q, %q", l.ChannelID(), l.Origin())
	}
}

func TestParseSecretLink(t *testing.T) {
	tests := []struct {
		name, link, reveal, err string
	}{
		{"share link", testLink, testLink, ""},
		{"after the redirect", "https://Cloud.Example.org:443/w/demo/view?c=AAAAAAAAAAAAAAAAAAAAAA#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", testLink, ""},
		{"loopback", "http://127.0.0.1:8787/s/abcdefgh#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "http://127.0.0.1:8787/s/abcdefgh#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", ""},
		{"no fragment", "https://cloud.example.org/s/AAAAAAAAAAAAAAAAAAAAAA", "", "secret link: #k must be 32 bytes of base64url"},
		{"short secret", "https://cloud.example.org/s/AAAAAAAAAAAAAAAAAAAAAA#k=AAEC", "", "secret link: #k must be 32 bytes of base64url"},
		{"padded secret", "https://cloud.example.org/s/AAAAAAAAAAAAAAAAAAAAAA#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "", "secret link: #k must be 32 bytes of base64url"},
		{"bad id", "https://cloud.example.org/s/a.b#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "", "secret link: the channel id is not a ChannelId"},
		{"other path", "https://cloud.example.org/x/AAAAAAAAAAAAAAAAAAAAAA#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "", "secret link: the path is neither /s/{id} nor /w/{plugin}/{page}?c={id}"},
		{"ftp", "ftp://cloud.example.org/s/AAAAAAAAAAAAAAAAAAAAAA#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "", "secret link: not an http(s) URL"},
		{"not a URL", "http://[::1", "", "secret link: not a URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseSecretLink(tc.link)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if !l.IsZero() {
					t.Errorf("link not zero after an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Reveal(); got != tc.reveal {
				t.Errorf("Reveal() = %q, want %q", got, tc.reveal)
			}
		})
	}
}

func TestZeroSecretLink(t *testing.T) {
	var l SecretLink
	if !l.IsZero() || l.Reveal() != "" || l.ChannelID() != "" || l.String() != "[secret link]" {
		t.Errorf("zero link: IsZero %v Reveal %q ChannelID %q String %q", l.IsZero(), l.Reveal(), l.ChannelID(), l.String())
	}
}
