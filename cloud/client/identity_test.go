package client

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIdentityRoundTrip(t *testing.T) {
	ctx := context.Background()
	id, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	id.DeviceID = "dev_AAAAAAAAAAAA"
	path := filepath.Join(t.TempDir(), "sub", "identity.json")
	for _, st := range []IdentityStore{&MemIdentityStore{}, FileIdentityStore{Path: path}} {
		got, err := st.Load(ctx)
		if err != nil || got != nil {
			t.Fatalf("%T: empty Load = %v, %v", st, got, err)
		}
		if err := st.Save(ctx, id); err != nil {
			t.Fatal(err)
		}
		got, err = st.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.DeviceID != id.DeviceID || got.SignPub() != id.SignPub() || got.BoxPub() != id.BoxPub() || got.StoreSecret != id.StoreSecret || !got.Sign.Equal(id.Sign) {
			t.Errorf("%T: loaded identity differs", st)
		}
		if err := st.Save(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if got, err := st.Load(ctx); err != nil || got != nil {
			t.Errorf("%T: Load after forgetting = %v, %v", st, got, err)
		}
	}
	if err := (FileIdentityStore{Path: path}).Save(ctx, id); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("identity file mode %v, want 0600", fi.Mode().Perm())
	}
	for _, s := range []string{id.String(), id.GoString()} {
		if s != "device dev_AAAAAAAAAAAA" {
			t.Errorf("printed identity = %q", s)
		}
	}
}

func TestIdentityUnmarshalErrors(t *testing.T) {
	tests := []struct{ name, in, err string }{
		{"not JSON", `{`, "identity: unexpected end of JSON input"},
		{"version", `{"v":2}`, "identity: version 2, want 1"},
		{"device id", `{"v":1,"deviceId":"a b"}`, "identity: deviceId: not a DeviceId"},
		{"sign seed", `{"v":1,"signSeed":"AAAA"}`, "identity: signSeed: want 32 bytes base64url"},
		{"box", `{"v":1,"signSeed":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","boxPriv":"!"}`, "identity: boxPriv: want 32 bytes base64url"},
		{"store secret", `{"v":1,"signSeed":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","boxPriv":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","storeSecret":""}`, "identity: storeSecret: want 32 bytes base64url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := new(Identity).UnmarshalBinary([]byte(tc.in))
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestChannelStateUnmarshalErrors(t *testing.T) {
	tests := []struct{ name, in, err string }{
		{"not JSON", `{`, "channel state: unexpected end of JSON input"},
		{"version", `{"v":3}`, "channel state: version 3, want 1"},
		{"id", `{"v":1,"id":"a b"}`, "channel state: id: not a ChannelId"},
		{"k", `{"v":1,"id":"AAAAAAAAAAAAAAAAAAAAAA","k":"AAEC"}`, "channel state: k: want 32 bytes base64url"},
		{"chanPriv", `{"v":1,"id":"AAAAAAAAAAAAAAAAAAAAAA","k":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","chanPriv":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}`, "channel state: chanPriv: want 32 bytes base64url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s ChannelState
			if err := s.UnmarshalBinary([]byte(tc.in)); err == nil || err.Error() != tc.err {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}
