package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/storagetest"
)

// storages are the embedded Storage implementations the conformance test holds to one
// behaviour; cloud/server/pgstore runs the same script against PostgreSQL and compares it with
// the same golden file.
var storages = []struct {
	name string
	open func(t *testing.T) server.Storage
}{
	{"sqlite", func(t *testing.T) server.Storage {
		st, err := server.OpenSQLite(context.Background(), ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"sqlite-file", func(t *testing.T) server.Storage {
		st, err := server.OpenSQLite(context.Background(), t.TempDir()+"/cloud.db")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"memory", func(*testing.T) server.Storage { return server.NewMemory() }},
}

// TestStorageConformance runs the same script of calls against every Storage and compares the
// transcript of results with testdata/storage-conformance.txt, so the implementations cannot
// drift apart.
func TestStorageConformance(t *testing.T) {
	golden := filepath.Join("testdata", "storage-conformance.txt")
	for _, s := range storages {
		t.Run(s.name, func(t *testing.T) {
			st := s.open(t)
			defer st.Close()
			got := storagetest.Transcript(t, st)
			if os.Getenv("UPDATE_GOLDEN") != "" && s.name == storages[0].name {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s\nwant\n%s", s.name, golden, got, want)
			}
		})
	}
}

// TestDeviceQuota runs storagetest.DeviceQuota against every embedded Storage.
func TestDeviceQuota(t *testing.T) {
	for _, s := range storages {
		t.Run(s.name, func(t *testing.T) {
			st := s.open(t)
			defer st.Close()
			storagetest.DeviceQuota(t, st)
		})
	}
}
