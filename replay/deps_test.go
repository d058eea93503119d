package replay

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDatabase: the author CLI's replays run on the in-memory KV; neither
// replay nor the interpreter links a database (the host's SQLite store is
// package host/store's).
func TestNoDatabase(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/pkuinfo/harness/replay", "github.com/pkuinfo/harness/interp").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "modernc.org/sqlite") || dep == "database/sql" || strings.HasPrefix(dep, "github.com/pkuinfo/harness/host") {
			t.Errorf("replay or interp depends on %s", dep)
		}
	}
}
