package protocol_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"fmt"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// The owner opens a channel from a share secret k; the viewer derives the same keys from the
// link's #k= and both sides reach the same per-peer key. (The joinHash was checked with
// `openssl kdf … HKDF` and `openssl dgst -sha256`.)
func Example_channelKeys() {
	k := bytes.Repeat([]byte{7}, protocol.ShareSecretSize)
	authKey, encKey := protocol.AuthKey(k), protocol.EncKey(k)
	fmt.Println("joinHash", protocol.JoinHash(authKey[:]))

	chanPriv, _ := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{1}, 32))
	peerPriv, _ := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{2}, 32))
	owner, _ := protocol.OwnerPeerKey(chanPriv, peerPriv.PublicKey().Bytes(), encKey[:])
	viewer, _ := protocol.ViewerPeerKey(peerPriv, chanPriv.PublicKey().Bytes(), encKey[:])
	fmt.Println("same peer key:", owner == viewer)

	env, _ := protocol.SealBytesWithNonce(owner[:], make([]byte, protocol.NonceSize), []byte(`{"t":"hello"}`))
	pt, err := protocol.OpenBytes(viewer[:], &env)
	fmt.Println(string(pt), err)
	// Output:
	// joinHash Ry8564gyCjYRl_ve1dqCdNl_w-ujAtHL_lKVody0KAI
	// same peer key: true
	// {"t":"hello"} <nil>
}

// The signed bytes of an auth request: services are deduplicated and sorted.
func ExampleAuthChallenge() {
	fmt.Printf("%s\n", protocol.AuthChallenge("http://127.0.0.1:8787", []string{"store", "channels", "store"},
		1767225600000, "AAAAAAAAAAAAAAAAAAAAAA"))
	// Output:
	// pku-harness-cloud/v1/auth
	// http://127.0.0.1:8787
	// channels,store
	// 1767225600000
	// AAAAAAAAAAAAAAAAAAAAAA
}

// Registration: find the nonce, as a phone would; the server recomputes it.
func ExampleSolvePow() {
	salt, signPub, boxPub := "salt", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	nonce, _ := protocol.SolvePow(context.Background(), salt, signPub, boxPub, 12)
	fmt.Println(protocol.VerifyPow(salt, signPub, boxPub, nonce, 12))
	_, err := protocol.SolvePow(context.Background(), salt, signPub, boxPub, 29)
	fmt.Println(err)
	// Output:
	// true
	// pow: difficulty 29 is outside 0–28
}
