package client

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// redacted is all a SecretLink ever prints.
const redacted = "[secret link]"

// SecretLink is a channel's share link, https://{provider}/s/{id}#k={secret} (seed 003
// “# 插件指南”, “展示分享链接”). Anyone holding it can join the channel and read its frames, so
// it never prints: String, GoString, Format (every verb), MarshalJSON, MarshalText and LogValue
// give "[secret link]". Only Reveal gives the URL, for the QR code or the share sheet. The
// secret sits behind a pointer so printing a struct that holds a SecretLink in an unexported
// field shows an address, not the secret. The zero SecretLink is empty (IsZero).
type SecretLink struct {
	s *linkSecret
}

type linkSecret struct {
	origin string
	id     string
	k      [protocol.ShareSecretSize]byte
}

func newSecretLink(origin, id string, k []byte) SecretLink {
	s := &linkSecret{origin: origin, id: id}
	copy(s.k[:], k)
	return SecretLink{s: s}
}

// ParseSecretLink reads a share link, "{origin}/s/{id}#k={base64url secret}" (also the form the
// redirect lands on, "{origin}/w/{plugin}/{page}?c={id}#k=…"). Errors never repeat the link.
func ParseSecretLink(link string) (SecretLink, error) {
	u, err := url.Parse(link)
	if err != nil {
		return SecretLink{}, errors.New("secret link: not a URL")
	}
	origin, err := protocol.Origin(u.Scheme + "://" + u.Host)
	if err != nil || u.Host == "" {
		return SecretLink{}, errors.New("secret link: not an http(s) URL")
	}
	var id string
	switch {
	case strings.HasPrefix(u.Path, "/s/"):
		id = strings.TrimPrefix(u.Path, "/s/")
	case strings.HasPrefix(u.Path, "/w/"):
		id = u.Query().Get("c")
	default:
		return SecretLink{}, errors.New("secret link: the path is neither /s/{id} nor /w/{plugin}/{page}?c={id}")
	}
	if !protocol.ValidID(id) {
		return SecretLink{}, errors.New("secret link: the channel id is not a ChannelId")
	}
	frag, err := url.ParseQuery(u.Fragment)
	if err != nil {
		return SecretLink{}, errors.New("secret link: the fragment is not k=…")
	}
	k, err := protocol.B64.Strict().DecodeString(frag.Get("k"))
	if err != nil || len(k) != protocol.ShareSecretSize {
		return SecretLink{}, fmt.Errorf("secret link: #k must be %d bytes of base64url", protocol.ShareSecretSize)
	}
	return newSecretLink(origin, id, k), nil
}

// IsZero reports whether l holds no link.
func (l SecretLink) IsZero() bool { return l.s == nil }

// Reveal returns the URL. Call it only to hand the link to its owner (QR code, share sheet);
// never log or return it to a model.
func (l SecretLink) Reveal() string {
	if l.s == nil {
		return ""
	}
	return l.s.origin + "/s/" + l.s.id + "#k=" + protocol.B64.EncodeToString(l.s.k[:])
}

// ChannelID is the channel the link opens; it is not secret (the server knows it).
func (l SecretLink) ChannelID() string {
	if l.s == nil {
		return ""
	}
	return l.s.id
}

// Origin is the provider the link points at.
func (l SecretLink) Origin() string {
	if l.s == nil {
		return ""
	}
	return l.s.origin
}

// secret returns the share secret k.
func (l SecretLink) secret() []byte { return l.s.k[:] }

// String returns "[secret link]".
func (l SecretLink) String() string { return redacted }

// GoString returns "[secret link]", for %#v.
func (l SecretLink) GoString() string { return redacted }

// Format writes "[secret link]" whatever the verb and flags (%s %v %+v %#v %q %x …).
func (l SecretLink) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON returns the JSON string "[secret link]".
func (l SecretLink) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText returns "[secret link]" (encoding/xml, YAML encoders, map keys).
func (l SecretLink) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue makes log/slog print "[secret link]".
func (l SecretLink) LogValue() slog.Value { return slog.StringValue(redacted) }
