package client

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// FuzzParseSecretLink: a link either fails with a message that never repeats it, or parses
// into a SecretLink whose Reveal parses back to the same link, and which prints as nothing but
// "[secret link]".
func FuzzParseSecretLink(f *testing.F) {
	f.Add(testLink)
	f.Add("http://127.0.0.1:8787/w/demo/view?c=abcdefgh#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	f.Add("https://x/s/%41AAAAAAA#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8&k=zz")
	f.Add("https://[::1]:443/s/AAAAAAAA#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	f.Fuzz(func(t *testing.T, in string) {
		l, err := ParseSecretLink(in)
		if err != nil {
			if len(in) > 12 && strings.Contains(err.Error(), in) {
				t.Fatalf("error repeats the link: %v", err)
			}
			if !l.IsZero() {
				t.Fatal("non-zero link with an error")
			}
			return
		}
		again, err := ParseSecretLink(l.Reveal())
		if err != nil {
			t.Fatalf("Reveal() %q does not parse: %v", l.Reveal(), err)
		}
		if again.Reveal() != l.Reveal() {
			t.Fatalf("Reveal round trip: %q then %q", l.Reveal(), again.Reveal())
		}
		if s := fmt.Sprintf("%v|%+v|%#v|%s|%q|%x", l, l, l, l, l, l); s != "[secret link]|[secret link]|[secret link]|[secret link]|[secret link]|[secret link]" {
			t.Fatalf("printed %q", s)
		}
	})
}

// FuzzIdentityUnmarshal: decoding never panics, and whatever decodes re-encodes to the same
// identity.
func FuzzIdentityUnmarshal(f *testing.F) {
	id, err := NewIdentity()
	if err != nil {
		f.Fatal(err)
	}
	id.DeviceID = "dev_AAAAAAAAAAAA"
	good, _ := id.MarshalBinary()
	f.Add(good)
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":1,"signSeed":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","boxPriv":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","storeSecret":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var id Identity
		if id.UnmarshalBinary(data) != nil {
			return
		}
		b, err := id.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var again Identity
		if err := again.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		b2, _ := again.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatalf("re-encoding differs:\n%s\n%s", b, b2)
		}
	})
}

// FuzzChannelStateUnmarshal: decoding never panics, and whatever decodes re-encodes to the
// same bytes.
func FuzzChannelStateUnmarshal(f *testing.F) {
	f.Add([]byte(`{"v":1,"id":"AAAAAAAAAAAAAAAAAAAAAA","k":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","chanPriv":"QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8","expiresAt":1767225600000}`))
	f.Add([]byte(`{"v":1,"id":"x"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s ChannelState
		if s.UnmarshalBinary(data) != nil {
			return
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var again ChannelState
		if err := again.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if b2, _ := again.MarshalBinary(); !bytes.Equal(b, b2) {
			t.Fatalf("re-encoding differs:\n%s\n%s", b, b2)
		}
	})
}
