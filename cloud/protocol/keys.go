package protocol

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
)

// HKDF info strings and proof-of-work / auth labels (seed 003 “POST /v1/channels”,
// “GET /v1/channels/{id}/ws”, “POST /v1/devices”, “POST /v1/auth/token”).
const (
	InfoJoin  = "pku-harness-cloud/v1/join"
	InfoEnc   = "pku-harness-cloud/v1/enc"
	InfoPeer  = "pku-harness-cloud/v1/peer"
	PowLabel  = "pku-harness-cloud/v1/pow"
	AuthLabel = "pku-harness-cloud/v1/auth"
)

// ShareSecretSize is the size of the share secret k carried in a link's `#k=` fragment.
const ShareSecretSize = 32

// derive is HKDF-SHA-256 (RFC 5869) with the given salt (nil = zero salt) to 32 bytes.
func derive(secret, salt []byte, info string) [KeySize]byte {
	var out [KeySize]byte
	// hkdf.Key fails only for lengths above 255 × 32 bytes.
	k, err := hkdf.Key(sha256.New, secret, salt, info, KeySize)
	if err != nil {
		panic("protocol: hkdf: " + err.Error())
	}
	copy(out[:], k)
	return out
}

// AuthKey is authKey = HKDF-SHA-256(k, salt = none, info = "pku-harness-cloud/v1/join"), the
// key a viewer presents to join a channel.
func AuthKey(k []byte) [KeySize]byte { return derive(k, nil, InfoJoin) }

// EncKey is encKey = HKDF-SHA-256(k, salt = none, info = "pku-harness-cloud/v1/enc"), the key
// that seals a channel's meta and enters every per-peer key.
func EncKey(k []byte) [KeySize]byte { return derive(k, nil, InfoEnc) }

// JoinHash is base64url(sha256(authKey)), what the owner sends at channel creation and what
// the server compares a joiner's authKey against.
func JoinHash(authKey []byte) string {
	h := sha256.Sum256(authKey)
	return B64.EncodeToString(h[:])
}

// PeerKey is the per-peer envelope key HKDF-SHA-256(shared ‖ encKey, salt = chanPub ‖ peerPub,
// info = "pku-harness-cloud/v1/peer"), where shared is the 32-byte X25519 result that both
// sides compute (OwnerPeerKey, ViewerPeerKey).
func PeerKey(shared, encKey, chanPub, peerPub []byte) [KeySize]byte {
	ikm := make([]byte, 0, len(shared)+len(encKey))
	ikm = append(append(ikm, shared...), encKey...)
	salt := make([]byte, 0, len(chanPub)+len(peerPub))
	salt = append(append(salt, chanPub...), peerPub...)
	return derive(ikm, salt, InfoPeer)
}

// OwnerPeerKey is the owner's side of PeerKey: X25519(chanPriv, peerPub). The error names a
// key that is not 32 bytes or a low-order peer key (all-zero shared secret).
func OwnerPeerKey(chanPriv *ecdh.PrivateKey, peerPub, encKey []byte) ([KeySize]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(peerPub)
	if err != nil {
		return [KeySize]byte{}, fmt.Errorf("peer key: peerPub: %w", err)
	}
	shared, err := chanPriv.ECDH(pub)
	if err != nil {
		return [KeySize]byte{}, fmt.Errorf("peer key: %w", err)
	}
	return PeerKey(shared, encKey, chanPriv.PublicKey().Bytes(), peerPub), nil
}

// ViewerPeerKey is the viewer's side of PeerKey: X25519(peerPriv, chanPub).
func ViewerPeerKey(peerPriv *ecdh.PrivateKey, chanPub, encKey []byte) ([KeySize]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(chanPub)
	if err != nil {
		return [KeySize]byte{}, fmt.Errorf("peer key: chanPub: %w", err)
	}
	shared, err := peerPriv.ECDH(pub)
	if err != nil {
		return [KeySize]byte{}, fmt.Errorf("peer key: %w", err)
	}
	return PeerKey(shared, encKey, chanPub, peerPriv.PublicKey().Bytes()), nil
}

// x25519Probe is a fixed private key used only to test public keys for low order.
var x25519Probe, _ = ecdh.X25519().NewPrivateKey([]byte("pku-harness-cloud/v1/x25519probe"))

// CheckX25519Public rejects an X25519 public key of low order (such as all zeros), with which
// every shared secret is zero and the per-peer key would be known to anyone. It costs one
// scalar multiplication.
func CheckX25519Public(pub []byte) error {
	k, err := ecdh.X25519().NewPublicKey(pub)
	if err != nil {
		return err
	}
	if _, err := x25519Probe.ECDH(k); err != nil {
		return errors.New("a low-order X25519 key")
	}
	return nil
}

// DecodeKey32 decodes a Key32 string to its 32 bytes.
func DecodeKey32(s string) ([]byte, error) {
	if !ValidKey32(s) {
		return nil, fieldErr("", "not a Key32 (43 characters of base64url)")
	}
	return B64.DecodeString(s)
}
