package client

import (
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// Identity is a device's cloud identity (seed 003 “# 设备与鉴权”): a server-given DeviceID, an
// Ed25519 key that signs auth challenges, an X25519 box key, and StoreSecret, 32 device-local
// bytes from which end-to-end store keys are derived. No student number, no name. StoreSecret
// never leaves the device; the server learns only the two public keys.
type Identity struct {
	DeviceID    string             // server-given DeviceId; empty until registered
	Sign        ed25519.PrivateKey // signs auth challenges
	Box         *ecdh.PrivateKey   // X25519, registered as boxPub
	StoreSecret [32]byte           // root of end-to-end store keys; never sent
}

// NewIdentity makes fresh keys; DeviceID stays empty until the device registers.
func NewIdentity() (*Identity, error) {
	_, sign, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	box, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	id := &Identity{Sign: sign, Box: box}
	if _, err := rand.Read(id.StoreSecret[:]); err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	return id, nil
}

// SignPub is the Ed25519 public key as a Key32 string.
func (id *Identity) SignPub() string {
	return protocol.B64.EncodeToString(id.Sign.Public().(ed25519.PublicKey))
}

// BoxPub is the X25519 public key as a Key32 string.
func (id *Identity) BoxPub() string { return protocol.B64.EncodeToString(id.Box.PublicKey().Bytes()) }

// String names the device without any key material. It and the other printing methods below
// have value receivers, so an Identity printed as a value (or inside a struct, a slice) is
// covered as well as a pointer.
func (id Identity) String() string { return "device " + id.DeviceID }

// GoString is String, so %#v cannot print private keys either.
func (id Identity) GoString() string { return id.String() }

// Format writes String whatever the verb and flags (%x, %d and %q included), so no verb
// reaches the key bytes.
func (id Identity) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(id.String())) }

// MarshalJSON encodes only the device id, {"deviceId": …}: a JSON log line or API reply
// holding an Identity shows no key. MarshalBinary is the keystore's encoding.
func (id Identity) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		DeviceID string `json:"deviceId"`
	}{id.DeviceID})
}

// LogValue makes log/slog print String.
func (id Identity) LogValue() slog.Value { return slog.StringValue(id.String()) }

// identityFile is the persisted form (version 1): private keys as base64url seeds.
type identityFile struct {
	V           int    `json:"v"`
	DeviceID    string `json:"deviceId"`
	SignSeed    string `json:"signSeed"`
	BoxPriv     string `json:"boxPriv"`
	StoreSecret string `json:"storeSecret"`
}

// MarshalBinary encodes the identity, private keys included, for an IdentityStore.
func (id *Identity) MarshalBinary() ([]byte, error) {
	return json.Marshal(identityFile{
		V:           1,
		DeviceID:    id.DeviceID,
		SignSeed:    protocol.B64.EncodeToString(id.Sign.Seed()),
		BoxPriv:     protocol.B64.EncodeToString(id.Box.Bytes()),
		StoreSecret: protocol.B64.EncodeToString(id.StoreSecret[:]),
	})
}

// UnmarshalBinary decodes what MarshalBinary wrote; an error names the bad field.
func (id *Identity) UnmarshalBinary(data []byte) error {
	var f identityFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	if f.V != 1 {
		return fmt.Errorf("identity: version %d, want 1", f.V)
	}
	if f.DeviceID != "" && !protocol.ValidID(f.DeviceID) {
		return errors.New("identity: deviceId: not a DeviceId")
	}
	seed, err := protocol.B64.DecodeString(f.SignSeed)
	if err != nil || len(seed) != ed25519.SeedSize {
		return errors.New("identity: signSeed: want 32 bytes base64url")
	}
	boxb, err := protocol.B64.DecodeString(f.BoxPriv)
	if err != nil {
		return errors.New("identity: boxPriv: want 32 bytes base64url")
	}
	box, err := ecdh.X25519().NewPrivateKey(boxb)
	if err != nil {
		return fmt.Errorf("identity: boxPriv: %w", err)
	}
	ss, err := protocol.B64.DecodeString(f.StoreSecret)
	if err != nil || len(ss) != 32 {
		return errors.New("identity: storeSecret: want 32 bytes base64url")
	}
	id.DeviceID, id.Sign, id.Box = f.DeviceID, ed25519.NewKeyFromSeed(seed), box
	copy(id.StoreSecret[:], ss)
	return nil
}

// IdentityStore keeps the device identity between runs (the app's system keystore in the seed).
// Load returns nil, nil when there is none; Save(ctx, nil) forgets it.
type IdentityStore interface {
	Load(ctx context.Context) (*Identity, error)
	Save(ctx context.Context, id *Identity) error
}

// MemIdentityStore is an IdentityStore in memory, for tests and one-off tools.
type MemIdentityStore struct {
	mu sync.Mutex
	id []byte
}

// Load returns a copy of the saved identity, or nil.
func (m *MemIdentityStore) Load(context.Context) (*Identity, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.id == nil {
		return nil, nil
	}
	id := new(Identity)
	return id, id.UnmarshalBinary(m.id)
}

// Save keeps a copy of id (nil forgets).
func (m *MemIdentityStore) Save(_ context.Context, id *Identity) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == nil {
		m.id = nil
		return nil
	}
	b, err := id.MarshalBinary()
	m.id = b
	return err
}

// FileIdentityStore is an IdentityStore in one JSON file, written with mode 0600 through a
// temporary file and a rename so a crash never leaves half an identity.
type FileIdentityStore struct {
	Path string // the JSON file; its directory is created with mode 0700
}

// Load reads the file; a missing file is no identity.
func (f FileIdentityStore) Load(context.Context) (*Identity, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	id := new(Identity)
	if err := id.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return id, nil
}

// Save writes id, or removes the file when id is nil.
func (f FileIdentityStore) Save(_ context.Context, id *Identity) error {
	if id == nil {
		err := os.Remove(f.Path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	b, err := id.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".identity-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}

// Device returns the registered identity: the stored one, or a new one registered now with
// POST /v1/devices after solving the proof of work GET /v1/meta asks for (refusing a difficulty
// above protocol.MaxPowDifficulty). If the salt rotates between meta and registration the
// server answers pow_invalid and Device solves once more with the new salt.
func (c *Client) Device(ctx context.Context) (*Identity, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dev != nil {
		return c.dev, nil
	}
	id, err := c.ids.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("cloud client: loading the device identity: %w", err)
	}
	if id != nil && id.DeviceID != "" {
		c.dev = id
		return id, nil
	}
	if id == nil {
		if id, err = NewIdentity(); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		err = c.register(ctx, id)
		if err == nil || attempt == 1 || !IsCode(err, protocol.CodePowInvalid) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if err := c.ids.Save(ctx, id); err != nil {
		return nil, fmt.Errorf("cloud client: saving the device identity: %w", err)
	}
	c.dev = id
	return id, nil
}

func (c *Client) register(ctx context.Context, id *Identity) error {
	meta, err := c.Meta(ctx)
	if err != nil {
		return err
	}
	if meta.Pow.Difficulty > protocol.MaxPowDifficulty {
		return fmt.Errorf("cloud client: the provider asks for proof-of-work difficulty %d; clients refuse more than %d", meta.Pow.Difficulty, protocol.MaxPowDifficulty)
	}
	req := protocol.RegisterDeviceRequest{SignPub: id.SignPub(), BoxPub: id.BoxPub()}
	nonce, err := protocol.SolvePow(ctx, meta.Pow.Salt, req.SignPub, req.BoxPub, meta.Pow.Difficulty)
	if err != nil {
		return fmt.Errorf("cloud client: registering: %w", err)
	}
	req.Pow = protocol.PowSolution{Salt: meta.Pow.Salt, Nonce: nonce}
	var resp protocol.RegisterDeviceResponse
	if _, err := doJSON(ctx, c.hc, c.origin, http.MethodPost, "/v1/devices", "", nil, &req, &resp); err != nil {
		return err
	}
	id.DeviceID = resp.DeviceID
	return nil
}
