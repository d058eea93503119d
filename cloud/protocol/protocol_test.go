package protocol

import (
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckStoreKey(t *testing.T) {
	tests := []struct {
		key, err string
	}{
		{"counter", ""},
		{"history/2026-11-30/a.b:c_d", ""},
		{".hidden", ""},
		{"a/..b", ""},
		{"", "key: must not be empty"},
		{"a/../b", `key: has a ".." segment`},
		{"..", `key: has a ".." segment`},
		{"./a", `key: has a "." segment`},
		{"a//b", "key: has an empty segment"},
		{"/a", "key: has an empty segment"},
		{"a/", "key: has an empty segment"},
		{"a\x00b", `key: character '\x00' at byte 1 is not allowed (A-Z a-z 0-9 . _ : / -)`},
		{"a%2Fb", `key: character '%' at byte 1 is not allowed (A-Z a-z 0-9 . _ : / -)`},
		{"键", `key: character '键' at byte 0 is not allowed (A-Z a-z 0-9 . _ : / -)`},
		{"a/\xc3", `key: byte 0xC3 at byte 2 is not allowed (A-Z a-z 0-9 . _ : / -)`},
		{strings.Repeat("a", 256), ""},
		{strings.Repeat("a", 257), "key: is 257 bytes, the limit is 256"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			err := CheckStoreKey(tc.key)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("CheckStoreKey(%q) = %q, want %q", tc.key, got, tc.err)
			}
		})
	}
}

func TestPatterns(t *testing.T) {
	tests := []struct {
		name string
		f    func(string) bool
		in   string
		want bool
	}{
		{"plugin ok", ValidPluginID, "card-share", true},
		{"plugin one char", ValidPluginID, "a", false},
		{"plugin leading dash", ValidPluginID, "-ab", false},
		{"plugin upper", ValidPluginID, "Card", false},
		{"plugin 64", ValidPluginID, strings.Repeat("a", 64), true},
		{"plugin 65", ValidPluginID, strings.Repeat("a", 65), false},
		{"page one char", ValidPageName, "v", true},
		{"page 41", ValidPageName, strings.Repeat("a", 41), true},
		{"page 42", ValidPageName, strings.Repeat("a", 42), false},
		{"slot", ValidMailboxSlot, "a.b_c:d-e", true},
		{"slot slash", ValidMailboxSlot, "a/b", false},
		{"slot empty", ValidMailboxSlot, "", false},
		{"peer 4", ValidPeerID, "abcd", true},
		{"peer 3", ValidPeerID, "abc", false},
		{"id 8", ValidID, "abcdefgh", true},
		{"id 7", ValidID, "abcdefg", false},
		{"key32", ValidKey32, strings.Repeat("A", 43), true},
		{"key32 stray bits", ValidKey32, strings.Repeat("A", 42) + "B", false},
		{"key32 42", ValidKey32, strings.Repeat("A", 42), false},
		{"pow nonce 0", ValidPowNonce, "0", true},
		{"pow nonce 00", ValidPowNonce, "00", false},
		{"pow nonce 15 digits", ValidPowNonce, "999999999999999", true},
		{"pow nonce 16 digits", ValidPowNonce, "1000000000000000", false},
		{"pow nonce sign", ValidPowNonce, "-1", false},
		{"fn", ValidFunctionName, "stats_2", true},
		{"fn digit first", ValidFunctionName, "2stats", false},
		{"aud", validAud, "http://127.0.0.1:8787", true},
		{"aud v6", validAud, "https://[::1]:8787", true},
		{"aud path", validAud, "https://example.org/", false},
		{"aud upper", validAud, "https://Example.org", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f(tc.in); got != tc.want {
				t.Errorf("%q: got %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestEnvelopeRoundTripAndTamper(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	env, err := Seal(key, map[string]any{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := Open(key, &env, &out); err != nil || out["a"] != 1.0 {
		t.Fatalf("Open = %v, %v", out, err)
	}
	bad := env
	c := []byte(bad.C)
	if c[0] == 'A' {
		c[0] = 'B'
	} else {
		c[0] = 'A'
	}
	bad.C = string(c)
	if err := Open(key, &bad, &out); !errors.Is(err, ErrOpen) {
		t.Errorf("tampered ciphertext: %v, want ErrOpen", err)
	}
	other := make([]byte, 32)
	if err := Open(other, &env, &out); !errors.Is(err, ErrOpen) {
		t.Errorf("wrong key: %v, want ErrOpen", err)
	}
	v2 := env
	v2.V = 2
	if err := Open(key, &v2, &out); err == nil || err.Error() != "envelope: v: must be 1, got 2" {
		t.Errorf("v2: %v", err)
	}
}

func TestOwnerAndViewerAgree(t *testing.T) {
	chanPriv, _ := ecdh.X25519().GenerateKey(rand.Reader)
	peerPriv, _ := ecdh.X25519().GenerateKey(rand.Reader)
	k := make([]byte, 32)
	rand.Read(k)
	enc := EncKey(k)
	a, err := OwnerPeerKey(chanPriv, peerPriv.PublicKey().Bytes(), enc[:])
	if err != nil {
		t.Fatal(err)
	}
	b, err := ViewerPeerKey(peerPriv, chanPriv.PublicKey().Bytes(), enc[:])
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("owner and viewer derive different peer keys")
	}
	if _, err := OwnerPeerKey(chanPriv, make([]byte, 32), enc[:]); err == nil {
		t.Error("a low-order (all-zero) peer key must be refused")
	}
	one := make([]byte, 32)
	one[0] = 1 // u = 1: a point of order 4
	for _, k := range [][]byte{make([]byte, 32), one} {
		if err := CheckX25519Public(k); err == nil || err.Error() != "a low-order X25519 key" {
			t.Errorf("CheckX25519Public(%x) = %v", k, err)
		}
	}
	if err := CheckX25519Public(peerPriv.PublicKey().Bytes()); err != nil {
		t.Errorf("a real key: %v", err)
	}
}

func TestPow(t *testing.T) {
	const salt, sp, bp = "salt", "signpub", "boxpub"
	n, err := SolvePow(context.Background(), salt, sp, bp, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !VerifyPow(salt, sp, bp, n, 10) {
		t.Fatal("solution does not verify")
	}
	sum := sha256.Sum256(append(PowPrefix(salt, sp, bp), n...))
	bitsHave := LeadingZeroBits(sum[:])
	if VerifyPow(salt, sp, bp, n, bitsHave+1) {
		t.Errorf("nonce with %d bits accepted at difficulty %d", bitsHave, bitsHave+1)
	}
	if VerifyPow("other", sp, bp, n, 10) && VerifyPow("other2", sp, bp, n, 10) {
		t.Errorf("a solution should be bound to its salt")
	}
	if _, err := SolvePow(context.Background(), salt, sp, bp, 29); err == nil ||
		err.Error() != "pow: difficulty 29 is outside 0–28" {
		t.Errorf("difficulty 29: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SolvePow(ctx, salt, sp, bp, 28); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if got := LeadingZeroBits([]byte{0, 0x10}); got != 11 {
		t.Errorf("LeadingZeroBits = %d, want 11", got)
	}
}

func TestAuthChallenge(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	req := AuthTokenRequest{Aud: "http://127.0.0.1:8787", DeviceID: "dev12345", Plugin: "demo",
		Services: []string{"store", "channels", "store"}, Ts: 5, Nonce: B64.EncodeToString(make([]byte, 16))}
	SignAuthChallenge(priv, &req)
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	signPub := B64.EncodeToString(pub)
	if err := VerifyAuthChallenge(signPub, &req); err != nil {
		t.Fatal(err)
	}
	// Order and duplicates of services do not matter; everything else does.
	same := req
	same.Services = []string{"channels", "store"}
	if err := VerifyAuthChallenge(signPub, &same); err != nil {
		t.Errorf("reordered services: %v", err)
	}
	for name, mut := range map[string]func(r *AuthTokenRequest){
		"aud":      func(r *AuthTokenRequest) { r.Aud = "http://127.0.0.1:8788" },
		"services": func(r *AuthTokenRequest) { r.Services = []string{"store"} },
		"ts":       func(r *AuthTokenRequest) { r.Ts++ },
		"nonce":    func(r *AuthTokenRequest) { r.Nonce = B64.EncodeToString([]byte("0123456789abcdef")) },
	} {
		r := req
		mut(&r)
		if err := VerifyAuthChallenge(signPub, &r); err == nil || err.Error() != "auth: bad signature" {
			t.Errorf("changed %s: %v", name, err)
		}
	}
}

func TestOrigin(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"http://127.0.0.1:8787/", "http://127.0.0.1:8787", ""},
		{"HTTPS://Cloud.Example.ORG:443/x?y", "https://cloud.example.org", ""},
		{"http://[::1]:80", "http://[::1]", ""},
		{"ftp://x", "", `origin: "ftp://x": scheme must be http or https`},
	}
	for _, tc := range tests {
		got, err := Origin(tc.in)
		es := ""
		if err != nil {
			es = err.Error()
		}
		if got != tc.want || es != tc.err {
			t.Errorf("Origin(%q) = %q, %q; want %q, %q", tc.in, got, es, tc.want, tc.err)
		}
	}
}

const env1 = `{"v":1,"n":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","c":"AAAAAAAAAAAAAAAAAAAAAA"}`

func TestDecodeFrames(t *testing.T) {
	tests := []struct {
		name string
		dec  func([]byte) (string, error)
		in   string
		err  string
	}{
		{"owner msg", ownerOut, `{"t":"msg","to":"peer1","env":` + env1 + `}`, ""},
		{"owner kick", ownerOut, `{"t":"kick","peerId":"peer1"}`, ""},
		{"owner ping", ownerOut, `{"t":"ping"}`, ""},
		{"owner msg missing to", ownerOut, `{"t":"msg","env":` + env1 + `}`, "to: is required in a \"msg\" frame"},
		{"owner ping extra", ownerOut, `{"t":"ping","to":"peer1"}`, "to: is not a field of a \"ping\" frame"},
		{"owner unknown field", ownerOut, `{"t":"ping","x":1}`, `invalid JSON: json: unknown field "x"`},
		{"owner bad t", ownerOut, `{"t":"hello"}`, `t: unknown owner frame type "hello"`},
		{"owner no t", ownerOut, `{}`, "t: is required"},
		{"owner bad env v", ownerOut, `{"t":"msg","to":"peer1","env":{"v":2,"n":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","c":"AAAAAAAAAAAAAAAAAAAAAA"}}`, "env.v: must be 1, got 2"},
		{"owner short c", ownerOut, `{"t":"msg","to":"peer1","env":{"v":1,"n":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","c":"AAAA"}}`, "env.c: must be base64url ciphertext of at least 22 characters"},
		{"owner trailing", ownerOut, `{"t":"ping"}{}`, "invalid JSON at byte 12: data after the value"},
		{"peer msg", peerOut, `{"t":"msg","env":` + env1 + `}`, ""},
		{"peer kick", peerOut, `{"t":"kick","peerId":"peer1"}`, `t: unknown peer frame type "kick"`},
		{"owner in hello", ownerIn, `{"t":"hello","id":"chan1234","expiresAt":5,"peers":[{"peerId":"p123","peerPub":"` + strings.Repeat("A", 43) + `","joinedAt":1,"online":false}]}`, ""},
		{"owner in closed", ownerIn, `{"t":"closed","reason":"kicked"}`, `reason: unknown close reason "kicked"`},
		{"owner in error", ownerIn, `{"t":"error","code":"conflict","message":"peer offline"}`, ""},
		{"owner in error code", ownerIn, `{"t":"error","code":"nope","message":""}`, `code: unknown error code "nope"`},
		{"peer in closed kicked", peerIn, `{"t":"closed","reason":"kicked"}`, ""},
		{"peer in owner", peerIn, `{"t":"owner","online":true}`, ""},
		{"peer in pong neg", peerIn, `{"t":"pong","at":-1}`, "at: must be ≥ 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.dec([]byte(tc.in))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Fatalf("error %q, want %q", got, tc.err)
			}
			if err == nil && out != tc.in {
				t.Errorf("re-encoded\n%s\nwant\n%s", out, tc.in)
			}
		})
	}
}

func ownerOut(b []byte) (string, error) {
	f, err := DecodeOwnerOutFrame(b)
	return string(f.AppendJSON(nil)), err
}
func peerOut(b []byte) (string, error) {
	f, err := DecodePeerOutFrame(b)
	return string(f.AppendJSON(nil)), err
}
func ownerIn(b []byte) (string, error) {
	f, err := DecodeOwnerInFrame(b)
	return string(f.AppendJSON(nil)), err
}
func peerIn(b []byte) (string, error) {
	f, err := DecodePeerInFrame(b)
	return string(f.AppendJSON(nil)), err
}

func TestFrameEscaping(t *testing.T) {
	f := PeerInFrame{T: FrameError, Code: CodeBadRequest, Message: "bad \"x\"\n<é>"}
	b, _ := json.Marshal(f)
	want := `{"t":"error","code":"bad_request","message":"bad \"x\"\n\u003cé\u003e"}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	back, err := DecodePeerInFrame(b)
	if err != nil || back.Message != f.Message {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

func TestDecodeRequests(t *testing.T) {
	k := strings.Repeat("A", 43)
	tests := []struct {
		name string
		v    Validatable
		in   string
		err  string
	}{
		{"create ok", &CreateChannelRequest{}, `{"ttlS":60,"joinHash":"` + k + `","meta":` + env1 + `,"chanPub":"` + k + `","page":"view"}`, ""},
		{"create no meta", &CreateChannelRequest{}, `{"ttlS":60,"joinHash":"` + k + `","chanPub":"` + k + `"}`, "meta: is required"},
		{"create maxPeers 0", &CreateChannelRequest{}, `{"ttlS":60,"maxPeers":0,"joinHash":"` + k + `","meta":` + env1 + `,"chanPub":"` + k + `"}`, "maxPeers: must be ≥ 1, got 0"},
		{"create bad page", &CreateChannelRequest{}, `{"ttlS":60,"joinHash":"` + k + `","meta":` + env1 + `,"chanPub":"` + k + `","page":"View"}`, "page: must match ^[a-z0-9][a-z0-9-]{0,40}$"},
		{"register ok", &RegisterDeviceRequest{}, `{"signPub":"` + k + `","boxPub":"` + k + `","pow":{"salt":"s","nonce":"12"}}`, ""},
		{"register nonce", &RegisterDeviceRequest{}, `{"signPub":"` + k + `","boxPub":"` + k + `","pow":{"salt":"s","nonce":"012"}}`, "pow.nonce: must match ^(0|[1-9][0-9]{0,14})$"},
		{"mailbox ttl", &MailboxPutRequest{}, `{"env":` + env1 + `,"ttlS":0}`, "ttlS: must be ≥ 1, got 0"},
		{"store put ttl", &StorePutRequest{}, `{"value":{"a":1},"ttlS":0}`, "ttlS: must be ≥ 1, got 0"},
		{"join", &JoinRequest{}, `{"authKey":"` + k + `","peerPub":"short"}`, "peerPub: must be 32 bytes base64url (43 characters)"},
		{"push kind", &PushTokenRequest{}, `{"kind":"sms","token":"x"}`, "kind: must be unifiedpush, apns or fcm"},
		{"not json", &PatchChannelRequest{}, `{`, "invalid JSON: unexpected end of the body"},
		{"syntax", &PatchChannelRequest{}, `{"ttlS":60,}`, "invalid JSON at byte 12: invalid character '}' looking for beginning of object key string"},
		{"type", &PatchChannelRequest{}, `{"ttlS":"60"}`, "ttlS: must be a number, not string (byte 12)"},
		{"nested type", &MailboxPutRequest{}, `{"env":{"v":"1"}}`, "env.v: must be a number, not string (byte 15)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Decode([]byte(tc.in), tc.v)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("error %q, want %q", got, tc.err)
			}
		})
	}
}

func TestDefaultLimitsValid(t *testing.T) {
	l := DefaultLimits()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(l)
	want := `{"store":{"maxBytes":1000000,"maxKeys":1000,"maxValueBytes":64000},"channels":{"maxOpen":5,"minTtlS":60,"maxTtlS":86400,"defaultTtlS":900,"maxPeers":5,"frameBytes":4096,"framesPerMin":60,"mailboxSlots":64},"push":{"maxPending":100},"functions":{"callsPerMin":60},"joinsPerIpPerMin":20}`
	if string(b) != want {
		t.Errorf("got %s", b)
	}
}

func TestErrorStatus(t *testing.T) {
	want := map[ErrorCode]int{CodeBadRequest: 400, CodeUnauthorized: 401, CodeForbidden: 403,
		CodeNotFound: 404, CodeConflict: 409, CodeGone: 410, CodePayloadTooLarge: 413,
		CodeRateLimited: 429, CodeUnsupported: 501, CodeQuota: 413, CodePowInvalid: 400, CodeServer: 500}
	for c, s := range want {
		if c.HTTPStatus() != s {
			t.Errorf("%s → %d, want %d", c, c.HTTPStatus(), s)
		}
	}
}
