package protocol

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the code")

// Vectors is the layout of testdata/vectors.json: fixed inputs and what they must produce.
// Every byte string is base64url without padding unless the name says hex.
type Vectors struct {
	Comment string `json:"comment"`
	Keys    struct {
		ShareSecret string `json:"shareSecret"`
		AuthKey     string `json:"authKey"`
		EncKey      string `json:"encKey"`
		JoinHash    string `json:"joinHash"`
		ChanPriv    string `json:"chanPriv"`
		ChanPub     string `json:"chanPub"`
		PeerPriv    string `json:"peerPriv"`
		PeerPub     string `json:"peerPub"`
		SharedHex   string `json:"sharedHex"`
		PeerKey     string `json:"peerKey"`
	} `json:"keys"`
	Envelopes []struct {
		Name      string   `json:"name"`
		Key       string   `json:"key"`
		Nonce     string   `json:"nonce"`
		Plaintext string   `json:"plaintext"`
		Envelope  Envelope `json:"envelope"`
	} `json:"envelopes"`
	Pow struct {
		Salt       string `json:"salt"`
		SignPub    string `json:"signPub"`
		BoxPub     string `json:"boxPub"`
		Difficulty int    `json:"difficulty"`
		Prefix     string `json:"prefix"`
		Nonce      string `json:"nonce"`
		HashHex    string `json:"hashHex"`
	} `json:"pow"`
	Auth struct {
		Seed      string   `json:"seed"`
		SignPub   string   `json:"signPub"`
		Aud       string   `json:"aud"`
		DeviceID  string   `json:"deviceId"`
		Plugin    string   `json:"plugin"`
		Services  []string `json:"services"`
		Ts        int64    `json:"ts"`
		Nonce     string   `json:"nonce"`
		Challenge string   `json:"challenge"`
		Sig       string   `json:"sig"`
	} `json:"auth"`
}

func seq(start byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// computeVectors derives every output from the fixed inputs with this package's code.
func computeVectors(t *testing.T) Vectors {
	t.Helper()
	var v Vectors
	v.Comment = "PKU harness Cloud protocol v1 test vectors. Byte strings are base64url without padding (hex where the name ends in Hex). Regenerate: go test ./cloud/protocol -run TestVectors -update"
	k := seq(0x00, 32)
	authKey, encKey := AuthKey(k), EncKey(k)
	v.Keys.ShareSecret = B64.EncodeToString(k)
	v.Keys.AuthKey = B64.EncodeToString(authKey[:])
	v.Keys.EncKey = B64.EncodeToString(encKey[:])
	v.Keys.JoinHash = JoinHash(authKey[:])
	chanPriv, err := ecdh.X25519().NewPrivateKey(seq(0x40, 32))
	if err != nil {
		t.Fatal(err)
	}
	peerPriv, err := ecdh.X25519().NewPrivateKey(seq(0x80, 32))
	if err != nil {
		t.Fatal(err)
	}
	v.Keys.ChanPriv = B64.EncodeToString(chanPriv.Bytes())
	v.Keys.ChanPub = B64.EncodeToString(chanPriv.PublicKey().Bytes())
	v.Keys.PeerPriv = B64.EncodeToString(peerPriv.Bytes())
	v.Keys.PeerPub = B64.EncodeToString(peerPriv.PublicKey().Bytes())
	shared, err := chanPriv.ECDH(peerPriv.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	v.Keys.SharedHex = hex.EncodeToString(shared)
	pk, err := OwnerPeerKey(chanPriv, peerPriv.PublicKey().Bytes(), encKey[:])
	if err != nil {
		t.Fatal(err)
	}
	v.Keys.PeerKey = B64.EncodeToString(pk[:])

	envs := []struct {
		name, plaintext string
		key             []byte
		nonce           []byte
	}{
		{"meta sealed with encKey", `{"nameHint":"王_明","pinRequired":true}`, encKey[:], seq(0xa0, 24)},
		{"frame sealed with the peer key", `{"t":"code","code":"1234567890","at":1767225600000}`, pk[:], seq(0xc0, 24)},
		{"empty plaintext", ``, encKey[:], seq(0x10, 24)},
	}
	for _, e := range envs {
		env, err := SealBytesWithNonce(e.key, e.nonce, []byte(e.plaintext))
		if err != nil {
			t.Fatal(err)
		}
		v.Envelopes = append(v.Envelopes, struct {
			Name      string   `json:"name"`
			Key       string   `json:"key"`
			Nonce     string   `json:"nonce"`
			Plaintext string   `json:"plaintext"`
			Envelope  Envelope `json:"envelope"`
		}{e.name, B64.EncodeToString(e.key), B64.EncodeToString(e.nonce), e.plaintext, env})
	}

	signPriv := ed25519.NewKeyFromSeed(seq(0x20, 32))
	signPub := B64.EncodeToString(signPriv.Public().(ed25519.PublicKey))
	v.Pow.Salt = "c2FsdC0yMDI2LTExLTMw"
	v.Pow.SignPub = signPub
	v.Pow.BoxPub = v.Keys.PeerPub
	v.Pow.Difficulty = 12
	v.Pow.Prefix = string(PowPrefix(v.Pow.Salt, v.Pow.SignPub, v.Pow.BoxPub))
	nonce, err := SolvePow(context.Background(), v.Pow.Salt, v.Pow.SignPub, v.Pow.BoxPub, v.Pow.Difficulty)
	if err != nil {
		t.Fatal(err)
	}
	v.Pow.Nonce = nonce
	sum := sha256.Sum256([]byte(v.Pow.Prefix + nonce))
	v.Pow.HashHex = hex.EncodeToString(sum[:])

	v.Auth.Seed = B64.EncodeToString(seq(0x20, 32))
	v.Auth.SignPub = signPub
	v.Auth.Aud = "http://127.0.0.1:8787"
	v.Auth.DeviceID = "dev_AAAAAAAAAAAAAAAAAAAA"
	v.Auth.Plugin = "card-share"
	v.Auth.Services = []string{"store", "channels", "store"}
	v.Auth.Ts = 1767225600000
	v.Auth.Nonce = B64.EncodeToString(seq(0xf0, 16))
	req := AuthTokenRequest{Aud: v.Auth.Aud, DeviceID: v.Auth.DeviceID, Plugin: v.Auth.Plugin,
		Services: v.Auth.Services, Ts: v.Auth.Ts, Nonce: v.Auth.Nonce}
	v.Auth.Challenge = string(AuthChallenge(req.Aud, req.Services, req.Ts, req.Nonce))
	SignAuthChallenge(signPriv, &req)
	v.Auth.Sig = req.Sig
	return v
}

func TestVectors(t *testing.T) {
	got := computeVectors(t)
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", "vectors.json")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("vectors differ from %s (run with -update only if the change is intended):\n%s", path, b)
	}
}

// TestVectorsIndependent checks the file against properties the code cannot fake: both sides of
// the X25519 exchange agree, every envelope opens to its plaintext, the PoW nonce is the smallest
// that works, the challenge has the seed's five lines, and the signature verifies.
func TestVectorsIndependent(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v Vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	dec := func(s string) []byte {
		b, err := B64.DecodeString(s)
		if err != nil {
			t.Fatalf("decode %q: %v", s, err)
		}
		return b
	}
	peerPriv, _ := ecdh.X25519().NewPrivateKey(dec(v.Keys.PeerPriv))
	encKey := dec(v.Keys.EncKey)
	viewer, err := ViewerPeerKey(peerPriv, dec(v.Keys.ChanPub), encKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := B64.EncodeToString(viewer[:]); got != v.Keys.PeerKey {
		t.Errorf("viewer peer key %s, owner peer key %s", got, v.Keys.PeerKey)
	}
	if h := sha256.Sum256(dec(v.Keys.AuthKey)); B64.EncodeToString(h[:]) != v.Keys.JoinHash {
		t.Errorf("joinHash is not sha256(authKey)")
	}
	for _, e := range v.Envelopes {
		env := e.Envelope
		pt, err := OpenBytes(dec(e.Key), &env)
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if string(pt) != e.Plaintext {
			t.Errorf("%s: opened %q, want %q", e.Name, pt, e.Plaintext)
		}
		if env.N != e.Nonce {
			t.Errorf("%s: nonce %s, want %s", e.Name, env.N, e.Nonce)
		}
	}
	if !VerifyPow(v.Pow.Salt, v.Pow.SignPub, v.Pow.BoxPub, v.Pow.Nonce, v.Pow.Difficulty) {
		t.Errorf("pow nonce %s does not verify", v.Pow.Nonce)
	}
	want := "pku-harness-cloud/v1/pow\n" + v.Pow.Salt + "\n" + v.Pow.SignPub + "\n" + v.Pow.BoxPub + "\n"
	if v.Pow.Prefix != want {
		t.Errorf("pow prefix %q, want %q", v.Pow.Prefix, want)
	}
	wantChallenge := "pku-harness-cloud/v1/auth\nhttp://127.0.0.1:8787\nchannels,store\n1767225600000\n" + v.Auth.Nonce
	if v.Auth.Challenge != wantChallenge {
		t.Errorf("challenge %q, want %q", v.Auth.Challenge, wantChallenge)
	}
	if !ed25519.Verify(dec(v.Auth.SignPub), []byte(v.Auth.Challenge), dec(v.Auth.Sig)) {
		t.Errorf("auth signature does not verify")
	}
}
