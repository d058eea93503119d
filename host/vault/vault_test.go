package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
)

// memKeyring is a keyring that keeps what it is given.
type memKeyring map[string]string

func (m memKeyring) Get(s, u string) (string, error) {
	v, ok := m[s+"/"+u]
	if !ok {
		return "", errors.New("not found")
	}
	return v, nil
}
func (m memKeyring) Set(s, u, v string) error { m[s+"/"+u] = v; return nil }

// lossyKeyring accepts a Set and forgets it.
type lossyKeyring struct{}

func (lossyKeyring) Get(string, string) (string, error) { return "", errors.New("not found") }
func (lossyKeyring) Set(string, string, string) error   { return nil }

func TestFallbackKeyFile(t *testing.T) {
	for name, kr := range map[string]Keyring{"no keyring": NoKeyring{}, "lossy keyring": lossyKeyring{}, "os keyring": OSKeyring{}} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			b, err := open(dir, kr)
			if err != nil {
				t.Fatal(err)
			}
			if b.Where == "keyring" {
				abs, _ := filepath.Abs(dir)
				keyring.Delete(KeyringService, abs)
				t.Skip("an OS keyring answered on this machine (entry removed)")
			}
			st, err := os.Stat(KeyFile(dir))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Fatalf("key file mode %v", st.Mode().Perm())
			}
			if filepath.Dir(KeyFile(dir)) != filepath.Dir(dir) {
				t.Fatalf("key file %s is not beside %s", KeyFile(dir), dir)
			}
			sealed := b.Seal("t/1", []byte("s3cret"))
			b2, err := open(dir, kr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b2.Open("t/1", sealed)
			if err != nil || string(got) != "s3cret" {
				t.Fatalf("reopen: %q %v", got, err)
			}
		})
	}
}

func TestKeyringKept(t *testing.T) {
	kr := memKeyring{}
	dir := filepath.Join(t.TempDir(), "data")
	b, err := open(dir, kr)
	if err != nil || b.Where != "keyring" {
		t.Fatalf("%v %v", b, err)
	}
	if _, err := os.Stat(KeyFile(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key file was written although the keyring kept the key: %v", err)
	}
	b2, _ := open(dir, kr)
	if b2.key != b.key {
		t.Fatal("second open made a new key")
	}
}

func TestKeyFileErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := KeyFile(dir)
	os.WriteFile(path, []byte("not base64!\n"), 0o600)
	if _, err := open(dir, NoKeyring{}); err == nil || !strings.Contains(err.Error(), "not a 32-byte Base64 key") {
		t.Fatalf("bad content: %v", err)
	}
	os.Chmod(path, 0o644)
	if _, err := open(dir, NoKeyring{}); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("wide mode: %v", err)
	}
}

func TestSealOpen(t *testing.T) {
	b, _ := NewBox(bytes.Repeat([]byte{7}, 32))
	other, _ := NewBox(bytes.Repeat([]byte{8}, 32))
	s := b.Seal("campus_sessions/card", []byte("jwt.secret"))
	if bytes.Contains(s, []byte("jwt.secret")) {
		t.Fatal("plaintext in sealed value")
	}
	if bytes.Equal(s, b.Seal("campus_sessions/card", []byte("jwt.secret"))) {
		t.Fatal("two seals of one value are equal (nonce reused)")
	}
	tests := []struct {
		name  string
		box   *Box
		label string
		val   []byte
	}{
		{"other row", b, "campus_sessions/its", s},
		{"other key", other, "campus_sessions/card", s},
		{"flipped byte", b, "campus_sessions/card", append(append([]byte{}, s[:len(s)-1]...), s[len(s)-1]^1)},
		{"short", b, "campus_sessions/card", s[:10]},
		{"empty", b, "campus_sessions/card", nil},
	}
	for _, tc := range tests {
		if _, err := tc.box.Open(tc.label, tc.val); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if got, err := b.Open("campus_sessions/card", s); err != nil || string(got) != "jwt.secret" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := NewBox([]byte("short")); err == nil {
		t.Fatal("short key accepted")
	}
}

// racingKeyring stands for another process (harness serve and a CLI command started together)
// that writes the key file after this one found none and before it writes its own.
type racingKeyring struct{ path, text string }

func (racingKeyring) Get(string, string) (string, error) { return "", errors.New("not found") }
func (r racingKeyring) Set(string, string, string) error {
	os.WriteFile(r.path, []byte(r.text+"\n"), 0o600)
	return errors.New("no keyring")
}

// Two processes making the first key at once agree on one key: the one that loses the race reads
// the winner's file instead of failing (or, worse, using a key of its own).
func TestKeyFileRace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	winner := strings.Repeat("A", 43) + "="
	b, err := open(dir, racingKeyring{path: KeyFile(dir), text: winner})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := fromText(winner, "")
	if b.key != w.key {
		t.Fatal("the process that lost the race uses a key of its own")
	}
}
