//go:build unix

package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadDirHostileFiles checks the plugin folder reader as an attacker
// would fill the folder: a tool file that is a FIFO, a link to /dev/zero, a
// link to a secret outside, or a huge sparse file gives a diagnostic at
// once (nothing blocks, nothing outside is read, nothing huge is read), and
// a PLUGIN.md that is a FIFO is a load error.
func TestLoadDirHostileFiles(t *testing.T) {
	const manifest = "---\nspec: 1\nid: hostile\nname: Hostile\ndescription: d\nversion: 1.0.0\nauthor: a\ntools:\n  a: tools/a.yaml\n---\nBody.\n"
	secret := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(secret, []byte("title: CI_SECRET_hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		make func(path string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "cannot read tools/a.yaml: tools/a.yaml: not a regular file (it is a named pipe)"},
		{"dev zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "cannot read tools/a.yaml: openat tools/a.yaml: path escapes from parent"},
		{"secret", func(p string) error { return os.Symlink(secret, p) }, "cannot read tools/a.yaml: openat tools/a.yaml: path escapes from parent"},
		{"huge", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(4 << 30)
		}, "cannot read tools/a.yaml: the loaded files would exceed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "PLUGIN.md"), []byte(manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(filepath.Join(dir, "tools", "a.yaml")); err != nil {
				t.Fatal(err)
			}
			got := loadWithin(t, dir)
			if strings.Contains(got, "hunter2") {
				t.Fatalf("the secret leaked: %s", got)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant one saying %q", got, tc.want)
			}
		})
	}
	t.Run("PLUGIN.md fifo", func(t *testing.T) {
		dir := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(dir, "PLUGIN.md"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := loadWithin(t, dir); !strings.Contains(got, "load error: cannot read PLUGIN.md") || !strings.Contains(got, "named pipe") {
			t.Errorf("got %s", got)
		}
	})
}

// loadWithin runs LoadDir and fails the test if it does not return in 10 s.
func loadWithin(t *testing.T, dir string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		_, ds, err := LoadDir(dir)
		done <- formatDiagnostics(ds, err)
	}()
	select {
	case got := <-done:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("LoadDir hangs")
		return ""
	}
}
