package plugins

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

// TestEmbeddedMatchesFolders loads each document from the embedded FS, as the host installs a
// bundled plugin, and requires the same content hash as loading the folder: the binary ships
// exactly what is tested.
func TestEmbeddedMatchesFolders(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			dir, err := Dir(name)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string][]byte{}
			err = fs.WalkDir(dir, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := fs.ReadFile(dir, p)
				files[p] = b
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			emb, diags, err := plugin.LoadFiles(context.Background(), files)
			if err != nil || diag.HasErrors(diags) {
				t.Fatalf("embedded copy: %v %v", err, diags)
			}
			disk, _, err := plugin.LoadDir(name)
			if err != nil {
				t.Fatal(err)
			}
			if emb.Hash != disk.Hash || emb.Manifest.ID != name {
				t.Errorf("embedded %s %s, folder %s", emb.Manifest.ID, emb.Hash, disk.Hash)
			}
		})
	}
}

func TestDirUnknown(t *testing.T) {
	if _, err := Dir("../grades"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Dir(../grades): got %v, want fs.ErrNotExist", err)
	}
	if _, err := fs.Stat(FS(), "shuttle/PLUGIN.md"); err != nil {
		t.Errorf("FS: %v", err)
	}
}
