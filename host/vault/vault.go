// Package vault seals the host's secrets at rest (docs/HOST-API.md
// "Campus sign-in", secrets at rest; seed 003 "从 pkucli 移植"): the IAAA password when the person lets
// the host remember it, the authenticator secret and the campus session
// tokens and cookies. A Box encrypts with XChaCha20-Poly1305
// (golang.org/x/crypto/chacha20poly1305) under a 256-bit key kept outside the
// database: in the OS keyring where one answers (github.com/zalando/go-keyring:
// the Secret Service on Linux, the Keychain on macOS, the Credential Manager
// on Windows), else in a key file with mode 0600 beside the data directory
// (DIR.key next to DIR). A key file that exists always wins, so a key first
// written to the file when no keyring answered is never lost when one
// appears later.
//
// Each sealed value is bound to a label (the table and row it belongs to),
// so a sealed value copied into another row does not open there.
package vault

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/zalando/go-keyring"
	"golang.org/x/crypto/chacha20poly1305"
)

// KeyringService is the service name under which the key is kept in the OS
// keyring; the user name is the data directory's absolute path.
const KeyringService = "pku-harness"

// version is the first byte of every sealed value.
const version = 1

// Keyring is the part of an OS keyring the vault uses; go-keyring's
// functions by default (Keyring = OSKeyring{}).
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
}

// OSKeyring is the OS keyring through github.com/zalando/go-keyring.
type OSKeyring struct{}

// Get implements Keyring.
func (OSKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }

// Set implements Keyring.
func (OSKeyring) Set(service, user, secret string) error { return keyring.Set(service, user, secret) }

// NoKeyring is a Keyring that never answers, so the key file is used; the
// environment variable HARNESS_KEYRING=off selects it.
type NoKeyring struct{}

// Get implements Keyring: always an error.
func (NoKeyring) Get(string, string) (string, error) { return "", errors.New("keyring disabled") }

// Set implements Keyring: always an error.
func (NoKeyring) Set(string, string, string) error { return errors.New("keyring disabled") }

// DefaultKeyring is the keyring Open uses: NoKeyring when HARNESS_KEYRING is
// "off", else OSKeyring.
func DefaultKeyring() Keyring {
	if os.Getenv("HARNESS_KEYRING") == "off" {
		return NoKeyring{}
	}
	return OSKeyring{}
}

// Box seals and opens secrets under one key. It is safe for concurrent use.
type Box struct {
	key [chacha20poly1305.KeySize]byte
	// Where says where the key is kept: "keyring" or the key file's path.
	Where string
}

// KeyFile returns the key file's path for data directory dir: DIR.key beside
// it (dir cleaned, absolute when it can be made so).
func KeyFile(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".key")
}

var (
	mu    sync.Mutex
	boxes = map[string]*Box{}
)

// Open returns the Box of data directory dir, creating its key on first use:
// the key file DIR.key when it exists (it must be mode 0600 or stricter and
// hold 32 bytes in Base64), else the keyring entry (KeyringService, absolute
// dir), else a new random key stored in the keyring or, when the keyring
// refuses, in a new key file written with mode 0600. Boxes are cached per
// directory. Errors name the file and say why (wrong mode, bad content, not
// writable); an empty dir is an error.
func Open(dir string, kr Keyring) (*Box, error) {
	if dir == "" {
		// A database without a data directory (store.OpenMemory) has no place for a key, and
		// the current directory is not one.
		return nil, errors.New("vault: no data directory: nothing can be sealed")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("vault: data directory %q: %w", dir, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if b, ok := boxes[abs]; ok {
		return b, nil
	}
	b, err := open(abs, kr)
	if err != nil {
		return nil, err
	}
	boxes[abs] = b
	return b, nil
}

func open(dir string, kr Keyring) (*Box, error) {
	path := KeyFile(dir)
	if _, err := os.Lstat(path); err == nil {
		return readKeyFile(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("vault: %s: %w", path, err)
	}
	if kr == nil {
		kr = NoKeyring{}
	}
	if s, err := kr.Get(KeyringService, dir); err == nil {
		return fromText(s, "keyring")
	}
	b := &Box{}
	if _, err := rand.Read(b.key[:]); err != nil {
		return nil, fmt.Errorf("vault: new key: %w", err)
	}
	text := base64.StdEncoding.EncodeToString(b.key[:])
	if err := kr.Set(KeyringService, dir, text); err == nil {
		// Read it back: a keyring that accepts but does not keep is no keyring.
		if got, err := kr.Get(KeyringService, dir); err == nil && got == text {
			b.Where = "keyring"
			return b, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	// The key is written whole to a temporary file and linked into place, so
	// another process that starts at the same time (harness serve and a CLI
	// command) either wins and this one reads its key, or finds this one's
	// complete; never a half-written file, never two keys.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("vault: write the key file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, werr := f.WriteString(text + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o600)
	}
	if werr != nil {
		return nil, fmt.Errorf("vault: write the key file %s: %w", path, werr)
	}
	err = os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: create the file exclusively.
		err = writeExclusive(path, text)
	}
	if errors.Is(err, fs.ErrExist) {
		return readKeyFile(path) // another process wrote it first
	}
	if err != nil {
		return nil, fmt.Errorf("vault: write the key file %s: %w", path, err)
	}
	b.Where = path
	return b, nil
}

func writeExclusive(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// readKeyFile reads the key file at path, refusing one that others may read.
func readKeyFile(path string) (*Box, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("vault: %s: mode %v lets others read the key; run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	return fromText(string(raw), path)
}

func fromText(s, where string) (*Box, error) {
	raw, err := base64.StdEncoding.DecodeString(trimSpace(s))
	if err != nil || len(raw) != chacha20poly1305.KeySize {
		return nil, fmt.Errorf("vault: %s: not a 32-byte Base64 key", where)
	}
	b := &Box{Where: where}
	copy(b.key[:], raw)
	return b, nil
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}

// NewBox returns a Box with the given 32-byte key, for tests and tools that
// manage their own key. It fails on a key of another length.
func NewBox(key []byte) (*Box, error) {
	if len(key) != chacha20poly1305.KeySize {
		return nil, fmt.Errorf("vault: key of %d bytes, want %d", len(key), chacha20poly1305.KeySize)
	}
	b := &Box{Where: "memory"}
	copy(b.key[:], key)
	return b, nil
}

// Seal encrypts plain for label (e.g. "campus_sessions/treehole"): version
// byte, 24-byte random nonce, ciphertext with its 16-byte tag.
func (b *Box) Seal(label string, plain []byte) []byte {
	aead, _ := chacha20poly1305.NewX(b.key[:])
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		panic("vault: no randomness: " + err.Error())
	}
	return aead.Seal(out, out[1:], plain, []byte(label))
}

// ErrOpen is returned (wrapped) by Open for a value that does not open under
// this key and label: another key, another row, or damaged.
var ErrOpen = errors.New("sealed value does not open (another key, another row, or damaged)")

// Open decrypts what Seal returned for the same label.
func (b *Box) Open(label string, sealed []byte) ([]byte, error) {
	aead, _ := chacha20poly1305.NewX(b.key[:])
	if len(sealed) < 1+aead.NonceSize()+aead.Overhead() || sealed[0] != version {
		return nil, fmt.Errorf("vault: %s: %w", label, ErrOpen)
	}
	nonce := sealed[1 : 1+aead.NonceSize()]
	plain, err := aead.Open(nil, nonce, sealed[1+aead.NonceSize():], []byte(label))
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", label, ErrOpen)
	}
	return plain, nil
}
