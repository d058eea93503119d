//go:build unix

package safefs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
)

const secret = "CI_SECRET=hunter2"

// hostile builds a folder as an attacker would: links out of it, a FIFO, a
// link to /dev/zero, a huge sparse file, next to one good file.
func hostile(t *testing.T) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "secret.env")
	if err := os.WriteFile(outside, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "tests", "fixtures"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "tests", "fixtures", "ok.html"), []byte("<p>ok</p>"), 0o644))
	must(os.Symlink(outside, filepath.Join(dir, "tests", "fixtures", "secret.html")))
	must(os.Symlink("../../../"+filepath.Base(filepath.Dir(outside)), filepath.Join(dir, "tests", "up")))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "tests", "fixtures", "zero.html")))
	must(os.Symlink("ok.html", filepath.Join(dir, "tests", "fixtures", "inside.html")))
	must(syscall.Mkfifo(filepath.Join(dir, "tests", "fixtures", "fifo.html"), 0o644))
	f, err := os.Create(filepath.Join(dir, "tests", "fixtures", "huge.html"))
	must(err)
	must(f.Truncate(8 << 30)) // 8 GB, sparse: reading it would take minutes
	must(f.Close())
	return dir
}

// TestReadFileHostile checks each way out: nothing outside the folder is
// read (nor shown in the error), a FIFO fails at once, a huge file fails
// from its size, a folder is not a file, and a link inside the folder works.
func TestReadFileHostile(t *testing.T) {
	d, err := Open(hostile(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tests := []struct {
		name string
		want string // "" for success
		is   error
	}{
		{"tests/fixtures/ok.html", "", nil},
		{"tests/fixtures/inside.html", "", nil},
		{"tests/fixtures/secret.html", "escapes", nil},
		{"tests/fixtures/zero.html", "escapes", nil},
		{"tests/fixtures/fifo.html", "it is a named pipe", ErrNotRegular},
		{"tests/fixtures/huge.html", "8589934592 bytes, the limit is 4194304", ErrTooLarge},
		{"tests/fixtures", "is a folder", nil},
		{"tests/up/secret.env", "escapes", nil},
		{"../secret.env", "invalid argument", fs.ErrInvalid},
		{"/etc/passwd", "invalid argument", fs.ErrInvalid},
		{"tests/missing.html", "no such file", fs.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := d.ReadFile(context.Background(), tc.name, 4<<20)
			if tc.want == "" {
				if err != nil || string(b) != "<p>ok</p>" {
					t.Fatalf("ReadFile = %q, %v", b, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ReadFile = %d bytes, want an error", len(b))
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(string(b), "hunter2") {
				t.Fatalf("the secret leaked: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tc.is)
			}
		})
	}
	// Open (fs.FS) refuses the same FIFO without blocking.
	if _, err := d.Open("tests/fixtures/fifo.html"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open(fifo) = %v", err)
	}
	if _, err := fs.ReadFile(d, "tests/fixtures/secret.html"); err == nil {
		t.Error("fs.ReadFile followed a link out of the folder")
	}
	ents, err := d.ReadDir("tests/fixtures")
	if err != nil || len(ents) != 6 {
		t.Errorf("ReadDir = %d entries, %v", len(ents), err)
	}
}

// TestReadFileContext checks that a done context reads nothing.
func TestReadFileContext(t *testing.T) {
	d, err := Open(hostile(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.ReadFile(ctx, "tests/fixtures/ok.html", 100); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if _, err := ReadFS(ctx, fstest.MapFS{"a": {Data: []byte("x")}}, "a", 100); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadFS err = %v, want context.Canceled", err)
	}
}

// TestReadFS checks the generic path over any fs.FS: the limit is exact,
// and a file that says it is a pipe is refused.
func TestReadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"four": {Data: []byte("four")},
		"pipe": {Mode: fs.ModeNamedPipe},
		"dir":  {Mode: fs.ModeDir},
	}
	ctx := context.Background()
	if b, err := ReadFS(ctx, fsys, "four", 4); err != nil || string(b) != "four" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	if _, err := ReadFS(ctx, fsys, "four", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadFS(ctx, fsys, "pipe", 3); !errors.Is(err, ErrNotRegular) {
		t.Errorf("pipe: %v", err)
	}
	if _, err := ReadFS(ctx, fsys, "dir", 3); err == nil {
		t.Error("dir: no error")
	}
}
