package protocol

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
)

// B64 is the protocol's byte encoding: base64url without padding (RFC 4648 §5).
var B64 = base64.RawURLEncoding

// EnvelopeVersion is the only envelope version, the `v` of every Envelope.
const EnvelopeVersion = 1

// KeySize is the size of every symmetric key, public key and hash on the wire, in bytes.
const KeySize = 32

// NonceSize is the XChaCha20-Poly1305 nonce size, in bytes.
const NonceSize = chacha20poly1305.NonceSizeX

// Overhead is the Poly1305 tag size added to every sealed plaintext, in bytes.
const Overhead = chacha20poly1305.Overhead

// Envelope is XChaCha20-Poly1305 sealed JSON (seed 003 “### Envelope”): N is the 24-byte nonce
// and C the ciphertext ‖ 16-byte tag, both base64url without padding. No associated data.
type Envelope struct {
	V int    `json:"v"`
	N string `json:"n"`
	C string `json:"c"`
}

// Validate checks the schema: v is 1, n is a Nonce24, c is base64url of at least 22 characters
// (a 16-byte tag) and decodes (no impossible length, no stray low bits).
func (e *Envelope) Validate() error {
	if e.V != EnvelopeVersion {
		return fieldErr("v", "must be 1, got %d", e.V)
	}
	if !ValidNonce24(e.N) {
		return fieldErr("n", "must be 24 bytes base64url (32 characters of A-Z a-z 0-9 _ -)")
	}
	if len(e.C) < 22 || !isB64URL(e.C) || len(e.C)%4 == 1 || !canonicalB64(e.C) {
		return fieldErr("c", "must be base64url ciphertext of at least 22 characters")
	}
	return nil
}

// CiphertextLen is the length in bytes of the ciphertext ‖ tag that C encodes, computed without
// decoding; the frame limit (limits.channels.frameBytes) applies to it.
func (e *Envelope) CiphertextLen() int { return B64.DecodedLen(len(e.C)) }

// SealBytes seals plaintext under key (32 bytes) with a fresh random nonce.
func SealBytes(key, plaintext []byte) (Envelope, error) {
	var nonce [NonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return Envelope{}, fmt.Errorf("envelope: nonce: %w", err)
	}
	return SealBytesWithNonce(key, nonce[:], plaintext)
}

// SealBytesWithNonce seals plaintext under key with the given 24-byte nonce. Reusing a nonce
// under one key breaks the cipher: only test vectors may call this with a fixed nonce.
func SealBytesWithNonce(key, nonce, plaintext []byte) (Envelope, error) {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return Envelope{}, fmt.Errorf("envelope: key: %w", err)
	}
	if len(nonce) != NonceSize {
		return Envelope{}, fmt.Errorf("envelope: nonce is %d bytes, want %d", len(nonce), NonceSize)
	}
	ct := aead.Seal(make([]byte, 0, len(plaintext)+Overhead), nonce, plaintext, nil)
	return Envelope{V: EnvelopeVersion, N: B64.EncodeToString(nonce), C: B64.EncodeToString(ct)}, nil
}

// Seal marshals v as JSON and seals it under key (32 bytes) with a random nonce.
func Seal(key []byte, v any) (Envelope, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Envelope{}, fmt.Errorf("envelope: %w", err)
	}
	return SealBytes(key, b)
}

// ErrOpen is returned (wrapped) when an envelope does not open: wrong key, or a ciphertext or
// nonce that was changed.
var ErrOpen = errors.New("envelope: message authentication failed")

// OpenBytes checks env's schema and opens it under key, returning the plaintext.
func OpenBytes(key []byte, env *Envelope) ([]byte, error) {
	if err := env.Validate(); err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("envelope: key: %w", err)
	}
	nonce, err := B64.DecodeString(env.N)
	if err != nil {
		return nil, fmt.Errorf("envelope: n: %w", err)
	}
	ct, err := B64.DecodeString(env.C)
	if err != nil {
		return nil, fmt.Errorf("envelope: c: %w", err)
	}
	pt, err := aead.Open(ct[:0], nonce, ct, nil)
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}

// Open opens env under key and unmarshals the JSON plaintext into v. Callers must still validate
// v: the sender holds the key, but may be a peer that is not trusted with anything else.
func Open(key []byte, env *Envelope, v any) error {
	pt, err := OpenBytes(key, env)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(pt, v); err != nil {
		return fmt.Errorf("envelope: plaintext: %w", err)
	}
	return nil
}
